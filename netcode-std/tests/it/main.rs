//! netcode-std's integration tests, one binary: each file of this
//! directory is a module. `common` holds the workspace's fixtures, `memory`
//! the host on the in-memory network, `log_capture` the binary's one
//! logger, `own_process` the way a test gets a process to itself.
//!
//! What one binary per file used to keep apart, and how the tests share
//! the process now:
//!
//! * the logger is installed once, and routes each record to the test
//!   thread that logged it (`log_capture`);
//! * the counting allocator is the binary's global allocator and counts per
//!   thread, so `steady_state` counts only its own test's work;
//! * the file size limit of `history_failure` is the process's: that test
//!   runs alone in a child process (`own_process`);
//! * every socket binds port 0 (or lives on the memory network), every
//!   file has a name of its own test, and the host's counters belong to
//!   each server and client, not to the process.
//!
//! Servers start with `start_nowait` and the tests issue their tokens as
//! of the second it returns (`test_fixtures::admitted`), but for the
//! restart tests of `history_file`, whose subject is the restart rule.

mod common;
mod log_capture;
mod memory;
mod own_process;

mod batch;
mod clock;
mod errors;
mod history_failure;
mod history_file;
mod logging;
mod loopback;
mod receive_any;
mod reconnect;
mod reordering;
mod steady_state;
mod transport;
mod udp;
mod wait;
mod with_sockets;

#[global_allocator]
static GLOBAL: counting_alloc::Counting = counting_alloc::Counting;

/// The allocation check would pass vacuously without the counting
/// allocator in place.
#[test]
fn the_counting_allocator_is_installed() {
    assert!(counting_alloc::installed());
}

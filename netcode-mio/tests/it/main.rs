//! netcode-mio's integration tests, one binary: each file of this
//! directory is a module, `common` holds the workspace's fixtures and the
//! event loop the tests drive.
//!
//! The counting allocator is the binary's global allocator and counts per
//! thread, so `steady_state` counts only its own test's work while others
//! run in parallel. Every socket binds port 0. Servers start with
//! `start_nowait` and the tests issue their tokens as of the second it
//! returns (`test_fixtures::admitted`).

mod common;

mod errors;
mod idle;
mod steady_state;
mod udp;

#[global_allocator]
static GLOBAL: counting_alloc::Counting = counting_alloc::Counting;

/// The allocation check would pass vacuously without the counting
/// allocator in place.
#[test]
fn the_counting_allocator_is_installed() {
    assert!(counting_alloc::installed());
}

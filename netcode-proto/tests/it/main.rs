//! netcode-proto's integration tests, one binary: each file of this
//! directory is a module (`common` and `audit` hold what several share).
//! The scenario tests run on the crate's seeded simulator and pass time
//! explicitly, so nothing here waits on the wall clock.
//!
//! The counting allocator is the binary's global allocator; it counts per
//! thread, so each allocation check (`zero_alloc`, `snapshot`) counts only
//! the work of its own test while others run in parallel.

mod audit;
mod common;
mod rig;

mod adversarial;
mod arbitrary_input;
mod client_server;
mod connection_stats;
mod keep_alives;
mod lifecycle;
mod prepared_keys;
mod rejection;
mod replay_window;
mod restart;
mod restart_safety;
mod roundtrip;
mod snapshot;
mod soak;
mod zero_alloc;

#[global_allocator]
static GLOBAL: counting_alloc::Counting = counting_alloc::Counting;

/// The allocation checks would pass vacuously without the counting
/// allocator in place.
#[test]
fn the_counting_allocator_is_installed() {
    assert!(counting_alloc::installed());
}

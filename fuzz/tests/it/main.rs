//! The fuzz crate's tests on the stable toolchain, one binary: `corpus`
//! replays every committed input through its target's body, `no_alloc`
//! checks that the session targets allocate nothing per input.
//!
//! The counting allocator is the binary's global allocator; it counts per
//! thread, so `no_alloc` counts only its own test's work while `corpus`
//! runs beside it (each thread restores its own copy of the session).

mod corpus;
mod no_alloc;

#[global_allocator]
static GLOBAL: counting_alloc::Counting = counting_alloc::Counting;

/// The allocation check would pass vacuously without the counting
/// allocator in place.
#[test]
fn the_counting_allocator_is_installed() {
    assert!(counting_alloc::installed());
}

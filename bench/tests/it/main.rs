//! The bench's tests, in one binary (`cargo test -p netcode-bench --test
//! it`): the footprint figures of BENCHMARKS.md (allocations per operation,
//! server memory), and the smoke tests of the counting program
//! (`benches/counts.rs`) and of the UDP bench (`benches/udp/`).
//!
//! The counting allocator is this binary's global allocator: the footprint
//! tests count the allocations of the calling thread with it, and the UDP
//! rig reads each server thread's live heap bytes.

#[global_allocator]
static GLOBAL: counting_alloc::Counting = counting_alloc::Counting;

mod counts;
mod footprint;
mod udp;

//! What the bench's programs share. BENCHMARKS.md lists every table with
//! the command that produces it; the programs are:
//!
//! * `benches/counts.rs` with `src/bin/netcode-count/` (and the C program
//!   `c/netcode_c_bench.c`): instructions and time per operation of every
//!   implementation, through [`count`];
//! * `benches/netcode/`: criterion, ours against the raw AEADs and
//!   renetcode;
//! * `benches/udp/`: the UDP loopback echo, 16 to 4096 clients;
//! * `src/bin/wt-bench/`: WebTransport against UDP clients of the same
//!   server; `src/bin/history-bench/`: the durable token history;
//! * `tests/it/`: allocations per operation and server memory (the
//!   footprint), and the smoke tests of the counting program and the UDP
//!   bench.
//!
//! The inputs every implementation gets are in [`fixtures`], their names in
//! the tables in [`labels`], the drivers of the peers (`renetcode`,
//! `netcode-official`) in [`peers`].

pub mod cli;
pub mod count;
pub mod fixtures;
pub mod labels;
pub mod machine;
pub mod peers;
pub mod seal_open;

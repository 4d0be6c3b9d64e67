//! Wall time per operation of every implementation on every case, measured
//! so that a shared, loaded machine disturbs it least:
//!
//! ```sh
//! cargo run --release --bin aead-time                        # the table
//! cargo run --release --bin aead-time -- --only seam,orion   # some rows
//! ```
//!
//! For each case, every implementation runs batches of about two milliseconds,
//! one batch per implementation per round, the order rotated each round, for
//! [`ROUNDS`] rounds. A batch that was preempted or shared its core is slow,
//! one that was not is not, so the figure is the fastest batch's time per
//! operation; the median batch follows in parentheses, to show the noise.
//! An open needs its ciphertext back before each call: that copy is timed in
//! a batch of its own in every round and its fastest time subtracted.

use std::hint::black_box;
use std::time::{Duration, Instant};

use netcode_bench_aead::cases::{CASES, Fixture, KEY, Op};
use netcode_bench_aead::{implementations, rustcrypto_backends, rustcrypto_config};

/// Rounds per case.
const ROUNDS: usize = 51;
/// The length of one batch.
const BATCH: Duration = Duration::from_millis(2);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let all = implementations(&KEY);
    let wanted: Vec<usize> = match args.as_slice() {
        [] => (0..all.len()).collect(),
        [flag, names] if flag == "--only" => {
            let mut wanted = Vec::new();
            for name in names.split(',') {
                let Some(index) = all.iter().position(|i| i.name == name) else {
                    eprintln!("aead-time: no implementation {name:?}");
                    std::process::exit(2);
                };
                wanted.push(index);
            }
            wanted
        }
        _ => {
            eprintln!("usage: aead-time [--only a,b]");
            std::process::exit(2);
        }
    };
    println!(
        "RustCrypto build: {} ({}); netcode-proto backend: {}; fastest of {ROUNDS} batches of about {BATCH:?} (median), nanoseconds per operation",
        rustcrypto_config(),
        rustcrypto_backends(),
        netcode_proto::crypto::BACKEND,
    );
    let mut cells = vec![Vec::new(); wanted.len()];
    for case in CASES {
        let fixtures: Vec<Fixture<'_>> = wanted
            .iter()
            .map(|&i| Fixture::new(&*all[i].aead, case))
            .collect();
        let mut buffer = fixtures[0].input().to_vec();
        let restore = case.op == Op::Open;
        let input = fixtures[0].input().to_vec();
        // Batch sizes: operations in about one batch length.
        let sizes: Vec<u64> = fixtures
            .iter()
            .map(|fixture| {
                let once = batch(fixture, &mut buffer, restore, 200).max(1.0);
                (BATCH.as_nanos() as f64 / once).ceil() as u64
            })
            .collect();
        let copy_size = (BATCH.as_nanos() / 20) as u64;
        let mut times = vec![Vec::with_capacity(ROUNDS); fixtures.len()];
        let mut copies = Vec::with_capacity(ROUNDS);
        for round in 0..ROUNDS {
            for turn in 0..fixtures.len() {
                let i = (turn + round) % fixtures.len();
                buffer.copy_from_slice(fixtures[i].input());
                times[i].push(batch(&fixtures[i], &mut buffer, restore, sizes[i]));
            }
            if restore {
                copies.push(copy_batch(&mut buffer, &input, copy_size));
            }
        }
        let copy = copies.iter().copied().fold(f64::INFINITY, f64::min);
        let copy = if copy.is_finite() { copy } else { 0.0 };
        for (i, mut samples) in times.into_iter().enumerate() {
            samples.sort_by(f64::total_cmp);
            let fastest = samples[0] - copy;
            let median = samples[samples.len() / 2] - copy;
            cells[i].push(format!("{fastest:.0} ({median:.0})"));
        }
    }
    let header: Vec<_> = CASES.iter().map(|c| c.name).collect();
    println!("| implementation | config | {} |", header.join(" | "));
    println!("|---|---|{}", "---:|".repeat(CASES.len()));
    for (row, &i) in cells.iter().zip(&wanted) {
        println!(
            "| {} | {} | {} |",
            all[i].name,
            rustcrypto_config(),
            row.join(" | ")
        );
    }
}

/// Nanoseconds per operation over `count` operations, each open preceded
/// by putting the ciphertext back.
fn batch(fixture: &Fixture<'_>, buffer: &mut [u8], restore: bool, count: u64) -> f64 {
    let start = Instant::now();
    for _ in 0..count {
        if restore {
            buffer.copy_from_slice(fixture.input());
        }
        black_box(fixture.run(black_box(&mut *buffer)));
    }
    start.elapsed().as_nanos() as f64 / count as f64
}

/// Nanoseconds per copy of the ciphertext back into the buffer.
fn copy_batch(buffer: &mut [u8], input: &[u8], count: u64) -> f64 {
    let start = Instant::now();
    for _ in 0..count {
        black_box(&mut *buffer).copy_from_slice(black_box(input));
    }
    start.elapsed().as_nanos() as f64 / count as f64
}

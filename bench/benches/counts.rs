//! Instructions and time per operation of every implementation on the
//! same cases, in one run (`netcode_bench::count` says how each is
//! measured; `src/bin/netcode-count/main.rs` lists the cases).
//!
//! `cargo bench -p netcode-bench --bench counts` (ours on ring), or with
//! `--no-default-features` (ours on the portable backend); any word that is
//! not an option keeps only the cases whose names contain it. The C
//! reference is in the run when `NETCODE_C_BENCH` names its build of
//! `bench/c/netcode_c_bench.c` (the command is in that file; nothing here
//! builds it); otherwise its column says `not run: NETCODE_C_BENCH unset`
//! and a SKIPPED line says so.
//!
//! Instructions come from `valgrind --tool=callgrind` (a SKIPPED line and
//! `n/a` when valgrind is missing); time is the fastest of three timed runs
//! of `TIMED` operations, a wall-clock figure that moves with the machine's
//! load, which the run prints (`/proc/loadavg`) before and after.

use std::path::{Path, PathBuf};

use netcode_bench::count::{CASES, Program, runs, valgrind_available};

/// criterion's options that take a value: the commands that run every
/// bench of the crate pass them here too, and their values are no filters.
const VALUED: [&str; 13] = [
    "--measurement-time",
    "--warm-up-time",
    "--sample-size",
    "--save-baseline",
    "--baseline",
    "--load-baseline",
    "--output-format",
    "--color",
    "--plotting-backend",
    "--profile-time",
    "--noise-threshold",
    "--confidence-level",
    "--significance-level",
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !args.iter().any(|a| a == "--bench") {
        // `cargo test --benches` runs benches without `--bench`: nothing
        // is measured then (tests/counts.rs runs every case instead).
        println!("counts: measured only under `cargo bench`");
        return;
    }
    let mut filters = Vec::new();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if VALUED.contains(&word.as_str()) {
            words.next();
        } else if !word.starts_with('-') {
            filters.push(word.clone());
        }
    }
    let count = Path::new(env!("CARGO_BIN_EXE_netcode-count"));
    let c_bench: Option<PathBuf> = std::env::var_os("NETCODE_C_BENCH")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let valgrind = valgrind_available();
    let backend = netcode_proto::crypto::BACKEND;
    if !valgrind {
        println!("SKIPPED instruction counts: valgrind is not installed");
    }
    if c_bench.is_none() {
        println!("SKIPPED the C reference: NETCODE_C_BENCH unset (see bench/c/netcode_c_bench.c)");
    }
    let mut programs: Vec<(String, Option<Program<'_>>)> = vec![
        (
            format!("netcode-rs ({backend})"),
            Some(Program {
                exe: count,
                args: &["ours"],
            }),
        ),
        (
            "renetcode".into(),
            Some(Program {
                exe: count,
                args: &["renetcode"],
            }),
        ),
        (
            "netcode-official".into(),
            Some(Program {
                exe: count,
                args: &["netcode-official"],
            }),
        ),
    ];
    programs.push((
        "C reference".into(),
        c_bench.as_deref().map(|exe| Program { exe, args: &[] }),
    ));

    println!("load before: {}", load());
    println!(
        "\n| case | {} |",
        programs
            .iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>()
            .join(" | ")
    );
    println!("|---|{}", "---|".repeat(programs.len()));
    for case in CASES {
        if !filters.is_empty() && !filters.iter().any(|f| case.contains(f.as_str())) {
            continue;
        }
        let cells: Vec<String> = programs
            .iter()
            .map(|(_, program)| match program {
                None => "not run: NETCODE_C_BENCH unset".into(),
                Some(program) => cell(program, case, valgrind),
            })
            .collect();
        println!("| {case} | {} |", cells.join(" | "));
    }
    println!("\nload after: {}", load());
    println!(
        "cells: instructions per operation (callgrind) / fastest of 3 timed runs; \
         a tick- case's operation is one whole tick"
    );
}

/// "instructions / time" for one program and case; "–" where the
/// implementation has no public path for it.
fn cell(program: &Program<'_>, case: &str, valgrind: bool) -> String {
    let (_, _, timed) = runs(case);
    let time = (0..3)
        .map(|_| program.time(case, timed))
        .collect::<Result<Vec<f64>, String>>()
        .map(|times| times.into_iter().fold(f64::INFINITY, f64::min));
    let time = match time {
        Ok(t) => format!("{t:.0} ns"),
        Err(e) if e.contains("not offered") => return "– (no public path)".into(),
        Err(e) => return format!("failed: {e}"),
    };
    let instructions = if valgrind {
        match program.instructions(case) {
            Ok(i) => format!("{i:.0}"),
            Err(e) => format!("failed: {e}"),
        }
    } else {
        "n/a".into()
    };
    format!("{instructions} / {time}")
}

/// The load averages, as `uptime` gives them.
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

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
//! Ours through the C API is in the run when `NETCODE_C_API_BENCH` names
//! the same C program built against `netcode-c` (its header and release
//! `libnetcode.a`; `bench/scripts/c-api.sh` builds it, sets the variable
//! and runs this), otherwise its column says `not run:
//! NETCODE_C_API_BENCH unset` and a SKIPPED line says so. When it ran, a
//! second table puts it beside the C reference and ours on the Rust API,
//! with the ratios of issue 21's targets on every row: reference / ours
//! through C (at least 2 on every packet row) and ours through C / ours in
//! Rust (at most 1.1), of instructions and of time.
//!
//! Instructions come from `valgrind --tool=callgrind` (a SKIPPED line and
//! `n/a` when valgrind is missing); time is the fastest of three timed runs
//! of `TIMED` operations, a wall-clock figure that moves with the machine's
//! load, which the run prints (`/proc/loadavg`) before and after.

use std::path::{Path, PathBuf};

use netcode_bench::cli::CRITERION_VALUED;
use netcode_bench::count::{CASES, Program, runs, valgrind_available};
use netcode_bench::labels::{NETCODE_OFFICIAL, RENETCODE, ours};
use netcode_bench::machine::load_average;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !args.iter().any(|a| a == "--bench") {
        // `cargo test --benches` runs benches without `--bench`: nothing
        // is measured then (tests/it/counts.rs runs every case instead).
        println!("counts: measured only under `cargo bench`");
        return;
    }
    let mut filters = Vec::new();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if CRITERION_VALUED.contains(&word.as_str()) {
            words.next();
        } else if !word.starts_with('-') {
            filters.push(word.clone());
        }
    }
    let count = Path::new(env!("CARGO_BIN_EXE_netcode-count"));
    let c_bench = program_from("NETCODE_C_BENCH");
    let c_api_bench = program_from("NETCODE_C_API_BENCH");
    let valgrind = valgrind_available();
    let backend = netcode_proto::crypto::BACKEND;
    if !valgrind {
        println!("SKIPPED instruction counts: valgrind is not installed");
    }
    if c_bench.is_none() {
        println!("SKIPPED the C reference: NETCODE_C_BENCH unset (see bench/c/netcode_c_bench.c)");
    }
    if c_api_bench.is_none() {
        println!(
            "SKIPPED ours through the C API: NETCODE_C_API_BENCH unset (bench/scripts/c-api.sh builds it and sets it)"
        );
    }
    let peer = |args: &'static [&'static str]| Some(Program { exe: count, args });
    let columns = [
        Column::new(ours(), peer(&["ours"]), "", NO_PATH),
        Column::new(RENETCODE.into(), peer(&["renetcode"]), "", NO_PATH),
        Column::new(
            NETCODE_OFFICIAL.into(),
            peer(&["netcode-official"]),
            "",
            NO_PATH,
        ),
        Column::new(
            "C reference".into(),
            c_program(c_bench.as_deref()),
            "not run: NETCODE_C_BENCH unset",
            OVER_C_CAP,
        ),
        Column::new(
            "ours through the C API (netcode-c, ring)".into(),
            c_program(c_api_bench.as_deref()),
            "not run: NETCODE_C_API_BENCH unset",
            OVER_C_CAP,
        ),
    ];

    println!("load before: {}", load_average());
    println!(
        "\n| case | {} |",
        columns
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(" | ")
    );
    println!("|---|{}", "---|".repeat(columns.len()));
    let mut rows = Vec::new();
    for case in CASES {
        if !filters.is_empty() && !filters.iter().any(|f| case.contains(f.as_str())) {
            continue;
        }
        let cells: Vec<Cell> = columns
            .iter()
            .map(|column| column.measure(case, valgrind))
            .collect();
        println!(
            "| {case} | {} |",
            cells
                .iter()
                .map(|c| c.text.as_str())
                .collect::<Vec<_>>()
                .join(" | ")
        );
        rows.push((case, cells));
    }
    println!("\nload after: {}", load_average());
    println!(
        "cells: instructions per operation (callgrind) / fastest of 3 timed runs; \
         a tick- case's operation is one whole tick"
    );
    if c_api_bench.is_some() {
        c_api_table(&rows, backend);
    }
}

/// What a case an implementation does not offer says in its cell.
const NO_PATH: &str = "– (no public path)";
/// The same for the C program's tick cases over `NETCODE_MAX_CLIENTS`.
const OVER_C_CAP: &str = "– (over netcode.h's 256 clients)";

/// The program named by the environment variable `name`, if set.
fn program_from(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// A C program (it takes no leading arguments), if named.
fn c_program(exe: Option<&Path>) -> Option<Program<'_>> {
    exe.map(|exe| Program { exe, args: &[] })
}

/// One column of the table: an implementation's counting program, or
/// `None` when its variable is unset.
struct Column<'a> {
    name: String,
    program: Option<Program<'a>>,
    /// The cell's text when the program is `None`.
    unset: &'static str,
    /// The cell's text for a case the program does not offer.
    not_offered: &'static str,
}

impl<'a> Column<'a> {
    fn new(
        name: String,
        program: Option<Program<'a>>,
        unset: &'static str,
        not_offered: &'static str,
    ) -> Self {
        Self {
            name,
            program,
            unset,
            not_offered,
        }
    }

    /// The cell of `case`: "instructions / time", the reason it was not
    /// run, or what failed.
    fn measure(&self, case: &str, valgrind: bool) -> Cell {
        let Some(program) = &self.program else {
            return Cell::text(self.unset);
        };
        let (_, _, timed) = runs(case);
        let time = (0..3)
            .map(|_| program.time(case, timed))
            .collect::<Result<Vec<f64>, String>>()
            .map(|times| times.into_iter().fold(f64::INFINITY, f64::min));
        let time = match time {
            Ok(t) => t,
            Err(e) if e.contains("not offered") => return Cell::text(self.not_offered),
            Err(e) => return Cell::text(&format!("failed: {e}")),
        };
        let (instructions, counted) = if valgrind {
            match program.instructions(case) {
                Ok(i) => (Some(i), format!("{i:.0}")),
                Err(e) => (None, format!("failed: {e}")),
            }
        } else {
            (None, "n/a".into())
        };
        Cell {
            text: format!("{counted} / {time:.0} ns"),
            instructions,
            time: Some(time),
        }
    }
}

/// One measured cell: its figures where there are some, and its text.
struct Cell {
    instructions: Option<f64>,
    time: Option<f64>,
    text: String,
}

impl Cell {
    fn text(text: &str) -> Self {
        Self {
            instructions: None,
            time: None,
            text: text.into(),
        }
    }
}

/// Column indices in `main`'s table.
const RUST: usize = 0;
const REFERENCE: usize = 3;
const C_API: usize = 4;

/// The rows that are packets (every case but the connect token, which no
/// datagram carries): where issue 21 asks for reference / ours through C
/// of at least 2.
fn is_packet_row(case: &str) -> bool {
    case != "token"
}

/// The C API beside the C reference and ours in Rust, with the ratios of
/// issue 21's targets per row, then the rows that miss each target.
fn c_api_table(rows: &[(&str, Vec<Cell>)], backend: &str) {
    println!(
        "\nThe C API: the same C program (bench/c/netcode_c_bench.c) on the C reference and on \
         netcode-c, beside ours on the Rust API ({backend}). Targets (issue 21): reference / \
         ours through C >= 2 on every packet row, ours through C / ours in Rust <= 1.1."
    );
    if backend != "ring" {
        println!(
            "NOTE: netcode-c is always on ring; this run's Rust API is on {backend}, so the \
             last two columns compare different AEAD backends."
        );
    }
    println!(
        "\n| case | C reference | ours through C | ours in Rust | reference / ours through C (instructions, time) | ours through C / ours in Rust (instructions, time) |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    let mut misses = (Vec::new(), Vec::new());
    for (case, cells) in rows {
        let (reference, c_api, rust) = (&cells[REFERENCE], &cells[C_API], &cells[RUST]);
        let faster = [
            ratio(reference.instructions, c_api.instructions),
            ratio(reference.time, c_api.time),
        ];
        let boundary = [
            ratio(c_api.instructions, rust.instructions),
            ratio(c_api.time, rust.time),
        ];
        println!(
            "| {case} | {} | {} | {} | {} | {} |",
            reference.text,
            c_api.text,
            rust.text,
            pair(faster),
            pair(boundary),
        );
        if is_packet_row(case) && faster.iter().flatten().any(|&r| r < 2.0) {
            misses.0.push(format!("{case} ({})", pair(faster)));
        }
        if boundary.iter().flatten().any(|&r| r > 1.1) {
            misses.1.push(format!("{case} ({})", pair(boundary)));
        }
    }
    let listed = |rows: &[String]| {
        if rows.is_empty() {
            "none".to_string()
        } else {
            rows.join(", ")
        }
    };
    println!(
        "\nreference / ours through C below 2 on a packet row (instructions or time): {}",
        listed(&misses.0)
    );
    println!(
        "ours through C / ours in Rust above 1.1 (instructions or time): {}",
        listed(&misses.1)
    );
}

/// `a / b` where both were measured.
fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

/// "2.31× / 1.87×", with "–" for a ratio that could not be taken.
fn pair(ratios: [Option<f64>; 2]) -> String {
    ratios
        .map(|r| r.map_or_else(|| "–".to_string(), |r| format!("{r:.2}×")))
        .join(" / ")
}

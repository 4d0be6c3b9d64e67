//! Instructions per operation of every implementation on every case, from
//! callgrind (needs `valgrind` on the PATH). Build in release and run:
//!
//! ```sh
//! cargo run --release --bin aead-count                         # the table
//! cargo run --release --bin aead-count -- --only seam,orion    # some rows
//! cargo run --release --bin aead-count -- breakdown seam seal-100
//! ```
//!
//! `run <implementation> <case> <iterations>` is what it starts under
//! valgrind: the operation `iterations` times, each through
//! `callgrind::measured_once`, the only function collected. The ciphertext
//! of an open is put back before each call, outside that function.

use std::hint::black_box;
use std::path::{Path, PathBuf};

use netcode_bench_aead::callgrind::{self, measured_once};
use netcode_bench_aead::cases::{CASES, Case, Fixture, KEY, Op};
use netcode_bench_aead::{Implementation, implementations, rustcrypto_backends, rustcrypto_config};

/// Operations per counted process: enough that one-time costs (CPU feature
/// detection on the first call, which is made before counting anyway) vanish
/// in the division.
const ITERATIONS: u64 = 1000;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["run", implementation, case, iterations] => run(implementation, case, iterations),
        ["breakdown", implementation, case] => breakdown(implementation, case),
        ["--only", names] => table(Some(names)),
        [] => table(None),
        _ => Err(
            "usage: aead-count [--only a,b] | breakdown <implementation> <case> | run <implementation> <case> <iterations>"
                .into(),
        ),
    };
    if let Err(message) = result {
        eprintln!("aead-count: {message}");
        std::process::exit(2);
    }
}

fn find(all: &[Implementation], name: &str) -> Result<usize, String> {
    all.iter().position(|i| i.name == name).ok_or_else(|| {
        let names: Vec<_> = all.iter().map(|i| i.name).collect();
        format!("no implementation {name:?}; there are {names:?}")
    })
}

fn case(name: &str) -> Result<Case, String> {
    Case::named(name).ok_or_else(|| {
        let names: Vec<_> = CASES.iter().map(|c| c.name).collect();
        format!("no case {name:?}; there are {names:?}")
    })
}

/// The operation, `iterations` times, each call collected.
fn run(implementation: &str, case_name: &str, iterations: &str) -> Result<(), String> {
    let all = implementations(&KEY);
    let aead = &*all[find(&all, implementation)?].aead;
    let iterations: u64 = iterations.parse().map_err(|e| format!("iterations: {e}"))?;
    let case = case(case_name)?;
    let fixture = Fixture::new(aead, case);
    let mut buffer = fixture.input().to_vec();
    // Uncounted: first-call costs such as CPU feature detection.
    black_box(fixture.run(&mut buffer));
    for _ in 0..iterations {
        if case.op == Op::Open {
            buffer.copy_from_slice(fixture.input());
        }
        black_box(measured_once(&mut || fixture.run(&mut buffer)));
    }
    Ok(())
}

fn out_dir() -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("aead-count-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

fn exe() -> Result<PathBuf, String> {
    std::env::current_exe().map_err(|e| format!("own path: {e}"))
}

fn per_op(exe: &Path, dir: &Path, implementation: &str, case: &Case) -> Result<u64, String> {
    let out = dir.join(format!("{implementation}-{}.out", case.name));
    let total = callgrind::count(exe, implementation, case.name, ITERATIONS, &out)
        .map_err(|e| e.to_string())?;
    Ok((total + ITERATIONS / 2) / ITERATIONS)
}

/// The table: one row per implementation, instructions per operation.
fn table(only: Option<&str>) -> Result<(), String> {
    let all = implementations(&KEY);
    let wanted: Vec<&str> = match only {
        Some(names) => names.split(',').collect(),
        None => all.iter().map(|i| i.name).collect(),
    };
    for name in &wanted {
        find(&all, name)?;
    }
    let (exe, dir) = (exe()?, out_dir()?);
    println!(
        "RustCrypto build: {} ({}); netcode-proto backend: {}; {ITERATIONS} operations per count",
        rustcrypto_config(),
        rustcrypto_backends(),
        netcode_proto::crypto::BACKEND,
    );
    let header: Vec<_> = CASES.iter().map(|c| c.name).collect();
    println!("| implementation | config | {} |", header.join(" | "));
    println!("|---|---|{}", "---:|".repeat(CASES.len()));
    for name in wanted {
        let mut cells = Vec::new();
        for case in &CASES {
            cells.push(per_op(&exe, &dir, name, case)?.to_string());
        }
        println!(
            "| {name} | {} | {} |",
            rustcrypto_config(),
            cells.join(" | ")
        );
    }
    std::fs::remove_dir_all(&dir).map_err(|e| e.to_string())?;
    Ok(())
}

/// Where one operation's instructions go: the call tree with inclusive
/// costs, then self costs per function and per source file, per operation.
fn breakdown(implementation: &str, case_name: &str) -> Result<(), String> {
    let all = implementations(&KEY);
    find(&all, implementation)?;
    let case = case(case_name)?;
    let (exe, dir) = (exe()?, out_dir()?);
    let out = dir.join("breakdown.out");
    callgrind::count(&exe, implementation, case.name, ITERATIONS, &out)
        .map_err(|e| e.to_string())?;
    let profile = callgrind::read(&out).map_err(|e| e.to_string())?;
    let per_op = |cost: u64| (cost + ITERATIONS / 2) / ITERATIONS;
    println!(
        "{implementation} {case_name}, {} ({}): {} instructions per operation",
        rustcrypto_config(),
        rustcrypto_backends(),
        per_op(profile.total)
    );
    let share = |cost: u64| 100.0 * cost as f64 / profile.total as f64;
    println!("\n| call tree (inclusive, calls of 1 % or more) | instructions | share |");
    println!("|---|---:|---:|");
    tree(&profile, callgrind::ROOT, 0, &per_op, &share);
    println!("\n| function (self) | instructions | share |");
    println!("|---|---:|---:|");
    for (function, cost) in profile.by_function.iter().filter(|(_, c)| share(*c) >= 0.5) {
        println!(
            "| `{function}` | {} | {:.1} % |",
            per_op(*cost),
            share(*cost)
        );
    }
    println!(
        "\n| source file (self, inlined code counted where it was written) | instructions | share |"
    );
    println!("|---|---:|---:|");
    for (file, cost) in profile.by_file.iter().filter(|(_, c)| share(*c) >= 0.5) {
        println!(
            "| {} | {} | {:.1} % |",
            short_path(file),
            per_op(*cost),
            share(*cost)
        );
    }
    std::fs::remove_dir_all(&dir).map_err(|e| e.to_string())?;
    Ok(())
}

/// Prints the calls under `function`, depth first, indented by depth, with
/// their inclusive costs. Callgrind keeps one set of costs per function, not
/// per call path, so a function called from more than one place is shown
/// with its cost from this caller but not opened further (its callees would
/// mix both callers'); a function called from one place also shows its own
/// code, the part of its cost outside its calls.
fn tree(
    profile: &callgrind::Profile,
    function: &str,
    depth: usize,
    per_op: &dyn Fn(u64) -> u64,
    share: &dyn Fn(u64) -> f64,
) {
    let indent = "· ".repeat(depth + 1);
    for (callee, cost) in profile.callees(function).filter(|(_, c)| share(*c) >= 1.0) {
        let callers = profile.calls.iter().filter(|(_, c, _)| c == callee).count();
        let note = if callers > 1 {
            format!(" (from {callers} callers)")
        } else {
            String::new()
        };
        println!(
            "| {indent}`{callee}`{note} | {} | {:.1} % |",
            per_op(cost),
            share(cost)
        );
        if callers == 1 && profile.callees(callee).next().is_some() {
            let own = profile.self_cost(callee);
            if share(own) >= 1.0 {
                println!(
                    "| {indent}· (own code) | {} | {:.1} % |",
                    per_op(own),
                    share(own)
                );
            }
            tree(profile, callee, depth + 1, per_op, share);
        }
    }
}

/// A source path from the registry or the toolchain, from the crate's
/// directory on (`chacha20-0.10.2/src/backends/avx2.rs`).
fn short_path(path: &str) -> String {
    for marker in ["/registry/src/", "/rustlib/src/rust/", "/rustc/"] {
        if let Some((_, tail)) = path.split_once(marker) {
            // Registry paths have one more component: the index directory.
            let tail = if marker == "/registry/src/" {
                tail.split_once('/').map_or(tail, |(_, rest)| rest)
            } else {
                tail
            };
            return tail.to_owned();
        }
    }
    path.rsplit_once("/bench/aead/")
        .map_or(path, |(_, tail)| tail)
        .to_owned()
}

//! UDP loopback echo: server CPU per payload, payloads per second,
//! datagram system calls per datagram and the server thread's heap through
//! a netcode server with N connected clients, over real 127.0.0.1 UDP, for
//! our servers (netcode-mio batched and one datagram per call, netcode-std
//! on its own sockets, netcode-tokio), the peers and a bare floor in the
//! same run (`rig/mod.rs` says what one run does; `summary.rs` what is
//! printed).
//!
//! ```text
//! cargo bench -p netcode-bench --bench udp
//! cargo bench -p netcode-bench --bench udp -- [FILTER...] [--rounds N]
//!     [--measurement-time SECONDS] [--warm-up-time SECONDS]
//!     [--syscall-time SECONDS] [--clients N] [--window W]
//! cargo bench -p netcode-bench --bench udp -- --sweep [FILTER...]
//!     [--sweep-clients 16,64,256,1024,4096] [--plot FILE.svg] [--rounds N] ...
//! ```
//!
//! `--sweep` runs ours (mio batched, std, tokio), the floor and each peer
//! (with our clients) at each client count up to its cap, with shorter
//! defaults (3 rounds, 0.5 s warm-up, 1.5 s measured, no perf), prints CPU
//! per payload and the server's heap per count, and draws both against the
//! number of clients in an SVG (`sweep.rs`, `plot.rs`).
//!
//! Defaults: 256 clients, 8 payloads in flight per client, 1 s of warm-up,
//! 3 s measured, then 1 s of `perf stat` counting system calls, 5 rounds.
//! Every pairing of server and clients runs once per round, each round
//! starting one pairing further on, so the machine's drifting load falls on
//! every implementation alike; each round also measures the AEAD cost of
//! one echo in-process. The summary gives each pairing's medians over the
//! rounds and the ratios against the targets, taken round by round. A
//! pairing whose server cannot take N clients is listed as not run, with
//! the reason. A FILTER keeps the pairings whose name
//! (`udp_echo/<server> server, <clients> clients`) contains it.
//! criterion's other options are accepted and ignored, so the crate's
//! `cargo bench -p netcode-bench -- ...` commands run this bench too (with
//! criterion's filters, which match none of its names, it runs nothing).
//! Without `--bench`, or with `--test`, it measures nothing:
//! `tests/it/udp.rs` is the smoke test, which `cargo test` runs.
//!
//! This is not a criterion bench: a run needs a server thread and N
//! connected clients alive across its whole measurement, reports more than
//! a time, and alternating the implementations round by round keeps their
//! ratios fair on a machine whose load moves, where criterion would measure
//! one implementation to the end before starting the next.

mod plot;
#[path = "rig/mod.rs"]
mod rig;
mod summary;
mod sweep;

/// Counts every thread's live heap bytes, so a run can say what the server
/// thread holds (a thread-local addition per allocation and free).
#[global_allocator]
static GLOBAL: counting_alloc::Counting = counting_alloc::Counting;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use netcode_bench::cli::CRITERION_VALUED;
use rig::Settings;
use rig::aead::{AeadCost, aead_cost};
use rig::kinds::{PAIRINGS, PAYLOAD_BYTES, Pairing};
use summary::{Results, line};

/// Open + seal pairs timed per round for the AEAD cost.
const AEAD_ITERATIONS: u64 = 250_000;

struct Args {
    bench: bool,
    /// `--test` (criterion's: run each benchmark once as a test): nothing
    /// is measured.
    test: bool,
    /// `--list`: name the pairings and run nothing.
    list: bool,
    filters: Vec<String>,
    rounds: usize,
    settings: Settings,
    /// `--sweep`: the sweep over client counts instead of one count.
    sweep: bool,
    /// The sweep's client counts.
    sweep_clients: Vec<usize>,
    /// Where the sweep's plot goes.
    plot: PathBuf,
}

fn parse() -> Result<Args, String> {
    let mut args = Args {
        bench: false,
        test: false,
        list: false,
        filters: Vec::new(),
        rounds: 5,
        settings: Settings {
            clients: 256,
            window: 8,
            warm_up: Duration::from_secs(1),
            measure: Duration::from_secs(3),
            syscall_window: Some(Duration::from_secs(1)),
        },
        sweep: false,
        sweep_clients: sweep::CLIENTS.to_vec(),
        plot: PathBuf::from(sweep::PLOT),
    };
    // What the command line set, so the sweep's own defaults fill the rest.
    let (mut rounds, mut warm_up, mut measure, mut syscalls) = (None, None, None, None);
    let mut rest = std::env::args().skip(1);
    while let Some(arg) = rest.next() {
        let mut value = |name: &str| rest.next().ok_or_else(|| format!("{name} needs a value"));
        let seconds = |text: String| {
            text.parse::<f64>()
                .ok()
                .filter(|s| s.is_finite() && *s > 0.0)
                .map(Duration::from_secs_f64)
                .ok_or_else(|| format!("{text:?} is not a number of seconds"))
        };
        let count = |text: String| {
            text.parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("{text:?} is not a positive count"))
        };
        match arg.as_str() {
            "--bench" => args.bench = true,
            "--test" => args.test = true,
            "--list" => args.list = true,
            "--measurement-time" => measure = Some(seconds(value(&arg)?)?),
            "--warm-up-time" => warm_up = Some(seconds(value(&arg)?)?),
            "--syscall-time" => syscalls = Some(seconds(value(&arg)?)?),
            "--rounds" => rounds = Some(count(value(&arg)?)?),
            "--sweep" => args.sweep = true,
            "--sweep-clients" => {
                args.sweep_clients = (value(&arg)?.split(','))
                    .map(|n| count(n.trim().to_string()))
                    .collect::<Result<_, _>>()?;
            }
            "--plot" => args.plot = PathBuf::from(value(&arg)?),
            "--clients" => args.settings.clients = count(value(&arg)?)?,
            "--window" => args.settings.window = count(value(&arg)?)?,
            _ if CRITERION_VALUED.contains(&arg.as_str()) => {
                value(&arg)?;
            }
            _ if arg.starts_with('-') => {}
            _ => args.filters.push(arg),
        }
    }
    if args.sweep {
        args.rounds = sweep::ROUNDS;
        args.settings.warm_up = sweep::WARM_UP;
        args.settings.measure = sweep::MEASURE;
        args.settings.syscall_window = None;
    }
    args.rounds = rounds.unwrap_or(args.rounds);
    args.settings.warm_up = warm_up.unwrap_or(args.settings.warm_up);
    args.settings.measure = measure.unwrap_or(args.settings.measure);
    if syscalls.is_some() {
        args.settings.syscall_window = syscalls;
    }
    Ok(args)
}

fn main() -> ExitCode {
    match bench() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn bench() -> Result<(), String> {
    let args = parse()?;
    if !args.list && (args.test || !args.bench) {
        // `cargo test --benches` runs benches without `--bench`: nothing is
        // measured then (tests/it/udp.rs runs every pairing instead).
        println!("udp: measured only under `cargo bench`");
        return Ok(());
    }
    if args.sweep {
        return sweep::run(
            &args.filters,
            &args.sweep_clients,
            args.rounds,
            &args.settings,
            &args.plot,
        );
    }
    let pairings: Vec<Pairing> = PAIRINGS
        .into_iter()
        .filter(|p| args.filters.is_empty() || args.filters.iter().any(|f| p.id().contains(f)))
        .collect();
    if args.list {
        for pairing in &pairings {
            println!("{}: benchmark", pairing.id());
        }
        return Ok(());
    }
    if pairings.is_empty() {
        return Ok(());
    }
    let s = &args.settings;
    println!(
        "UDP loopback echo: {} clients, {}-byte payloads, {} in flight per client, \
         {:.1} s warm-up, {:.1} s measured, {} round(s); AEAD backend {}",
        s.clients,
        PAYLOAD_BYTES,
        s.window,
        s.warm_up.as_secs_f64(),
        s.measure.as_secs_f64(),
        args.rounds,
        AeadCost::backend(),
    );
    match s.syscall_window {
        Some(w) if rig::syscalls::perf_available() => println!(
            "system calls: perf stat on the server thread for {:.1} s after each window",
            w.as_secs_f64()
        ),
        Some(_) => println!("system calls: n/a (perf is not on the path)"),
        None => {}
    }

    let refusals: Vec<Option<String>> = pairings.iter().map(|p| p.refusal(s.clients)).collect();
    let mut results = Results {
        runs: vec![Vec::new(); pairings.len()],
        refusals,
        aead: Vec::new(),
        pairings,
    };
    let n = results.pairings.len();
    for round in 0..args.rounds {
        // Each round starts one pairing further on, so none always runs
        // first (or right after the same other).
        for k in 0..n {
            let i = (round + k) % n;
            let pairing = results.pairings[i];
            if let Some(refusal) = &results.refusals[i] {
                println!("round {} {}: not run: {refusal}", round + 1, pairing.id());
                continue;
            }
            let m = rig::run(pairing, s).map_err(|e| format!("{}: {e}", pairing.id()))?;
            println!("round {} {}: {}", round + 1, pairing.id(), line(&m));
            if m.echoes == 0 {
                return Err(format!("{}: no echoes", pairing.id()));
            }
            results.runs[i].push(m);
        }
        if let Some(cost) = aead_cost(AEAD_ITERATIONS) {
            println!(
                "round {} AEAD open + seal of {} bytes: {:.3} µs ({}), {:.3} µs (RustCrypto)",
                round + 1,
                PAYLOAD_BYTES,
                cost.ours_us,
                AeadCost::backend(),
                cost.rustcrypto_us
            );
            results.aead.push(cost);
        }
    }
    summary::print(&results);
    Ok(())
}

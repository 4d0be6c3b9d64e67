//! UDP loopback throughput: payloads per second through a netcode server
//! with 256 connected clients, over real 127.0.0.1 UDP, for netcode-mio and
//! the peers in the same run (`rig.rs` says what one run does).
//!
//! ```text
//! cargo bench -p netcode-bench --bench udp
//! cargo bench -p netcode-bench --bench udp -- [FILTER...] [--rounds N]
//!     [--measurement-time SECONDS] [--warm-up-time SECONDS]
//!     [--clients N] [--window W]
//! ```
//!
//! Defaults: 256 clients, 8 payloads in flight per client, 1 s of warm-up
//! and 3 s measured per run, 5 rounds. Every pairing of server and clients
//! runs once per round, each round starting one pairing further on, so the
//! machine's drifting load falls on every implementation alike; the summary gives
//! each pairing's median over the rounds, its best round, and its ratios
//! to netcode-mio taken round by round. A FILTER keeps the pairings whose
//! name (`udp_echo/<server> server, <clients> clients`) contains it.
//! criterion's other options are accepted and ignored, so the crate's
//! `cargo bench -p netcode-bench -- ...` commands run this bench too (with
//! criterion's filters, which match none of its names, it runs nothing).
//! Without `--bench`, or with `--test`, each pairing runs once for 0.2 s
//! with 8 clients, as a smoke test; `tests/udp.rs` is the one `cargo test`
//! runs.
//!
//! This is not a criterion bench: a run needs a server thread and 256
//! connected clients alive across its whole measurement, reports more than
//! a time (payloads at the server, echoes, loss, each thread's CPU and its
//! kernel share), and alternating the implementations round by round keeps
//! their ratios fair on a machine whose load moves, where criterion would
//! measure one implementation to the end before starting the next.

#[path = "rig.rs"]
mod rig;

use std::process::ExitCode;
use std::time::Duration;

use rig::{Implementation, Measurement, PAIRINGS, Pairing, Settings};

/// criterion's options that take a value, skipped with it.
const CRITERION_VALUED: [&str; 14] = [
    "--sample-size",
    "--noise-threshold",
    "--significance-level",
    "--confidence-level",
    "--nresamples",
    "--save-baseline",
    "--baseline",
    "--baseline-lenient",
    "--load-baseline",
    "--profile-time",
    "--output-format",
    "--plotting-backend",
    "--color",
    "--format",
];

struct Args {
    bench: bool,
    /// `--test`: the smoke run even under `cargo bench`.
    test: bool,
    /// `--list`: name the pairings and run nothing.
    list: bool,
    filters: Vec<String>,
    rounds: usize,
    settings: Settings,
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
        },
    };
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
            "--measurement-time" => args.settings.measure = seconds(value(&arg)?)?,
            "--warm-up-time" => args.settings.warm_up = seconds(value(&arg)?)?,
            "--rounds" => args.rounds = count(value(&arg)?)?,
            "--clients" => args.settings.clients = count(value(&arg)?)?,
            "--window" => args.settings.window = count(value(&arg)?)?,
            _ if CRITERION_VALUED.contains(&arg.as_str()) => {
                value(&arg)?;
            }
            _ if arg.starts_with('-') => {}
            _ => args.filters.push(arg),
        }
    }
    if args.test || !args.bench {
        args.bench = false;
        args.rounds = 1;
        args.settings = Settings {
            clients: 8,
            window: 4,
            warm_up: Duration::from_millis(100),
            measure: Duration::from_millis(200),
        };
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
         {:.1} s warm-up, {:.1} s measured, {} round(s)",
        s.clients,
        rig::PAYLOAD_BYTES,
        s.window,
        s.warm_up.as_secs_f64(),
        s.measure.as_secs_f64(),
        args.rounds
    );

    let mut results: Vec<Vec<Measurement>> = vec![Vec::new(); pairings.len()];
    for round in 0..args.rounds {
        // Each round starts one pairing further on, so none always runs
        // first (or right after the same other).
        for k in 0..pairings.len() {
            let i = (round + k) % pairings.len();
            let pairing = pairings[i];
            let m = rig::run(pairing, s).map_err(|e| format!("{}: {e}", pairing.id()))?;
            println!("round {} {}: {}", round + 1, pairing.id(), line(&m));
            if m.echoes == 0 {
                return Err(format!("{}: no echoes", pairing.id()));
            }
            results[i].push(m);
        }
    }
    if args.bench {
        summary(&pairings, &results);
    }
    Ok(())
}

fn line(m: &Measurement) -> String {
    let percent = |share: Option<f64>| share.map_or("?".into(), |s| format!("{:.0} %", s * 100.0));
    let micros = |us: Option<f64>| us.map_or("?".into(), |us| format!("{us:.2} µs"));
    format!(
        "{:.0} payloads/s at the server, {:.0} echoes/s at the clients; \
         server thread {} on a CPU ({} of it in the kernel), {} per payload; \
         clients' thread {} on a CPU ({} in the kernel), {} per echo; \
         {} lost, {} wrong, {} connected at the end",
        m.server_pps(),
        m.echo_pps(),
        percent(m.server_busy()),
        percent(m.server_kernel),
        micros(m.server_us_per_payload()),
        percent(m.client_busy()),
        percent(m.client_kernel),
        micros(m.client_us_per_echo()),
        m.lost,
        m.wrong,
        m.connected_at_end,
    )
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// A figure of every round of a pairing.
type Figure = fn(&Measurement) -> Option<f64>;

/// The median over the rounds, formatted with `decimals`.
fn median_of(runs: &[Measurement], figure: Figure, decimals: usize) -> String {
    let values: Option<Vec<f64>> = runs.iter().map(figure).collect();
    values.map_or("?".into(), |v| format!("{:.*}", decimals, median(v)))
}

/// The median and range of `ratio(ours, theirs)` round by round.
fn ratio_of(
    ours: &[Measurement],
    runs: &[Measurement],
    figure: Figure,
    ratio: fn(f64, f64) -> f64,
) -> String {
    let ratios: Vec<f64> = (ours.iter().zip(runs))
        .filter_map(|(a, b)| Some(ratio(figure(a)?, figure(b)?)))
        .collect();
    if ratios.is_empty() {
        return "?".into();
    }
    let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = ratios.iter().copied().fold(0.0, f64::max);
    format!("{:.2}× ({lo:.2}–{hi:.2})", median(ratios))
}

fn summary(pairings: &[Pairing], results: &[Vec<Measurement>]) {
    let ours = pairings
        .iter()
        .position(|p| p.server == Implementation::Mio && p.clients == Implementation::Mio);
    let pps: Figure = |m| Some(m.server_pps());
    let server_us: Figure = Measurement::server_us_per_payload;
    let client_us: Figure = Measurement::client_us_per_echo;
    let server_busy: Figure = |m| Some(m.server_busy()? * 100.0);
    let client_busy: Figure = |m| Some(m.client_busy()? * 100.0);
    let server_kernel: Figure = |m| Some(m.server_kernel? * 100.0);
    println!();
    println!(
        "| server | clients | payloads/s (median) | best round | netcode-mio / this | \
         server CPU per payload | this / netcode-mio | server thread on a CPU | \
         of which kernel | clients' CPU per echo | clients' thread on a CPU | lost |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (i, (pairing, runs)) in pairings.iter().zip(results).enumerate() {
        let (pps_ratio, cpu_ratio) = match ours {
            Some(o) if o != i => (
                ratio_of(&results[o], runs, pps, |a, b| a / b),
                ratio_of(&results[o], runs, server_us, |a, b| b / a),
            ),
            _ => Default::default(),
        };
        let best = runs.iter().map(Measurement::server_pps).fold(0.0, f64::max);
        let lost: u64 = runs.iter().map(|m| m.lost + m.wrong).sum();
        println!(
            "| {} | {} | {} | {best:.0} | {pps_ratio} | {} µs | {cpu_ratio} | {} % | {} % | {} µs | {} % | {lost} |",
            pairing.server.name(),
            pairing.clients.name(),
            median_of(runs, pps, 0),
            median_of(runs, server_us, 2),
            median_of(runs, server_busy, 0),
            median_of(runs, server_kernel, 0),
            median_of(runs, client_us, 2),
            median_of(runs, client_busy, 0),
        );
    }
    println!(
        "\nnetcode-mio / this: netcode-mio's payloads per second over the pairing's, \
         round by round (median and range); this / netcode-mio: the pairing's server \
         CPU per payload over netcode-mio's, likewise. CPU per payload: the thread's \
         time on a CPU (schedstat) over the window's payloads. lost: payloads given \
         up on or echoed wrong, every round."
    );
}

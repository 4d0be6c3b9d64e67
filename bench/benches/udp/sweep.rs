//! The sweep over client counts (`--sweep`): the same echo runs as the
//! main bench (`rig/mod.rs`), at each of 16, 64, 256, 1024 and 4096
//! clients, for ours (mio batched, std, tokio), the floor, and each peer's
//! server with our clients up to its cap; per count, the server CPU per
//! payload and the server thread's live heap once all clients connected.
//! It prints a table per count and the ratios to the floor plus the AEAD,
//! and draws both curves against the number of clients in an SVG
//! (`plot.rs`), with the figures beside it in a CSV of the same name.
//!
//! Shorter than the main bench, so the whole sweep takes a few minutes:
//! by default 3 rounds of 0.5 s warm-up and 1.5 s measured per run, no
//! `perf` window. The rounds alternate the pairings as the main bench
//! does (each round at a count starts one pairing further on) and measure
//! the AEAD once per count, and each point is the median over its rounds.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use netcode_bench::cli::{Spread, median};
use netcode_bench::machine::load1;

use crate::plot::{self, Curve};
use crate::rig::aead::{AeadCost, aead_cost};
use crate::rig::kinds::{ClientKind, Pairing, ServerKind};
use crate::rig::{self, Measurement, Settings};
use crate::summary::{kilobytes, line};

/// The client counts swept by default.
pub(crate) const CLIENTS: [usize; 5] = [16, 64, 256, 1024, 4096];

/// The sweep's defaults: rounds, warm-up and measured window per run.
pub(crate) const ROUNDS: usize = 3;
pub(crate) const WARM_UP: Duration = Duration::from_millis(500);
pub(crate) const MEASURE: Duration = Duration::from_millis(1500);

/// Where the plot goes by default (its CSV beside it).
pub(crate) const PLOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/plots/udp-sweep.svg");

/// Open + seal pairs timed per count and round for the AEAD cost.
const AEAD_ITERATIONS: u64 = 100_000;

/// The pairings swept, in the order of the tables and the legend: the
/// peers with our clients, so the clients' side is the same for every
/// server.
const PAIRINGS: [Pairing; 6] = [
    Pairing::new(ServerKind::Batched, ClientKind::Mio),
    Pairing::new(ServerKind::Std, ClientKind::Mio),
    Pairing::new(ServerKind::Tokio, ClientKind::Mio),
    Pairing::new(ServerKind::Floor, ClientKind::Bare),
    Pairing::new(ServerKind::Official, ClientKind::Mio),
    Pairing::new(ServerKind::Renet, ClientKind::Mio),
];

/// One count's runs: per pairing its rounds (empty where refused), and the
/// AEAD cost of each round.
struct Point {
    clients: usize,
    runs: Vec<Vec<Measurement>>,
    aead: Vec<AeadCost>,
}

/// Runs the sweep and writes the plot to `plot_path`.
pub(crate) fn run(
    filters: &[String],
    counts: &[usize],
    rounds: usize,
    settings: &Settings,
    plot_path: &Path,
) -> Result<(), String> {
    let pairings: Vec<Pairing> = PAIRINGS
        .into_iter()
        .filter(|p| filters.is_empty() || filters.iter().any(|f| p.id().contains(f)))
        .collect();
    println!(
        "UDP loopback echo sweep: {counts:?} clients, {} in flight per client, {:.1} s warm-up, \
         {:.1} s measured, {rounds} round(s) per count; AEAD backend {}",
        settings.window,
        settings.warm_up.as_secs_f64(),
        settings.measure.as_secs_f64(),
        AeadCost::backend(),
    );
    let load_before = load1();
    let mut points = Vec::new();
    for &clients in counts {
        let settings = Settings {
            clients,
            ..settings.clone()
        };
        let mut point = Point {
            clients,
            runs: vec![Vec::new(); pairings.len()],
            aead: Vec::new(),
        };
        let n = pairings.len();
        for round in 0..rounds {
            for k in 0..n {
                let i = (round + k) % n;
                let pairing = pairings[i];
                if let Some(refusal) = pairing.refusal(clients) {
                    if round == 0 {
                        println!("{clients} clients {}: not run: {refusal}", pairing.id());
                    }
                    continue;
                }
                let m = rig::run(pairing, &settings)
                    .map_err(|e| format!("{clients} clients {}: {e}", pairing.id()))?;
                println!(
                    "{clients} clients, round {} {}: {}",
                    round + 1,
                    pairing.id(),
                    line(&m)
                );
                point.runs[i].push(m);
            }
            if let Some(cost) = aead_cost(AEAD_ITERATIONS) {
                point.aead.push(cost);
            }
        }
        points.push(point);
    }
    let load = format!("load average {load_before} before, {} after", load1());
    println!("\n{load}");
    table(&pairings, &points);
    ratios(&pairings, &points);
    let (cpu, heap) = curves(&pairings, &points);
    let caption = format!("{}; {load}", caption(settings, rounds));
    plot::write(plot_path, &cpu, &heap, &caption)?;
    let csv = plot_path.with_extension("csv");
    std::fs::write(&csv, to_csv(&pairings, &points))
        .map_err(|e| format!("{}: {e}", csv.display()))?;
    println!(
        "\nplot: {}\nfigures: {}",
        plot_path.display(),
        csv.display()
    );
    Ok(())
}

/// The plot's subtitle: what a point is.
fn caption(settings: &Settings, rounds: usize) -> String {
    format!(
        "UDP loopback echo, 100-byte payloads, {} in flight per client; median of {rounds} \
         round(s) of {:.1} s; AEAD {}",
        settings.window,
        settings.measure.as_secs_f64(),
        AeadCost::backend()
    )
}

/// The median over a pairing's rounds of `figure`.
fn median_of(runs: &[Measurement], figure: impl Fn(&Measurement) -> Option<f64>) -> Option<f64> {
    let values: Option<Vec<f64>> = runs.iter().map(figure).collect();
    values.and_then(|v| median(&v))
}

/// A pairing's name in the tables and the legend.
fn name(pairing: Pairing) -> String {
    match pairing.clients {
        ClientKind::Mio if !pairing.server.ours() => {
            format!("{} (our clients)", pairing.server.name())
        }
        _ => pairing.server.name().to_string(),
    }
}

fn table(pairings: &[Pairing], points: &[Point]) {
    println!();
    println!(
        "| clients | server | server CPU per payload (range) | payloads/s | server thread on a CPU \
         | keep-alives per payload | server heap, connected | per client | server heap, loaded |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for point in points {
        for (pairing, runs) in pairings.iter().zip(&point.runs) {
            if runs.is_empty() {
                continue;
            }
            let cpu: Vec<f64> = runs
                .iter()
                .filter_map(Measurement::server_us_per_payload)
                .collect();
            let cpu = Spread::of(&cpu).map_or("?".into(), |s| {
                format!("**{:.2} µs** ({:.2}–{:.2})", s.median, s.min, s.max)
            });
            let or_na = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or("n/a".into(), f);
            let heap = median_of(runs, |m| m.heap_connected.map(|b| b as f64));
            println!(
                "| {} | {} | {cpu} | {} | {} | {} | {} | {} | {} |",
                point.clients,
                name(*pairing),
                or_na(median_of(runs, |m| Some(m.server_pps())), &|v| format!(
                    "{v:.0}"
                )),
                or_na(median_of(runs, Measurement::server_busy), &|v| format!(
                    "{:.0} %",
                    v * 100.0
                )),
                or_na(
                    median_of(runs, Measurement::keep_alives_per_payload),
                    &|v| format!("{v:.3}")
                ),
                or_na(heap, &kilobytes),
                or_na(heap, &|b| format!("{:.0} B", b / point.clients as f64)),
                or_na(
                    median_of(runs, |m| m.heap_loaded.map(|b| b as f64)),
                    &kilobytes
                ),
            );
        }
    }
    println!(
        "\nMedians over the rounds. Server heap: the server thread's live heap bytes \
         (counting allocator) once all clients had connected, before any payload, and at the \
         end of the measuring window; per client: the first over the clients."
    );
}

/// Ours against the floor plus the AEAD, per count: per payload (one open
/// and one seal) and per datagram moved (one of the two), round by round.
fn ratios(pairings: &[Pairing], points: &[Point]) {
    let find = |server: ServerKind| pairings.iter().position(|p| p.server == server);
    let Some(floor) = find(ServerKind::Floor) else {
        return;
    };
    let ours: Vec<usize> = [ServerKind::Batched, ServerKind::Std, ServerKind::Tokio]
        .into_iter()
        .filter_map(find)
        .collect();
    println!();
    println!(
        "| clients | server | / (floor + AEAD), per payload | / (floor + half the AEAD), per \
         datagram moved |"
    );
    println!("|---|---|---|---|");
    for point in points {
        let aead: Vec<f64> = point.aead.iter().map(|c| c.ours_us).collect();
        let against = |i: usize, figure: fn(&Measurement) -> Option<f64>, share: f64| {
            let values: Vec<f64> = (point.runs[i].iter().zip(&point.runs[floor]))
                .zip(&aead)
                .filter_map(|((o, f), a)| Some(figure(o)? / (figure(f)? + a * share)))
                .collect();
            Spread::of(&values).map_or("n/a".into(), |s| {
                format!("{:.2}× ({:.2}–{:.2})", s.median, s.min, s.max)
            })
        };
        for &i in &ours {
            println!(
                "| {} | {} | {} | {} |",
                point.clients,
                name(pairings[i]),
                against(i, Measurement::server_us_per_payload, 1.0),
                against(i, Measurement::server_us_per_datagram, 0.5),
            );
        }
    }
}

/// The two plots' curves: CPU per payload in µs, heap in bytes.
fn curves(pairings: &[Pairing], points: &[Point]) -> (Vec<Curve>, Vec<Curve>) {
    let mut cpu = Vec::new();
    let mut heap = Vec::new();
    for (i, pairing) in pairings.iter().enumerate() {
        let curve = |figure: &dyn Fn(&Measurement) -> Option<f64>| Curve {
            name: name(*pairing),
            points: points
                .iter()
                .filter_map(|p| Some((p.clients, median_of(&p.runs[i], figure)?)))
                .collect(),
        };
        cpu.push(curve(&Measurement::server_us_per_payload));
        heap.push(curve(&|m| m.heap_connected.map(|b| b as f64)));
    }
    (cpu, heap)
}

/// Every point's medians, one line per pairing and count.
fn to_csv(pairings: &[Pairing], points: &[Point]) -> String {
    let mut csv = String::from(
        "clients,server,clients_kind,server_us_per_payload,server_us_per_datagram,\
         payloads_per_second,keep_alives_per_payload,heap_connected_bytes,heap_loaded_bytes,\
         aead_us\n",
    );
    let cell =
        |v: Option<f64>, decimals: usize| v.map_or(String::new(), |v| format!("{v:.decimals$}"));
    for point in points {
        let aead = median(&point.aead.iter().map(|c| c.ours_us).collect::<Vec<_>>());
        for (pairing, runs) in pairings.iter().zip(&point.runs) {
            if runs.is_empty() {
                continue;
            }
            let _ = writeln!(
                csv,
                "{},{},{},{},{},{},{},{},{},{}",
                point.clients,
                pairing.server.name(),
                pairing.clients.name(),
                cell(median_of(runs, Measurement::server_us_per_payload), 3),
                cell(median_of(runs, Measurement::server_us_per_datagram), 3),
                cell(median_of(runs, |m| Some(m.server_pps())), 0),
                cell(median_of(runs, Measurement::keep_alives_per_payload), 3),
                cell(median_of(runs, |m| m.heap_connected.map(|b| b as f64)), 0),
                cell(median_of(runs, |m| m.heap_loaded.map(|b| b as f64)), 0),
                cell(aead, 3),
            );
        }
    }
    csv
}

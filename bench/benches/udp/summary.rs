//! The summary of the UDP bench: every row's medians over the rounds, and
//! the ratios against the project's targets, each taken round by round
//! (the same round's figures on both sides) and given as median (range):
//! each of ours (batched, std, tokio) against the floor plus the AEAD per
//! payload echoed (the target at 256 clients) and per datagram moved,
//! keep-alives included (the target at 4096 clients), and the peers
//! against ours batched. Also the line each run prints as it ends.

use netcode_bench::cli::{Spread, median};

use crate::rig::Measurement;
use crate::rig::aead::AeadCost;
use crate::rig::kinds::{ClientKind, Pairing, ServerKind};

/// What the rounds measured: per pairing its runs (or why it was not run),
/// and the AEAD cost of each round.
pub(crate) struct Results {
    /// The pairings, in the order of the tables.
    pub(crate) pairings: Vec<Pairing>,
    /// Each pairing's runs, one per round.
    pub(crate) runs: Vec<Vec<Measurement>>,
    /// Why a pairing was not run at all.
    pub(crate) refusals: Vec<Option<String>>,
    /// The AEAD cost, one per round (where the OS gives thread CPU time).
    pub(crate) aead: Vec<AeadCost>,
}

/// A server thread on a CPU less than this share of the window was not
/// the saturated side of its run.
const SATURATED: f64 = 0.9;

/// Ours at most this times the floor plus the AEAD, per payload echoed
/// (the target at 256 clients).
const FLOOR_TARGET: f64 = 1.10;

/// Ours at most this times the floor plus the AEAD, per datagram moved,
/// keep-alives included (the target at 4096 clients).
const DATAGRAM_TARGET: f64 = 1.15;

/// Each peer's server CPU per payload at least this times ours, batched.
const PEER_TARGET: f64 = 2.0;

/// `bytes` as kilobytes (1000 bytes), for the tables.
pub(crate) fn kilobytes(bytes: f64) -> String {
    format!("{:.1} KB", bytes / 1000.0)
}

/// A figure of every round of a pairing.
type Figure = fn(&Measurement) -> Option<f64>;

/// The median over the rounds, formatted with `decimals`.
fn median_of(runs: &[Measurement], figure: Figure, decimals: usize) -> String {
    let values: Option<Vec<f64>> = runs.iter().map(figure).collect();
    values
        .and_then(|v| median(&v))
        .map_or("?".into(), |m| format!("{m:.decimals$}"))
}

/// A ratio's median and range, the median in bold.
fn ratio(spread: &Spread) -> String {
    format!(
        "**{:.2}×** ({:.2}–{:.2})",
        spread.median, spread.min, spread.max
    )
}

/// Microseconds' median and range.
fn micros(spread: &Spread) -> String {
    format!(
        "{:.3} µs ({:.3}–{:.3})",
        spread.median, spread.min, spread.max
    )
}

/// The index of the pairing of `server` with `clients`.
fn find(pairings: &[Pairing], server: ServerKind, clients: ClientKind) -> Option<usize> {
    pairings
        .iter()
        .position(|p| p.server == server && p.clients == clients)
}

/// Server CPU per payload in microseconds, round by round.
fn cpu_per_payload(runs: &[Measurement]) -> Vec<Option<f64>> {
    runs.iter()
        .map(Measurement::server_us_per_payload)
        .collect()
}

/// `a[r] / b[r]` for every round where both are known.
fn ratios(a: &[Option<f64>], b: &[Option<f64>]) -> Vec<f64> {
    a.iter()
        .zip(b)
        .filter_map(|(a, b)| Some(a.as_ref()? / b.as_ref()?))
        .collect()
}

/// Prints both tables.
pub(crate) fn print(results: &Results) {
    rows(results);
    targets(results);
}

fn rows(results: &Results) {
    println!();
    println!(
        "| server | clients | payloads/s | server CPU per payload | server thread on a CPU | \
         of which kernel | datagram system calls per datagram (perf) | socket batch calls per \
         datagram (server's count) | server datagrams per payload (keep-alives) | clients' CPU per echo | clients' thread on a CPU | lost | \
         receive-buffer drops | server heap, connected / loaded |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for ((pairing, runs), refusal) in (results.pairings.iter())
        .zip(&results.runs)
        .zip(&results.refusals)
    {
        let (server, clients) = (pairing.server.name(), pairing.clients.name());
        if let Some(refusal) = refusal {
            println!(
                "| {server} | {clients} | **not run**: {refusal} |  |  |  |  |  |  |  |  |  |  |"
            );
            continue;
        }
        let busy = median(
            &runs
                .iter()
                .filter_map(Measurement::server_busy)
                .collect::<Vec<_>>(),
        );
        let busy = busy.map_or("?".into(), |b| {
            let note = if b < SATURATED {
                " (not saturated)"
            } else {
                ""
            };
            format!("{:.0} %{note}", b * 100.0)
        });
        let syscalls = median(
            &runs
                .iter()
                .filter_map(Measurement::syscalls_per_datagram)
                .collect::<Vec<_>>(),
        );
        let syscalls = syscalls.map_or_else(
            || {
                let why = runs.iter().find_map(|m| m.syscalls.as_ref().err());
                why.map_or("n/a".into(), Clone::clone)
            },
            |s| format!("{s:.3}"),
        );
        let lost: u64 = runs.iter().map(|m| m.lost + m.wrong).sum();
        let drops: Option<u64> = runs.iter().map(|m| m.receive_buffer_drops).sum();
        let drops = drops.map_or("?".into(), |d| d.to_string());
        let (calls, datagrams) = if pairing.server.counts_datagrams() {
            let datagrams = median_of(runs, Measurement::datagrams_per_payload, 3);
            let keep_alives = median_of(runs, Measurement::keep_alives_per_payload, 3);
            (
                median_of(runs, Measurement::calls_per_datagram, 3),
                format!("{datagrams} ({keep_alives})"),
            )
        } else {
            let not = "n/a (not counted by the server)".to_string();
            (not.clone(), not)
        };
        let heap = |figure: Figure| {
            let values: Option<Vec<f64>> = runs.iter().map(figure).collect();
            values
                .and_then(|v| median(&v))
                .map_or("n/a".into(), kilobytes)
        };
        println!(
            "| {server} | {clients} | {} | **{} µs** | {busy} | {} % | {syscalls} | {calls} | {datagrams} | {} µs | {} % | {lost} | {drops} | {} / {} |",
            median_of(runs, |m| Some(m.server_pps()), 0),
            median_of(runs, Measurement::server_us_per_payload, 2),
            median_of(runs, |m| Some(m.server_kernel? * 100.0), 0),
            median_of(runs, Measurement::client_us_per_echo, 2),
            median_of(runs, |m| Some(m.client_busy()? * 100.0), 0),
            heap(|m| m.heap_connected.map(|b| b as f64)),
            heap(|m| m.heap_loaded.map(|b| b as f64)),
        );
    }
    println!(
        "\nMedians over the rounds. CPU per payload: the thread's time on a CPU (schedstat) \
         over the payloads the server echoed in the window. System calls: perf's count of \
         sendto, recvfrom, sendmmsg, recvmmsg, sendmsg and recvmsg on the server thread over \
         the datagrams it moved in the same span (ours and the floor: their own counts; the \
         peers: two per payload echoed). Socket batch calls: the server's calls to its \
         socket's batch methods (ours: transport_stats; on the one-per-call socket each \
         such call loops over single-datagram calls). Server datagrams per payload: in and \
         out, over the payloads echoed (2.000 with nothing else), and in parentheses the \
         keep-alives among them. lost: payloads not echoed within 0.5 s \
         or echoed wrong, every round. Receive-buffer drops: the system's UDP RcvbufErrors \
         over the measuring windows, every round (all sockets of the machine). Server heap: \
         the server thread's live heap bytes (counting allocator) once all clients had \
         connected, and at the end of the measuring window."
    );
}

fn targets(results: &Results) {
    let pairings = &results.pairings;
    let backend = AeadCost::backend();
    let aead: Vec<Option<f64>> = results.aead.iter().map(|c| Some(c.ours_us)).collect();
    println!();
    if let Some(spread) = Spread::of(&aead.iter().flatten().copied().collect::<Vec<_>>()) {
        println!(
            "AEAD, one open + one seal of 100 bytes in-process ({backend}, netcode-proto's \
             crypto functions): {}",
            micros(&spread)
        );
    }
    let rustcrypto: Vec<f64> = results.aead.iter().map(|c| c.rustcrypto_us).collect();
    if let Some(spread) = Spread::of(&rustcrypto) {
        println!(
            "AEAD, the same with the RustCrypto chacha20poly1305 crate (the peers' AEAD): {}",
            micros(&spread)
        );
    }
    let per_datagram = |i: usize| -> Vec<Option<f64>> {
        (results.runs[i].iter())
            .map(Measurement::server_us_per_datagram)
            .collect()
    };
    let print_spread = |name: &str, values: &[Option<f64>]| {
        if let Some(spread) = Spread::of(&values.iter().flatten().copied().collect::<Vec<_>>()) {
            println!("{name}: {}", micros(&spread));
        }
    };
    // Per payload the floor is charged one open and one seal; per datagram
    // moved (a payload in or out, a keep-alive in or out) one of the two.
    let plus = |base: Vec<Option<f64>>, share: f64| -> Vec<Option<f64>> {
        (base.iter().zip(&aead))
            .map(|(b, a)| Some(b.as_ref()? + a.as_ref()? * share))
            .collect()
    };
    let floor = find(pairings, ServerKind::Floor, ClientKind::Bare);
    let floors = floor.map(|f| {
        let payload = cpu_per_payload(&results.runs[f]);
        let datagram = per_datagram(f);
        print_spread("floor, server CPU per payload", &payload);
        print_spread("floor, server CPU per datagram moved", &datagram);
        let payload = plus(payload, 1.0);
        let datagram = plus(datagram, 0.5);
        print_spread(&format!("floor + AEAD ({backend}), per payload"), &payload);
        print_spread(
            &format!("floor + half the AEAD ({backend}), per datagram moved"),
            &datagram,
        );
        (payload, datagram)
    });
    let ours: Vec<(&str, usize)> = [
        ("ours batched", ServerKind::Batched),
        ("ours std", ServerKind::Std),
        ("ours tokio", ServerKind::Tokio),
    ]
    .into_iter()
    .filter_map(|(name, kind)| Some((name, find(pairings, kind, ClientKind::Mio)?)))
    .collect();
    for &(name, i) in &ours {
        print_spread(
            &format!("{name}, server CPU per payload"),
            &cpu_per_payload(&results.runs[i]),
        );
        print_spread(
            &format!("{name}, server CPU per datagram moved"),
            &per_datagram(i),
        );
    }

    println!();
    println!("| ratio of server CPU, round by round | median (range) | target | verdict |");
    println!("|---|---|---|---|");
    // Judged on the median as printed (two decimals), so that a printed
    // 1.10× against a 1.10× target reads as met.
    let verdict = |spread: &Option<Spread>, met: &dyn Fn(f64) -> bool| match spread {
        Some(s) if met((s.median * 100.0).round() / 100.0) => "met",
        Some(_) => "**missed**",
        None => "n/a",
    };
    let cell = |spread: &Option<Spread>| spread.as_ref().map_or("n/a".into(), ratio);
    if let Some((payload, datagram)) = &floors {
        for &(name, i) in &ours {
            let spread = Spread::of(&ratios(&cpu_per_payload(&results.runs[i]), payload));
            println!(
                "| {name} / (floor + AEAD, {backend}), per payload echoed | {} | ≤ {FLOOR_TARGET:.2}× (the target at 256 clients) | {} |",
                cell(&spread),
                verdict(&spread, &|r| r <= FLOOR_TARGET)
            );
            let spread = Spread::of(&ratios(&per_datagram(i), datagram));
            println!(
                "| {name} / (floor + half the AEAD), per datagram moved, keep-alives included | {} | ≤ {DATAGRAM_TARGET:.2}× (the target at 4096 clients) | {} |",
                cell(&spread),
                verdict(&spread, &|r| r <= DATAGRAM_TARGET)
            );
        }
    }
    let Some(&(_, batched)) = ours.first().filter(|(name, _)| *name == "ours batched") else {
        return;
    };
    let ours_cpu = cpu_per_payload(&results.runs[batched]);
    for (i, pairing) in pairings.iter().enumerate() {
        let peer = matches!(pairing.server, ServerKind::Official | ServerKind::Renet);
        if !peer {
            continue;
        }
        let name = format!(
            "{} server ({} clients) / ours batched, per payload",
            pairing.server.name(),
            pairing.clients.name()
        );
        if let Some(refusal) = &results.refusals[i] {
            println!("| {name} | not run: {refusal} | ≥ {PEER_TARGET:.0}× | n/a |");
            continue;
        }
        let spread = Spread::of(&ratios(&cpu_per_payload(&results.runs[i]), &ours_cpu));
        println!(
            "| {name} | {} | ≥ {PEER_TARGET:.0}× | {} |",
            cell(&spread),
            verdict(&spread, &|r| r >= PEER_TARGET)
        );
    }
    if let Some(per_call) = find(pairings, ServerKind::PerCall, ClientKind::Mio) {
        let spread = Spread::of(&ratios(
            &cpu_per_payload(&results.runs[per_call]),
            &ours_cpu,
        ));
        println!(
            "| ours one-per-call / ours batched, per payload | {} | (none: what batching saves) |  |",
            cell(&spread)
        );
    }
}

/// One run, on one line.
pub(crate) fn line(m: &Measurement) -> String {
    let percent = |share: Option<f64>| share.map_or("?".into(), |s| format!("{:.0} %", s * 100.0));
    let micros = |us: Option<f64>| us.map_or("?".into(), |us| format!("{us:.2} µs"));
    let syscalls = match &m.syscalls {
        Ok(count) => format!(
            "{:.3} ({} calls / {:.0} datagrams)",
            count.per_datagram(),
            count.calls,
            count.datagrams
        ),
        Err(why) => why.clone(),
    };
    let figure = |f: Option<f64>| f.map_or("n/a".into(), |c| format!("{c:.3}"));
    let calls = figure(m.calls_per_datagram());
    let datagrams = figure(m.datagrams_per_payload());
    let keep_alives = figure(m.keep_alives_per_payload());
    format!(
        "{:.0} payloads/s at the server, {:.0} echoes/s at the clients; \
         server thread {} on a CPU ({} of it in the kernel), {} per payload; \
         datagram system calls per datagram {syscalls}, socket batch calls per datagram {calls}; \
         server datagrams per payload {datagrams} ({keep_alives} keep-alives); \
         clients' thread {} on a CPU ({} in the kernel), {} per echo; \
         {} lost, {} wrong, {} connected at the end; {} datagrams dropped by full receive \
         buffers (system-wide); server heap {} connected, {} loaded",
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
        m.receive_buffer_drops.map_or("?".into(), |d| d.to_string()),
        heap(m.heap_connected),
        heap(m.heap_loaded),
    )
}

/// Heap bytes as kilobytes, or "n/a".
fn heap(bytes: Option<u64>) -> String {
    bytes.map_or("n/a".into(), |b| kilobytes(b as f64))
}

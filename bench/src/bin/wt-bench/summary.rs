//! `wt-bench summary FILE`: the tables of a run from its `RESULT` lines
//! (any other line is skipped): per case, the median and range over the
//! rounds of each figure, then the ratios, each taken within a round
//! (cases of one round ran minutes apart at most, in turn) and then
//! summarized over the rounds.

use std::collections::HashMap;

use netcode_bench::cli::Spread;

/// One `RESULT` line's fields.
type Fields = HashMap<String, String>;

/// The label of a line's case: `case K=n`, with the echo loop when it is
/// not the default.
fn label(fields: &Fields) -> String {
    let case = fields.get("case").map_or("?", String::as_str);
    let clients = fields.get("clients").map_or("?", String::as_str);
    let batch = fields.get("echo").is_some_and(|e| e == "batch");
    match (case, batch) {
        ("aead", _) => "aead".into(),
        (case, true) => format!("{case} batch K={clients}"),
        (case, false) if case.starts_with("connect-") => {
            let concurrency = fields.get("concurrency").map_or("?", String::as_str);
            let mut label = format!("{case} N={clients}, {concurrency} at a time");
            let server = fields.get("server").map_or("ours", String::as_str);
            if server != "ours" {
                let tick = fields.get("tick_ms").map_or("?", String::as_str);
                label += &format!(", {server} ticking every {tick} ms");
            }
            if fields.get("token_history").is_some_and(|h| h == "yes") {
                label += ", token history";
            }
            if fields.get("churn").is_some_and(|c| c == "yes") {
                label += ", churn";
            }
            label
        }
        (case, false) => format!("{case} K={clients}"),
    }
}

fn number(fields: &Fields, key: &str) -> Option<f64> {
    fields.get(key)?.parse().ok()
}

/// The lines of each label, in the order labels first appear.
struct Run {
    order: Vec<String>,
    lines: HashMap<String, Vec<Fields>>,
}

impl Run {
    fn values(&self, label: &str, key: &str) -> Vec<f64> {
        self.lines
            .get(label)
            .map(|lines| lines.iter().filter_map(|f| number(f, key)).collect())
            .unwrap_or_default()
    }

    /// `key` of `label` in each round that has it.
    fn by_round(&self, label: &str, key: &str) -> HashMap<String, f64> {
        let mut out = HashMap::new();
        for fields in self.lines.get(label).into_iter().flatten() {
            if let (Some(round), Some(value)) = (fields.get("round"), number(fields, key)) {
                out.insert(round.clone(), value);
            }
        }
        out
    }

    /// Per round, `f` of the values of `parts` (each a label and key) in
    /// that round, for the rounds that have all of them.
    fn ratio(&self, parts: &[(&str, &str)], f: impl Fn(&[f64]) -> f64) -> Vec<f64> {
        let columns: Vec<_> = parts.iter().map(|(l, k)| self.by_round(l, k)).collect();
        let mut rounds: Vec<&String> = columns
            .first()
            .map(|c| c.keys().collect())
            .unwrap_or_default();
        rounds.sort();
        rounds
            .into_iter()
            .filter_map(|round| {
                let values: Option<Vec<f64>> =
                    columns.iter().map(|c| c.get(round).copied()).collect();
                values.map(|v| f(&v))
            })
            .collect()
    }
}

pub(crate) fn run(file: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
    let mut run = Run {
        order: Vec::new(),
        lines: HashMap::new(),
    };
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("RESULT ") else {
            continue;
        };
        let fields: Fields = rest
            .split_whitespace()
            .filter_map(|f| f.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let label = label(&fields);
        if !run.lines.contains_key(&label) {
            run.order.push(label.clone());
        }
        run.lines.entry(label).or_default().push(fields);
    }
    // A run of connection cases alone (bench/scripts/connect.sh) has no
    // echo tables.
    if run.order.iter().any(|l| !l.starts_with("connect-")) {
        echo_table(&run);
        ratios(&run);
    }
    connect_table(&run);
    Ok(())
}

/// A column of a table: its header, the field, its decimals (a bold
/// header makes bold cells).
type Column = (&'static str, &'static str, usize);

/// Prints the header of a table whose first two columns are the label and
/// the rounds, and whose last is the load.
fn header(first: &str, columns: &[Column]) {
    let names: Vec<&str> = columns.iter().map(|c| c.0).collect();
    println!("| {first} | rounds | {} | load |", names.join(" | "));
    println!("|---|---:|{}---|", "---:|".repeat(columns.len()));
}

/// Prints the row of `label` (in bold where the header is bold).
fn row(run: &Run, label: &str, name: &str, columns: &[Column]) {
    let cells: Vec<String> = columns
        .iter()
        .map(|&(header, key, decimals)| {
            let values = run.values(label, key);
            let cell = if values.is_empty() {
                String::new()
            } else if key == "lost" || key == "failed" {
                format!("{:.0}", values.iter().sum::<f64>())
            } else {
                Spread::show(&values, decimals)
            };
            if header.starts_with("**") && !cell.is_empty() {
                format!("**{cell}**")
            } else {
                cell
            }
        })
        .collect();
    println!(
        "| {name} | {} | {} | {} |",
        run.lines[label].len(),
        cells.join(" | "),
        load_range(run, label)
    );
}

fn echo_table(run: &Run) {
    const COLUMNS: [Column; 10] = [
        ("**server CPU µs per echo**", "server_us", 2),
        ("echoes/s", "echoes_per_s", 0),
        ("server CPU use", "server_util", 2),
        ("kernel share", "server_kernel", 2),
        ("client CPU µs per echo", "client_us", 2),
        ("UDP datagrams per echo", "udp_out_per_echo", 2),
        ("datagrams dropped, full buffers", "rcvbuf_errors", 0),
        (
            "of which at the server's QUIC socket",
            "server_socket_drops",
            0,
        ),
        ("others' CPU", "others_util", 2),
        ("payloads lost (sum)", "lost", 0),
    ];
    header("case", &COLUMNS);
    for label in &run.order {
        if label.starts_with("connect-") {
            continue;
        }
        if label == "aead" {
            let backend = run.lines[label][0]
                .get("backend")
                .cloned()
                .unwrap_or_default();
            let mut columns = COLUMNS;
            columns[0] = ("**server CPU µs per echo**", "us", 3);
            let name = format!("AEAD per echo (seal + open, 100 B, {backend})");
            row(run, label, &name, &columns);
            continue;
        }
        row(run, label, label, &COLUMNS);
    }
    println!();
}

/// The lowest and highest load average seen before and after the lines of
/// `label`.
fn load_range(run: &Run, label: &str) -> String {
    let mut loads = run.values(label, "load_before");
    loads.extend(run.values(label, "load_after"));
    match Spread::of(&loads) {
        Some(s) => format!("{:.2}–{:.2}", s.min, s.max),
        None => "?".into(),
    }
}

fn ratios(run: &Run) {
    println!("| ratio (per round, then median and range) | K | value |");
    println!("|---|---:|---:|");
    for k in ["1", "16"] {
        let wt = format!("netcode-wt K={k}");
        let udp = format!("netcode-udp K={k}");
        let bare = format!("bare-wt K={k}");
        let select = format!("bare-wt-select K={k}");
        let relay = format!("relay-wt K={k}");
        let us = "server_us";
        let rows: [(&str, Vec<f64>); 8] = [
            (
                "**netcode-wt / (bare-wt + AEAD)** (target ≤ 1.3)",
                run.ratio(&[(&wt, us), (&bare, us), ("aead", "us")], |v| {
                    v[0] / (v[1] + v[2])
                }),
            ),
            (
                "netcode-wt / bare-wt",
                run.ratio(&[(&wt, us), (&bare, us)], |v| v[0] / v[1]),
            ),
            (
                "netcode-wt / netcode-udp",
                run.ratio(&[(&wt, us), (&udp, us)], |v| v[0] / v[1]),
            ),
            (
                "QUIC's share: bare-wt / netcode-wt",
                run.ratio(&[(&bare, us), (&wt, us)], |v| v[0] / v[1]),
            ),
            (
                "netcode-wt − bare-wt − AEAD (µs)",
                run.ratio(&[(&wt, us), (&bare, us), ("aead", "us")], |v| {
                    v[0] - v[1] - v[2]
                }),
            ),
            (
                "bare-wt-select − bare-wt (µs)",
                run.ratio(&[(&select, us), (&bare, us)], |v| v[0] - v[1]),
            ),
            (
                "relay-wt − bare-wt (µs)",
                run.ratio(&[(&relay, us), (&bare, us)], |v| v[0] - v[1]),
            ),
            (
                "netcode-wt − relay-wt (µs)",
                run.ratio(&[(&wt, us), (&relay, us)], |v| v[0] - v[1]),
            ),
        ];
        for (name, values) in rows {
            if !values.is_empty() {
                let decimals = if name.ends_with("(µs)") { 2 } else { 3 };
                println!("| {name} | {k} | {} |", Spread::show(&values, decimals));
            }
        }
        let batch = format!("netcode-wt batch K={k}");
        let batch_udp = format!("netcode-udp batch K={k}");
        for (name, values) in [
            (
                "netcode-wt batch / (bare-wt + AEAD)",
                run.ratio(&[(&batch, us), (&bare, us), ("aead", "us")], |v| {
                    v[0] / (v[1] + v[2])
                }),
            ),
            (
                "netcode-wt batch / netcode-udp batch",
                run.ratio(&[(&batch, us), (&batch_udp, us)], |v| v[0] / v[1]),
            ),
        ] {
            if !values.is_empty() {
                println!("| {name} | {k} | {} |", Spread::show(&values, 3));
            }
        }
    }
    println!();
}

fn connect_table(run: &Run) {
    const COLUMNS: [Column; 13] = [
        ("**connects/s (wall)**", "connects_per_s", 0),
        ("server CPU µs per connect", "server_us", 1),
        ("**the same less keep-alives (est.)**", "server_us_net", 1),
        ("server CPU use", "server_util", 2),
        ("kernel share", "server_kernel", 2),
        ("client CPU µs per connect", "client_us", 1),
        (
            "idle server µs per client-second",
            "idle_us_per_client_s",
            2,
        ),
        ("keep-alives' share (est.)", "keepalive_share", 3),
        ("UDP datagrams per connect", "udp_out_per_connect", 1),
        ("datagrams dropped, full buffers", "rcvbuf_errors", 0),
        (
            "of which at the server's QUIC socket",
            "server_socket_drops",
            0,
        ),
        ("others' CPU", "others_util", 2),
        ("failed (sum)", "failed", 0),
    ];
    let labels: Vec<&String> = run
        .order
        .iter()
        .filter(|l| l.starts_with("connect-"))
        .collect();
    if labels.is_empty() {
        return;
    }
    header("connects", &COLUMNS);
    for label in &labels {
        row(run, label, label, &COLUMNS);
    }
    println!();
    println!("| connects, ratio per round | clients | value |");
    println!("|---|---|---:|");
    for wt in labels.iter().filter(|l| l.starts_with("connect-wt")) {
        let udp = wt.replacen("connect-wt", "connect-udp", 1);
        let which = wt.trim_start_matches("connect-wt ");
        let ratios: [(&str, &str, bool); 3] = [
            ("server CPU per connect, wt / udp", "server_us", false),
            (
                "the same less keep-alives, wt / udp",
                "server_us_net",
                false,
            ),
            ("connects/s, udp / wt", "connects_per_s", true),
        ];
        for (name, key, inverse) in ratios {
            let values = run.ratio(&[(wt, key), (&udp, key)], |v| {
                if inverse { v[1] / v[0] } else { v[0] / v[1] }
            });
            if !values.is_empty() {
                println!("| {name} | {which} | {} |", Spread::show(&values, 1));
            }
        }
    }
    // Each tick-loop server against ours in the same loop (netcode-std at
    // the same tick, same clients), and the one C program on the reference
    // and on netcode-c.
    for peer in &labels {
        if let Some((server, ours)) = ours_in_the_same_loop(peer) {
            let name = format!("{server} / ours on netcode-std");
            connect_ratio_row(run, &name, peer, &ours);
        }
        if peer.contains(", c-reference ticking ") {
            let ours = peer.replacen(", c-reference ticking ", ", c-api ticking ", 1);
            let name = "the C reference / ours through the C API (one C program)";
            connect_ratio_row(run, name, peer, &ours);
        }
    }
    println!();
}

/// One row of the connection ratios: `server_us_net` of `label` over that
/// of `against`, round by round, when both ran.
fn connect_ratio_row(run: &Run, name: &str, label: &str, against: &str) {
    let values = run.ratio(
        &[(label, "server_us_net"), (against, "server_us_net")],
        |v| v[0] / v[1],
    );
    if !values.is_empty() {
        println!(
            "| server CPU per connect (idle loop left out), {name} | {} | {} |",
            label.trim_start_matches("connect-udp "),
            Spread::show(&values, 2)
        );
    }
}

/// For the label of a tick-loop peer's connection case, the peer's name
/// and the label of ours (netcode-std) in the same loop with the same
/// clients; `None` for any other label.
fn ours_in_the_same_loop(label: &str) -> Option<(&str, String)> {
    let (head, tail) = label.split_once(", ")?;
    let (concurrency, rest) = tail.split_once(", ")?;
    let (server, loop_and_rest) = rest.split_once(' ')?;
    if server == "netcode-std" || !loop_and_rest.starts_with("ticking every ") {
        return None;
    }
    Some((
        server,
        format!("{head}, {concurrency}, netcode-std {loop_and_rest}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(pairs: &[(&str, &str)]) -> Fields {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_connection_case_is_labelled_by_its_server_loop_history_and_churn() {
        let base = [
            ("case", "connect-udp"),
            ("clients", "2000"),
            ("concurrency", "128"),
        ];
        let ours = fields(&[&base[..], &[("server", "ours"), ("churn", "no")]].concat());
        assert_eq!(label(&ours), "connect-udp N=2000, 128 at a time");
        let history = fields(&[&base[..], &[("token_history", "yes")]].concat());
        assert_eq!(
            label(&history),
            "connect-udp N=2000, 128 at a time, token history"
        );
        let peer = fields(
            &[
                &base[..],
                &[
                    ("server", "c-reference"),
                    ("tick_ms", "10"),
                    ("churn", "yes"),
                ],
            ]
            .concat(),
        );
        assert_eq!(
            label(&peer),
            "connect-udp N=2000, 128 at a time, c-reference ticking every 10 ms, churn"
        );
    }

    #[test]
    fn a_peer_is_set_against_ours_in_the_same_loop_with_the_same_clients() {
        assert_eq!(
            ours_in_the_same_loop(
                "connect-udp N=2000, 128 at a time, c-reference ticking every 10 ms, churn"
            ),
            Some((
                "c-reference",
                "connect-udp N=2000, 128 at a time, netcode-std ticking every 10 ms, churn"
                    .to_string()
            ))
        );
        assert_eq!(
            ours_in_the_same_loop(
                "connect-udp N=1000, 128 at a time, renetcode ticking every 10 ms"
            ),
            Some((
                "renetcode",
                "connect-udp N=1000, 128 at a time, netcode-std ticking every 10 ms".to_string()
            ))
        );
        for not_a_peer in [
            "connect-udp N=2000, 128 at a time, netcode-std ticking every 10 ms, churn",
            "connect-udp N=2000, 256 at a time, token history",
            "connect-udp N=2000, 128 at a time, churn",
        ] {
            assert_eq!(ours_in_the_same_loop(not_a_peer), None, "{not_a_peer}");
        }
    }
}

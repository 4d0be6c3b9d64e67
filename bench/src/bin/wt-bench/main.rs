//! Server CPU per echoed payload over WebTransport, against UDP clients of
//! the same server and against a bare WebTransport datagram echo on the
//! same crate (the floor of this path), plus connections per second
//! (BENCHMARKS.md, "WebTransport"; `bench/scripts/webtransport.sh` runs
//! every case, interleaved, and summarizes them).
//!
//! ```text
//! wt-bench echo netcode-wt|netcode-udp|bare-wt [--clients 1] [--window 64] [--payload 100]
//!               [--warmup 20000] [--echoes 200000] [--echo next|batch] [--round 1]
//! wt-bench connect wt|udp [--clients 500] [--concurrency 64] [--hold-ms 1000] [--token-history FILE] [--round 1]
//!               [--server ours|netcode-std|renetcode|netcode-official|c-reference] [--churn true] [--tick-ms 1]
//! wt-bench rtt udp|webtransport|websocket [--pings 2000] [--interval-ms 5] [--payload 100] [--condition clean]
//! wt-bench aead [--iterations 2000000] [--round 1]
//! wt-bench summary FILE
//! wt-bench serve netcode|bare|relay [--slots 64] [--echo next|batch]      (the server process)
//! wt-bench serve netcode-std|renetcode|netcode-official [--slots 64] [--tick-ms 1]
//! ```
//!
//! Each measuring case starts its server as a process of its own (`serve`,
//! this same program) and runs the clients in this one, so the server's
//! CPU time is read exactly: the sum of `/proc/<pid>/task/*/schedstat`
//! (nanoseconds on a CPU, user and kernel) over the measured window, with
//! `/proc/<pid>/stat`'s utime and stime (clock ticks) beside it for the
//! user/kernel split. Every case prints one `RESULT` line of `key=value`
//! fields; `summary` reads a file of them and prints the tables with
//! medians, ranges and ratios. `server.rs`, `peer_servers.rs`, `echo.rs`,
//! `connect.rs` and `aead.rs` say what each measures.

mod aead;
mod announce;
mod connect;
mod echo;
mod options;
mod peer_servers;
mod rtt;
mod server;
mod summary;

use std::process::ExitCode;

use netcode_bench::cli::Options;

const USAGE: &str = "usage: wt-bench echo netcode-wt|netcode-udp|bare-wt|bare-wt-batch|bare-wt-select|relay-wt | connect wt|udp | rtt udp|webtransport|websocket | aead | summary FILE | serve netcode|bare|relay|netcode-std|renetcode|netcode-official  [--option value]...";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = args.split_first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(1);
    };
    // The commands that take a kind (or a file) first.
    let (kind, rest) = match command.as_str() {
        "aead" => (String::new(), rest),
        _ => match rest.split_first() {
            Some((kind, rest)) => (kind.clone(), rest),
            None => {
                eprintln!("{USAGE}");
                return ExitCode::from(1);
            }
        },
    };
    let options = match Options::parse(rest) {
        Ok(options) => options,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(1);
        }
    };
    let result = match command.as_str() {
        "echo" => echo::run(&kind, options),
        "connect" => connect::run(&kind, options),
        "rtt" => rtt::run(&kind, options),
        "aead" => aead::run(options),
        "summary" => summary::run(&kind),
        "serve" => server::serve(&kind, options),
        other => Err(format!("unknown command {other}\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("wt-bench {command} {kind}: {e}");
            ExitCode::from(1)
        }
    }
}

//! One case of one implementation, N times, for instruction counts and
//! times per operation (`netcode_bench::count` says how it is measured;
//! `benches/counts.rs` runs it).
//!
//! `netcode-count IMPL CASE N`, IMPL one of `ours` (netcode-proto on the
//! backend this build has; netcode-std for the loopback cases), `renetcode`
//! and `netcode-official`; CASE one of:
//!
//! * `send-100`, `send-1200`: a payload packet written through the client
//!   API (STANDARD.md "Payload packet");
//! * `receive-100`, `receive-1200`: one read through the server API, from a
//!   connected client, with a fresh sequence;
//! * `request`: a valid connection request from a new address with a new
//!   token, answered with a challenge;
//! * `garbage`: a 1078-byte datagram, request prefix then random bytes,
//!   dropped;
//! * `handshake`: token to connected, both sides, in memory;
//! * `token`: a connect token with one address, OS randomness;
//! * `tick-16`, `tick-256`, `tick-1024`, `tick-4096`: one server tick, N
//!   counting ticks (not operations): every one of that many connected
//!   clients has sent one 100-byte payload (made before, not measured), the
//!   server handles each datagram and then updates (keep-alives, timeouts);
//! * `loopback-100`, `loopback-1200`: over UDP on 127.0.0.1, the client
//!   sends a payload, the server's update reads it and the game takes it
//!   (the only packet path netcode-official offers: its packet functions
//!   are private).
//!
//! Prints `ns_per_op <float>`; a case an implementation has no public path
//! for exits 2 with `not offered`.

mod ours;
mod peers;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [implementation, case, n] = &args[..] else {
        eprintln!("usage: netcode-count IMPL CASE N");
        return ExitCode::from(1);
    };
    let Ok(n) = n.parse::<usize>() else {
        eprintln!("N must be a whole number, not {n}");
        return ExitCode::from(1);
    };
    let elapsed = match implementation.as_str() {
        "ours" => ours::run(case, n),
        "renetcode" => peers::renetcode(case, n),
        "netcode-official" => peers::official(case, n),
        other => {
            eprintln!("unknown implementation {other}");
            return ExitCode::from(1);
        }
    };
    match elapsed {
        Some(elapsed) => {
            netcode_bench::count::report(n, elapsed);
            ExitCode::SUCCESS
        }
        None => {
            eprintln!("not offered");
            ExitCode::from(2)
        }
    }
}

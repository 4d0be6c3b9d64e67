//! The counting program's cases run and check themselves (each asserts that
//! its operations did what they should: every payload read, one challenge
//! per request, every handshake connected, garbage unanswered), for every
//! implementation that offers them; and the C program's, built against the
//! C reference when `NETCODE_C_BENCH` names it and against netcode-c when
//! `NETCODE_C_API_BENCH` does (otherwise each test is ignored, with the
//! reason: see `build.rs`). Nothing is timed here.

use std::path::Path;

use netcode_bench::count::{CASES, Program};

/// Runs every case with 300 operations (more than one batch of requests
/// and handshakes; a tick case, 2 ticks); returns the cases the program
/// does not offer.
fn run_all(program: &Program<'_>) -> Vec<&'static str> {
    let mut not_offered = Vec::new();
    for case in CASES {
        let n = if case.starts_with("tick-") { 2 } else { 300 };
        match program.time(case, n) {
            Ok(ns) => assert!(ns > 0.0, "{case}: {ns} ns per operation"),
            Err(e) if e.contains("not offered") => not_offered.push(case),
            Err(e) => panic!("{case}: {e}"),
        }
    }
    not_offered
}

fn count() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_netcode-count"))
}

#[test]
fn ours_offers_every_case() {
    let ours = Program {
        exe: count(),
        args: &["ours"],
    };
    assert_eq!(run_all(&ours), Vec::<&str>::new());
}

#[test]
fn renetcode_offers_all_but_loopback_and_its_over_cap_tick() {
    let renet = Program {
        exe: count(),
        args: &["renetcode"],
    };
    assert_eq!(
        run_all(&renet),
        ["tick-4096", "loopback-100", "loopback-1200"]
    );
}

#[test]
fn official_offers_tokens_and_loopback() {
    let official = Program {
        exe: count(),
        args: &["netcode-official"],
    };
    let not_offered = run_all(&official);
    let offered: Vec<_> = CASES
        .into_iter()
        .filter(|c| !not_offered.contains(c))
        .collect();
    assert_eq!(offered, ["token", "loopback-100", "loopback-1200"]);
}

#[test]
fn an_unknown_case_is_refused() {
    let ours = Program {
        exe: count(),
        args: &["ours"],
    };
    let refused = ours.time("no-such-case", 1).unwrap_err();
    assert!(refused.contains("not offered"), "{refused}");
}

#[test]
#[cfg_attr(
    not(netcode_c_bench),
    ignore = "NETCODE_C_BENCH unset: name a build of bench/c/netcode_c_bench.c to run this"
)]
fn the_c_reference_offers_every_case_but_ticks_over_its_cap() {
    let Some(exe) = std::env::var_os("NETCODE_C_BENCH") else {
        panic!("NETCODE_C_BENCH is not set: point it at a build of bench/c/netcode_c_bench.c");
    };
    let c = Program {
        exe: Path::new(&exe),
        args: &[],
    };
    assert_eq!(run_all(&c), ["tick-1024", "tick-4096"]);
}

#[test]
#[cfg_attr(
    not(netcode_c_api_bench),
    ignore = "NETCODE_C_API_BENCH unset: `bash bench/scripts/c-api.sh --build` builds bench/c/netcode_c_bench.c against netcode-c and prints its path"
)]
fn ours_through_the_c_api_offers_the_same_cases_as_the_reference() {
    let Some(exe) = std::env::var_os("NETCODE_C_API_BENCH") else {
        panic!(
            "NETCODE_C_API_BENCH is not set: point it at bench/c/netcode_c_bench.c built against netcode-c"
        );
    };
    let c = Program {
        exe: Path::new(&exe),
        args: &[],
    };
    assert_eq!(run_all(&c), ["tick-1024", "tick-4096"]);
}

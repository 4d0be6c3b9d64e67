//! Our example programs against the C reference implementation's `server`
//! and `client` programs, over 127.0.0.1 UDP.
//!
//! The reference is not part of this repository: build its `server` and
//! `client` yourself and name them in `NETCODE_C_SERVER` and
//! `NETCODE_C_CLIENT`. Without them these tests are reported as ignored,
//! with the reason (see `examples/build.rs`).
//!
//! Both sides use the reference programs' fixed protocol id and private key,
//! and 1200-byte payloads whose byte i is i % 256; the reference programs
//! abort on any payload that differs, and ours exit non-zero.

use std::net::UdpSocket;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::common::Program;

/// The path in `var`, which the build saw set (run with
/// `--include-ignored` and it unset, and this says so).
fn reference_binary(var: &str) -> PathBuf {
    match std::env::var_os(var) {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => panic!("{var} is not set: point it at a built C reference program"),
    }
}

/// A port that was free a moment ago on 127.0.0.1 (the reference programs
/// take a fixed address, so one must be chosen for them).
fn free_port() -> u16 {
    let socket = UdpSocket::bind("127.0.0.1:0").expect("bind an ephemeral port");
    socket.local_addr().expect("local address").port()
}

#[test]
#[cfg_attr(
    not(netcode_c_server),
    ignore = "NETCODE_C_SERVER unset: name a built C reference server to run this"
)]
fn our_client_against_the_reference_server() {
    let c_server = reference_binary("NETCODE_C_SERVER");
    let address = format!("127.0.0.1:{}", free_port());
    let mut server = Program::start(
        "reference server",
        c_server.to_str().expect("utf-8 path"),
        &[&address],
    );
    // The reference server prints nothing when ready; give it a moment.
    std::thread::sleep(Duration::from_millis(300));
    let mut client = Program::start(
        "our client",
        env!("CARGO_BIN_EXE_netcode-client"),
        &[&address, "--seconds", "3"],
    );
    let status = client.finish();
    assert!(
        status.success(),
        "our client failed ({status}):\n{}",
        client.transcript()
    );
    assert!(
        matches!(server.child.try_wait(), Ok(None)),
        "the reference server exited (it aborts on a bad payload):\n{}",
        server.transcript()
    );
}

#[test]
#[cfg_attr(
    not(netcode_c_client),
    ignore = "NETCODE_C_CLIENT unset: name a built C reference client to run this"
)]
fn the_reference_client_against_our_server() {
    let c_client = reference_binary("NETCODE_C_CLIENT");
    let address = format!("127.0.0.1:{}", free_port());
    let mut server = Program::start(
        "our server",
        env!("CARGO_BIN_EXE_netcode-server"),
        &[&address, "--seconds", "4"],
    );
    server.line_with("listening on");
    let mut client = Program::start(
        "reference client",
        c_client.to_str().expect("utf-8 path"),
        &[&address],
    );
    let status = server.finish();
    assert!(
        status.success(),
        "our server failed ({status}):\n{}",
        server.transcript()
    );
    // The reference client runs until its server goes away; it must not
    // have aborted on one of our payloads before that.
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(1) {
        if let Ok(Some(status)) = client.child.try_wait() {
            assert!(
                status.success() || status.code().is_some(),
                "the reference client died ({status}):\n{}",
                client.transcript()
            );
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

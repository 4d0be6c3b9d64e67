//! Ctrl-C ends the server and client programs the way the C reference's
//! do: an interrupted client disconnects, so its server reports "client
//! disconnected" rather than timing it out 5 s later; an interrupted server
//! stops, so its client is told at once rather than timing out; each
//! interrupted program exits 0, or by its `--seconds` verdict when it was
//! given one. The mio server, asleep with no deadline, stops on SIGTERM.
//! Unix only: the tests send the signals with kill(2). Every wait is
//! bounded, and every server takes a free port and prints it.
#![cfg(unix)]

use std::time::{Duration, Instant};

use crate::common::Program;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use netcode_examples::CONNECT_TOKEN_TIMEOUT;

/// The client's connection timeout: a disconnect reported later than this
/// after the signal could be a timeout.
const TIMEOUT: Duration = Duration::from_secs(CONNECT_TOKEN_TIMEOUT as u64);

/// Sends `signal` to `program`.
fn send(program: &Program, signal: Signal) {
    let pid = i32::try_from(program.child.id()).expect("a pid fits in i32");
    kill(Pid::from_raw(pid), signal).expect("send the signal");
}

/// Our server on a free port of 127.0.0.1, with `extra` arguments, and
/// the address it prints.
fn server(program: &'static str, path: &str, extra: &[&str]) -> (Program, String) {
    let args: Vec<&str> = ["127.0.0.1:0"].iter().chain(extra).copied().collect();
    let mut server = Program::start(program, path, &args);
    let line = server.line_with("listening on");
    let address = line.rsplit(' ').next().unwrap_or_default().to_string();
    assert!(
        address.starts_with("127.0.0.1:") && !address.ends_with(":0"),
        "{line}"
    );
    (server, address)
}

/// Both programs' output, for a failure message.
fn transcripts(server: &Program, client: &Program) -> String {
    format!(
        "--- server\n{}\n--- client\n{}",
        server.transcript(),
        client.transcript()
    )
}

#[test]
fn an_interrupted_client_disconnects_at_once() {
    let (mut server, address) = server("server", env!("CARGO_BIN_EXE_netcode-server"), &[]);
    let mut client = Program::start("client", env!("CARGO_BIN_EXE_netcode-client"), &[&address]);
    client.line_with("connected as client");
    server.line_with("client 0 connected");

    let signalled = Instant::now();
    send(&client, Signal::SIGINT);
    let line = server.line_with("client 0 disconnected");
    let reported = signalled.elapsed();
    let client_status = client.finish();
    println!("the server reported the interrupted client's disconnect {reported:?} after SIGINT");
    let both = transcripts(&server, &client);
    assert_eq!(
        line, "client 0 disconnected (client disconnected)",
        "not the client's own disconnect:\n{both}"
    );
    assert!(reported < TIMEOUT, "reported after {reported:?}:\n{both}");
    assert_eq!(client_status.code(), Some(0), "{both}");
    // Standard output alone: the log's lines on standard error may fall
    // anywhere between these in the merged transcript.
    let client_out = client.stdout();
    assert!(
        client_out.contains("\ninterrupted\nsent ")
            && client_out.ends_with("\nclient state: connected -> disconnected"),
        "{both}"
    );

    // The server, interrupted in turn, prints its summary and exits 0.
    send(&server, Signal::SIGINT);
    let server_status = server.finish();
    let both = transcripts(&server, &client);
    assert_eq!(server_status.code(), Some(0), "{both}");
    assert!(server.transcript().contains("\nshutting down: "), "{both}");
}

#[test]
fn an_interrupted_server_tells_its_client_at_once() {
    let (mut server, address) = server("server", env!("CARGO_BIN_EXE_netcode-server"), &[]);
    let mut client = Program::start("client", env!("CARGO_BIN_EXE_netcode-client"), &[&address]);
    // By then the client has sent a payload too: it sends each frame it is
    // connected, before it reads.
    client.line_with("first payload received");
    server.line_with("client 0 connected");

    let signalled = Instant::now();
    send(&server, Signal::SIGINT);
    let line = client.line_with("client state: connected ->");
    let reported = signalled.elapsed();
    let server_status = server.finish();
    let client_status = client.finish();
    println!("the client reported the interrupted server's disconnect {reported:?} after SIGINT");
    let both = transcripts(&server, &client);
    assert_eq!(
        line, "client state: connected -> disconnected",
        "not the server's disconnect:\n{both}"
    );
    assert!(reported < TIMEOUT, "reported after {reported:?}:\n{both}");
    assert_eq!(server_status.code(), Some(0), "{both}");
    let server_out = server.stdout();
    assert!(
        server_out.contains("\ninterrupted\nshutting down: "),
        "{both}"
    );
    assert!(
        server_out.contains("\nclient 0 disconnected (server disconnected)"),
        "{both}"
    );
    // The connection ended by itself for the client: connected, payloads
    // both ways, so it exits 0 by its full verdict.
    assert_eq!(client_status.code(), Some(0), "{both}");
}

#[test]
fn an_interrupted_run_with_seconds_keeps_its_verdict() {
    let (mut server, _) = server(
        "server",
        env!("CARGO_BIN_EXE_netcode-server"),
        &["--seconds", "20"],
    );
    send(&server, Signal::SIGINT);
    let status = server.finish();
    let out = server.transcript();
    assert_eq!(status.code(), Some(1), "{out}");
    assert!(server.stdout().contains("\ninterrupted\n"), "{out}");
    assert!(
        out.contains("\nstderr: error: no connection was made"),
        "{out}"
    );
}

#[test]
fn an_idle_mio_server_wakes_and_stops_on_sigterm() {
    // With no client, the loop sleeps with no deadline: the signal must
    // wake it (where the system interrupts the main thread's wait, as
    // Linux does, that alone does; elsewhere the waker does).
    let (mut server, _) = server("mio_server", env!("CARGO_BIN_EXE_netcode-mio-server"), &[]);
    let signalled = Instant::now();
    send(&server, Signal::SIGTERM);
    let status = server.finish();
    println!(
        "the idle mio server exited {:?} after SIGTERM",
        signalled.elapsed()
    );
    let out = server.transcript();
    assert_eq!(status.code(), Some(0), "{out}");
    assert!(
        server
            .stdout()
            .contains("\ninterrupted\nshutting down after "),
        "{out}"
    );
}

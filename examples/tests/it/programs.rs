//! The example programs, run as the `netcode-*` binaries that share their
//! source: the server and client against each other for three seconds,
//! the one-process demo, the token printer, and a client with no server.
//! Every wait is bounded; the server picks a free port and prints it.

use crate::common::Program;

use netcode_examples::{CONNECT_TOKEN_TIMEOUT, PROTOCOL_ID, from_hex};
use netcode_std::proto::ConnectToken;

/// Our server and our client, `--seconds 3` each, on a free port.
#[test]
fn server_and_client_exchange_payloads_for_three_seconds() {
    let mut server = Program::start(
        "server",
        env!("CARGO_BIN_EXE_netcode-server"),
        &["127.0.0.1:0", "--seconds", "3"],
    );
    let line = server.line_with("listening on");
    let address = line.rsplit(' ').next().unwrap().to_string();
    assert!(
        address.starts_with("127.0.0.1:") && !address.ends_with(":0"),
        "{line}"
    );

    let mut client = Program::start(
        "client",
        env!("CARGO_BIN_EXE_netcode-client"),
        &[&address, "--seconds", "3"],
    );
    let client_status = client.finish();
    let server_status = server.finish();
    let transcripts = format!(
        "--- server\n{}\n--- client\n{}",
        server.transcript(),
        client.transcript()
    );
    assert!(client_status.success(), "client failed\n{transcripts}");
    assert!(server_status.success(), "server failed\n{transcripts}");
    let client_out = client.transcript();
    assert!(
        client_out.contains("client state: sending connection response -> connected"),
        "{transcripts}"
    );
    assert!(
        server.transcript().contains("client 0 connected"),
        "{transcripts}"
    );
}

/// The README's demo command.
#[test]
fn client_server_demo_exits_zero() {
    let mut demo = Program::start(
        "client_server",
        env!("CARGO_BIN_EXE_netcode-client-server"),
        &[],
    );
    let status = demo.finish();
    let out = demo.transcript();
    assert!(status.success(), "{out}");
    assert!(out.contains("connected in"), "{out}");
    // The README says ten payloads each way: exactly ten.
    assert!(
        out.contains("10 payloads reached the server, 10 the client"),
        "{out}"
    );
    assert!(
        out.contains("client state: connected -> disconnected"),
        "{out}"
    );
}

/// A token from the token program reads back with what was asked.
#[test]
fn token_program_prints_a_readable_token() {
    let mut token = Program::start(
        "token",
        env!("CARGO_BIN_EXE_netcode-token"),
        &[
            "--client-id",
            "0x2a",
            "--expire",
            "45",
            "127.0.0.1:40000",
            "[::1]:40001",
        ],
    );
    let line = token.line_with("");
    assert!(token.finish().success(), "{}", token.transcript());
    let bytes = from_hex(line.trim()).unwrap();
    let token = ConnectToken::read(&bytes).unwrap();
    assert_eq!(token.protocol_id, PROTOCOL_ID);
    assert_eq!(token.expire_timestamp - token.create_timestamp, 45);
    assert_eq!(token.timeout_seconds, CONNECT_TOKEN_TIMEOUT);
    let addresses: Vec<String> = token
        .server_addresses
        .iter()
        .map(|a| a.to_string())
        .collect();
    assert_eq!(addresses, ["127.0.0.1:40000", "[::1]:40001"]);

    let mut bad = Program::start(
        "token",
        env!("CARGO_BIN_EXE_netcode-token"),
        &["127.0.0.1:40k"],
    );
    assert!(!bad.finish().success());
    assert!(
        bad.transcript()
            .contains("stderr: error: public server address 0"),
        "{}",
        bad.transcript()
    );
}

/// With no server, the client gives up after `--seconds` with one error
/// line, followed by what an unanswered connection request can mean.
#[test]
fn client_without_a_server_fails_with_a_reason() {
    let port = {
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        socket.local_addr().unwrap().port()
    };
    let address = format!("127.0.0.1:{port}");
    let mut client = Program::start(
        "client",
        env!("CARGO_BIN_EXE_netcode-client"),
        &[&address, "--seconds", "1"],
    );
    let status = client.finish();
    let out = client.transcript();
    assert!(!status.success(), "{out}");
    let errors = client.errors();
    let error_lines: Vec<&String> = errors.iter().filter(|l| l.contains("error:")).collect();
    assert_eq!(error_lines.len(), 1, "{out}");
    assert!(
        error_lines[0].starts_with(&format!(
            "error: no connection was made (sending connection request): no server answered the connection requests to {address}."
        )),
        "{out}"
    );
    let meaning = errors.join("\n");
    for cause in ["no server is running there", "protocol id", "restart rule"] {
        assert!(meaning.contains(cause), "no {cause:?}:\n{out}");
    }
}

/// The mio event-loop server with 32 netcode-mio clients in its own loop.
#[test]
fn mio_server_with_its_own_clients_exits_zero() {
    let mut server = Program::start(
        "mio_server",
        env!("CARGO_BIN_EXE_netcode-mio-server"),
        &["127.0.0.1:0", "--seconds", "2", "--clients", "32"],
    );
    let status = server.finish();
    let out = server.transcript();
    assert!(status.success(), "{out}");
    assert!(
        out.contains("32 of 32 clients connected and got correct echoes"),
        "{out}"
    );
}

/// Our std client against the mio server, which echoes its payloads.
#[test]
fn client_against_the_mio_server() {
    let mut server = Program::start(
        "mio_server",
        env!("CARGO_BIN_EXE_netcode-mio-server"),
        &["127.0.0.1:0", "--seconds", "3"],
    );
    let line = server.line_with("listening on");
    let address = line.rsplit(' ').next().unwrap().to_string();
    let mut client = Program::start(
        "client",
        env!("CARGO_BIN_EXE_netcode-client"),
        &[&address, "--seconds", "2"],
    );
    let client_status = client.finish();
    let server_status = server.finish();
    let transcripts = format!(
        "--- mio server\n{}\n--- client\n{}",
        server.transcript(),
        client.transcript()
    );
    assert!(client_status.success(), "client failed\n{transcripts}");
    assert!(server_status.success(), "server failed\n{transcripts}");
    assert!(
        server.transcript().contains("client 0 connected"),
        "{transcripts}"
    );
}

//! The restart rule as a user meets it, with the `server` and `client`
//! examples run as the `netcode-server` and `netcode-client` binaries: a
//! client whose connect token was issued in the second the server started
//! is refused for as long as it tries; the server's log says why, and the
//! client's `error:` line and the lines under it name the restart rule
//! among the causes. A token issued one second later connects.
//!
//! A script that starts both programs at once gets such a token only when
//! the client wins a race with the server's start. The test does not race:
//! the server prints the first second of issue it admits
//! (`admitting connect tokens issued from unix second N on`, from
//! `Server::start_nowait`; its start second is N - 1), and the client
//! stamps its token with `--issued-at N-1`. A server sees nothing of a
//! token's issue but its timestamps, so this token is, to it, exactly one
//! issued in its start second, however late the client runs. The token
//! expires 30 s after that second, long after the client's 5 s connection
//! timeout has ended the attempt, so no other rule can refuse it first.

use crate::common::Program;

const SERVER: &str = env!("CARGO_BIN_EXE_netcode-server");
const CLIENT: &str = env!("CARGO_BIN_EXE_netcode-client");

/// What the server logs for each request the restart rule refuses.
const REFUSAL: &str = "its connect token may have been issued in or before the second this server started (the restart rule: the client needs a token issued later)";

/// The server example on a free port of 127.0.0.1 for `seconds`: the
/// program, the address it printed and the first unix second of issue it
/// admits.
fn server(seconds: &str) -> (Program, String, u64) {
    let mut server = Program::start("server", SERVER, &["127.0.0.1:0", "--seconds", seconds]);
    let prefix = "admitting connect tokens issued from unix second ";
    let line = server.line_with(prefix);
    let admitted_from = line
        .strip_prefix(prefix)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|second| second.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("no second in {line:?}"));
    let line = server.line_with("listening on");
    let address = line.rsplit(' ').next().unwrap_or_default().to_owned();
    assert!(
        address.starts_with("127.0.0.1:") && !address.ends_with(":0"),
        "{line}"
    );
    (server, address, admitted_from)
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
fn a_token_issued_in_the_servers_start_second_is_refused_and_both_sides_say_why() {
    let (mut server, address, admitted_from) = server("20");
    let start_second = admitted_from - 1;

    let mut client = Program::start(
        "client",
        CLIENT,
        &[&address, "--issued-at", &start_second.to_string()],
    );
    // No --seconds: the client stops when its attempt ends, CONNECT_TOKEN_TIMEOUT
    // after its first request.
    let status = client.finish();
    assert_eq!(status.code(), Some(1), "{}", transcripts(&server, &client));
    assert!(
        client.stdout().contains(&format!(
            "the token is issued at unix second {start_second}\nconnecting to {address}"
        )),
        "{}",
        transcripts(&server, &client)
    );
    assert!(
        client
            .stdout()
            .contains("client state: sending connection request -> connection request timed out"),
        "{}",
        transcripts(&server, &client)
    );

    // The client: one `error:` line, then the causes, the restart rule
    // among them with what to do.
    let errors = client.errors();
    let error_lines: Vec<&String> = errors.iter().filter(|l| l.contains("error:")).collect();
    assert_eq!(error_lines.len(), 1, "{}", transcripts(&server, &client));
    assert!(
        error_lines[0].starts_with(&format!(
            "error: no connection was made (connection request timed out): no server answered the connection requests to {address}."
        )),
        "{}",
        transcripts(&server, &client)
    );
    assert!(
        errors.iter().any(|line| line.contains(
            "the token was issued in or before the second the server started (the restart rule)"
        ) && line
            .contains("get a new one issued after the server printed `server listening on`")),
        "{}",
        transcripts(&server, &client)
    );

    // The server: the refusal, with its reason in words, in its log.
    let refusal = server.line_with("refused connection from 127.0.0.1:");
    assert!(
        refusal.starts_with("stderr: ") && refusal.ends_with(REFUSAL),
        "{refusal:?}\n{}",
        transcripts(&server, &client)
    );
    assert!(
        !server.stdout().contains("client 0 connected ("),
        "{}",
        transcripts(&server, &client)
    );

    // Positive control: the same client with a token issued the second
    // after connects, so the refusal above was the issue second's doing.
    let mut later = Program::start(
        "client",
        CLIENT,
        &[
            &address,
            "--issued-at",
            &admitted_from.to_string(),
            "--seconds",
            "2",
        ],
    );
    let status = later.finish();
    assert!(
        status.success(),
        "a token issued in second {admitted_from} did not connect:\n--- server\n{}\n--- client\n{}",
        server.transcript(),
        later.transcript()
    );
    assert!(
        server.stdout().contains("client 0 connected ("),
        "{}",
        server.transcript()
    );
}

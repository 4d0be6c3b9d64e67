//! The client example with `--matcher`, run as the `netcode-client`
//! binary against the real matcher (`netcode_matcher::router`, served
//! in-process on a free loopback port, configured with the quick start's
//! committed secret and key files) and the `netcode-server` binary: it
//! gets its token, connects and exchanges payloads; a wrong secret and a
//! matcher that is down fail with a clear error and exit 1; wrong
//! command lines exit 2; with `--reconnect`, a client whose server is
//! killed (SIGKILL) and restarted on its token history file is back,
//! on a fresh token, within a bound. Also: the quick start's key file is
//! the reference's test key, and the README's matcher command is one the
//! matcher accepts.

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::common::Program;
use clap::Parser;
use netcode_examples::{PRIVATE_KEY, USAGE_ERROR};
use netcode_matcher::{Options, router};
use netcode_std::proto::Key;
use tokio::sync::oneshot;

/// The workspace's root, where the README's commands run.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// The quick start's secret file, as the README names it.
const SECRET_FILE: &str = "examples/quickstart/secret";

/// The quick start's key file, as the README names it.
const KEY_FILE: &str = "examples/quickstart/key";

/// A matcher serving on a free loopback port on a thread of its own;
/// stopped when dropped.
struct Matcher {
    url: String,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Matcher {
    /// Reads `options` (the matcher's command line without the program
    /// name) as the matcher program does, and serves.
    fn start(options: &[String]) -> Self {
        let options = Options::try_parse_from(
            std::iter::once("matcher".to_owned()).chain(options.iter().cloned()),
        )
        .unwrap_or_else(|e| panic!("matcher options {options:?}: {e}"));
        let matcher = Arc::new(options.load().expect("the matcher's files"));
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = oneshot::channel::<()>();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let thread = std::thread::spawn(move || {
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                axum::serve(listener, router(matcher, None))
                    .with_graceful_shutdown(async move {
                        let _ = stopped.await;
                    })
                    .await
                    .unwrap();
            });
        });
        Self {
            url,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// A matcher with the quick start's files, for `server`.
    fn quick_start(server: &str) -> Self {
        let file = |name: &str| root().join(name).display().to_string();
        Self::start(&[
            "--listen".into(),
            "127.0.0.1:0".into(),
            "--secret-file".into(),
            file(SECRET_FILE),
            "--key-file".into(),
            file(KEY_FILE),
            "--server".into(),
            server.into(),
            "--protocol-id".into(),
            "0x1122334455667788".into(),
        ])
    }
}

impl Drop for Matcher {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The client binary with `args`.
fn client(args: &[&str]) -> Program {
    Program::start("client", env!("CARGO_BIN_EXE_netcode-client"), args)
}

/// The lines of a finished program's standard error but its log's `info`
/// lines: its `error:` lines and any warning.
fn errors(program: &Program) -> Vec<String> {
    program.errors()
}

/// A test's own file holding `text`.
fn file(test: &str, text: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(test);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("secret");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn client_gets_its_token_from_the_matcher_and_exchanges_payloads() {
    let mut server = Program::start(
        "server",
        env!("CARGO_BIN_EXE_netcode-server"),
        &["127.0.0.1:0"],
    );
    let line = server.line_with("listening on");
    let address = line.rsplit(' ').next().unwrap().to_owned();
    let matcher = Matcher::quick_start(&address);
    let secret = root().join(SECRET_FILE).display().to_string();

    let mut client = client(&[
        "--matcher",
        &matcher.url,
        "--secret-file",
        &secret,
        "--client-id",
        "0x2a",
        "--seconds",
        "2",
    ]);
    let status = client.finish();
    let out = client.transcript();
    let transcripts = format!("--- client\n{out}\n--- server\n{}", server.transcript());
    assert!(status.success(), "client failed\n{transcripts}");
    for needle in [
        "got a connect token for client id 000000000000002a: expires in 30 s, timeout 5 s",
        &format!("servers {address}"),
        "client state: sending connection response -> connected",
        "first payload received",
    ] {
        assert!(out.contains(needle), "no {needle:?}\n{transcripts}");
    }
    assert!(errors(&client).is_empty(), "{transcripts}");
    assert!(
        server
            .transcript()
            .contains("client 0 connected (id 000000000000002a"),
        "{transcripts}"
    );
}

#[test]
fn a_wrong_secret_fails_with_401_and_exit_1() {
    // No netcode server is needed: the matcher refuses before any token.
    let matcher = Matcher::quick_start("127.0.0.1:40000");
    let wrong = file("wrong-secret", "not the quick start secret\n");
    let mut client = client(&[
        "--matcher",
        &matcher.url,
        "--secret-file",
        &wrong.display().to_string(),
        "--seconds",
        "1",
    ]);
    let status = client.finish();
    let out = client.transcript();
    assert_eq!(status.code(), Some(1), "{out}");
    let errors = errors(&client);
    assert_eq!(errors.len(), 1, "{out}");
    assert!(
        errors[0].starts_with(
            "error: no connect token: the matcher refused the secret (401 Unauthorized)"
        ),
        "{out}"
    );
    assert!(!out.contains("connected"), "{out}");
}

#[test]
fn a_matcher_that_is_down_fails_with_a_clear_error() {
    let closed = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let secret = root().join(SECRET_FILE).display().to_string();
    let url = format!("http://{closed}");
    let mut client = client(&["--matcher", &url, "--secret-file", &secret]);
    let status = client.finish();
    let out = client.transcript();
    assert_eq!(status.code(), Some(1), "{out}");
    let errors = errors(&client);
    assert_eq!(errors.len(), 1, "{out}");
    assert!(
        errors[0].starts_with(&format!(
            "error: no connect token: cannot reach the matcher at {url}/token: connection refused"
        )),
        "{out}"
    );
}

#[test]
fn matcher_options_go_together() {
    let secret = root().join(SECRET_FILE).display().to_string();
    let url = "http://127.0.0.1:9";
    for (args, needle) in [
        (vec!["--matcher", url], "--matcher needs --secret-file PATH"),
        (
            vec!["--secret-file", &secret],
            "--secret-file goes with --matcher URL",
        ),
        (
            vec![
                "127.0.0.1:40000",
                "--matcher",
                url,
                "--secret-file",
                &secret,
            ],
            "a SERVER_ADDRESS does not go with --matcher",
        ),
        (vec!["--client-id", "0xzz"], "--client-id: \"0xzz\""),
    ] {
        let mut program = client(&args);
        let status = program.finish();
        let out = program.transcript();
        assert_eq!(
            status.code(),
            Some(i32::from(USAGE_ERROR)),
            "{args:?}\n{out}"
        );
        let errors = errors(&program);
        assert_eq!(errors.len(), 1, "{args:?}\n{out}");
        assert!(errors[0].contains(needle), "{args:?}\n{out}");
    }

    let missing = root().join("examples/quickstart/no-such-file");
    let mut program = client(&[
        "--matcher",
        url,
        "--secret-file",
        &missing.display().to_string(),
    ]);
    let status = program.finish();
    let out = program.transcript();
    assert_eq!(status.code(), Some(1), "{out}");
    assert!(
        errors(&program)
            .iter()
            .any(|e| e.starts_with("error: cannot read the secret file")),
        "{out}"
    );
}

#[test]
fn the_quick_start_files_are_the_reference_test_key_and_a_secret() {
    let key_text = std::fs::read_to_string(root().join(KEY_FILE)).unwrap();
    let key: Key = key_text.trim().parse().expect("64 hex digits");
    assert_eq!(key.as_bytes(), &PRIVATE_KEY);
    let secret = std::fs::read_to_string(root().join(SECRET_FILE)).unwrap();
    assert!(!secret.trim().is_empty());
}

/// The `cargo run -p netcode-matcher -- …` line of the README's quick
/// start, parsed and loaded as the matcher program would from the
/// workspace root: the options it names exist and its files read.
#[test]
fn the_readme_quick_start_matcher_command_is_accepted() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let section = readme
        .split("## Quick start: matcher → server → client")
        .nth(1)
        .expect("a quick start section");
    let command = section
        .lines()
        .find(|l| l.starts_with("cargo run -p netcode-matcher -- "))
        .expect("the matcher command");
    let args: Vec<String> = command
        .split_whitespace()
        .skip_while(|word| *word != "--")
        .skip(1)
        .map(|word| {
            if word.starts_with("examples/") {
                root().join(word).display().to_string()
            } else {
                word.to_owned()
            }
        })
        .collect();
    let options = Options::try_parse_from(std::iter::once("matcher".to_owned()).chain(args))
        .unwrap_or_else(|e| panic!("{command}: {e}"));
    options.load().unwrap_or_else(|e| panic!("{command}: {e}"));
    let servers: Vec<SocketAddr> = options.servers.clone();
    assert_eq!(servers, ["127.0.0.1:40000".parse::<SocketAddr>().unwrap()]);
    assert_eq!(options.protocol_ids, [netcode_examples::PROTOCOL_ID]);
}

/// How long a client with `--reconnect` may take to be back after its
/// server is killed and restarted at once: the token's 2 s timeout (the
/// client learns the server is gone), the first backoff (at most 250 ms),
/// a fresh token, and the handshake, with room for a loaded machine.
const BACK_WITHIN: Duration = Duration::from_secs(6);

#[test]
fn a_reconnecting_client_is_back_after_its_server_is_killed_and_restarted() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("reconnect");
    std::fs::create_dir_all(&dir).unwrap();
    let history = dir.join("history");
    let _ = std::fs::remove_file(&history);
    let history = history.display().to_string();
    let server_args = |address: &str| {
        vec![
            address.to_owned(),
            "--token-history".into(),
            history.clone(),
        ]
    };
    let start = |address: &str| {
        let args = server_args(address);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        Program::start("server", env!("CARGO_BIN_EXE_netcode-server"), &args)
    };
    let mut server = start("127.0.0.1:0");
    let line = server.line_with("listening on");
    let address = line.rsplit(' ').next().unwrap().to_owned();
    let file = |name: &str| root().join(name).display().to_string();
    let matcher = Matcher::start(&[
        "--listen".into(),
        "127.0.0.1:0".into(),
        "--secret-file".into(),
        file(SECRET_FILE),
        "--key-file".into(),
        file(KEY_FILE),
        "--server".into(),
        address.clone(),
        "--protocol-id".into(),
        "0x1122334455667788".into(),
        "--timeout".into(),
        "2".into(),
    ]);
    let secret = file(SECRET_FILE);
    let mut client = client(&[
        "--matcher",
        &matcher.url,
        "--secret-file",
        &secret,
        "--reconnect",
        "--seconds",
        "7",
    ]);
    client.line_with("first payload received");

    // SIGKILL, then at once a new server on the same port and history.
    server.child.kill().unwrap();
    let _ = server.finish();
    let mut restarted = start(&address);
    restarted.line_with("listening on");
    let since_restart = Instant::now();
    let back = client.line_with("connected after");
    let took = since_restart.elapsed();
    restarted.line_with("connected");
    let status = client.finish();
    let out = client.transcript();
    let transcripts = format!(
        "--- client\n{out}\n--- first server\n{}\n--- restarted server\n{}",
        server.transcript(),
        restarted.transcript()
    );
    assert!(status.success(), "{transcripts}");
    assert!(
        took < BACK_WITHIN,
        "back after {took:?}: {back}\n{transcripts}"
    );
    for needle in [
        "connection ended (connection timed out)",
        "reconnect attempt 1: a fresh token",
    ] {
        assert!(out.contains(needle), "no {needle:?}\n{transcripts}");
    }
    // A token per attempt, from the matcher: two asks at least.
    assert!(
        out.matches("asking the matcher").count() >= 2,
        "{transcripts}"
    );
    println!("back {took:?} after the restart");
}

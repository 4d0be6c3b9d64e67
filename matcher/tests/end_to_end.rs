//! The matcher program end to end, over loopback HTTP with a real client
//! (ureq): a fetched token, decoded, connects a netcode client to a netcode
//! server of the fleet and payloads flow; the wrong secret gets 401, a
//! malformed request 400, and none of it makes the program fall over.
//! Also `--help`, and bad configuration reported as an error.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use netcode_tokio::proto::ConnectToken;
use netcode_tokio::{Client, ClientState, Incoming, Key, Server, ServerConfig};

const PROTOCOL_ID: u64 = 0x1122_3344_5566_7788;
const KEY: [u8; 32] = [0x3c; 32];
const SECRET: &str = "correct horse battery staple";
/// Every wait gives up after this long.
const LIMIT: Duration = Duration::from_secs(10);

/// Writes the secret and key files of test `name`; returns their paths.
fn files(name: &str, key_text: &str) -> (PathBuf, PathBuf) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let (secret, key) = (dir.join("secret"), dir.join("key"));
    std::fs::write(&secret, format!("{SECRET}\n")).unwrap();
    std::fs::write(&key, key_text).unwrap();
    (secret, key)
}

fn key_hex() -> String {
    Key::from_bytes(KEY).to_hex().to_string()
}

fn matcher() -> Command {
    Command::new(env!("CARGO_BIN_EXE_matcher"))
}

/// The matcher program, running; killed when dropped.
struct Running {
    child: Child,
    url: String,
}

impl Running {
    /// Starts the matcher for test `name`, listing `servers`.
    fn start(name: &str, servers: &[SocketAddr]) -> Self {
        let (secret, key) = files(name, &key_hex());
        let mut command = matcher();
        command
            .args([
                "--listen",
                "127.0.0.1:0",
                "--protocol-id",
                "0x1122334455667788",
            ])
            .arg("--secret-file")
            .arg(&secret)
            .arg("--key-file")
            .arg(&key);
        for server in servers {
            command.args(["--server", &server.to_string()]);
        }
        let mut child = command.stdout(Stdio::piped()).spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        Self { child, url }
    }

    /// Whether the program is still running.
    fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP answer: status, `WWW-Authenticate`, body.
#[derive(Debug)]
struct Answer {
    status: u16,
    authenticate: Option<String>,
    body: String,
}

/// Sends `method path` with `authorization` and `body` to `url`.
fn http(url: &str, method: &str, path: &str, authorization: Option<&str>, body: &str) -> Answer {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let url = format!("{url}{path}");
    let mut response = match method {
        "POST" => {
            let mut request = agent.post(&url).content_type("application/json");
            if let Some(value) = authorization {
                request = request.header("Authorization", value);
            }
            request.send(body)
        }
        _ => agent.get(&url).call(),
    }
    .expect("an HTTP answer");
    let authenticate = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned());
    Answer {
        status: response.status().as_u16(),
        authenticate,
        body: response.body_mut().read_to_string().unwrap(),
    }
}

/// A token request with the right secret.
fn ask(url: &str, body: &str) -> Answer {
    http(
        url,
        "POST",
        "/token",
        Some(&format!("Bearer {SECRET}")),
        body,
    )
}

/// Asks for a token for `client_id` off the async runtime; the decoded
/// token and the id the answer names.
async fn fetch_token(url: &str, client_id: u64) -> ([u8; 2048], u64) {
    let url = url.to_owned();
    let answer = tokio::task::spawn_blocking(move || {
        ask(
            &url,
            &format!(r#"{{"protocol_id": "{PROTOCOL_ID:#x}", "client_id": {client_id}}}"#),
        )
    })
    .await
    .unwrap();
    assert_eq!(answer.status, 200, "{answer:?}");
    let json: serde_json::Value = serde_json::from_str(&answer.body).unwrap();
    let bytes = STANDARD
        .decode(
            json["connect_token"]
                .as_str()
                .expect("a connect_token string"),
        )
        .expect("base64");
    let token: [u8; 2048] = bytes.try_into().expect("2048 bytes");
    (
        token,
        json["client_id"].as_u64().expect("a client_id number"),
    )
}

/// A started netcode server of the fleet, echoing on its own task until
/// it has seen one client connect and `payloads` payloads; returns the id
/// of the client that connected, and the server (still up: dropping it
/// would disconnect the client).
async fn fleet_server(payloads: u64) -> (SocketAddr, tokio::task::JoinHandle<(u64, Server)>) {
    let config = ServerConfig::new(PROTOCOL_ID, Key::from_bytes(KEY));
    let mut server = Server::new("127.0.0.1:0", config).await.unwrap();
    server.start(8).await.unwrap();
    let address = server.public_address();
    let task = tokio::spawn(async move {
        let (mut client, mut echoed) = (None, 0);
        while client.is_none() || echoed < payloads {
            match server.next().await {
                Incoming::Event(netcode_tokio::ServerEvent::ClientConnected {
                    client_id, ..
                }) => client = Some(client_id),
                Incoming::Event(_) => {}
                Incoming::Payload {
                    client_index,
                    packet,
                } => {
                    server.send_packet(client_index, packet.data()).unwrap();
                    server.free_packet(packet);
                    echoed += 1;
                }
            }
        }
        (client.unwrap_or_default(), server)
    });
    (address, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetched_tokens_connect_clients_to_the_fleet_and_payloads_flow() {
    const PAYLOADS: u64 = 10;
    let (a, server_a) = fleet_server(PAYLOADS).await;
    let (b, server_b) = fleet_server(PAYLOADS).await;
    let running = Running::start("fleet", &[a, b]);

    // Two tokens: each lists both servers, the second starting at b.
    let mut clients = Vec::new();
    for (client_id, first) in [(101, a), (102, b)] {
        let (token, named) = fetch_token(&running.url, client_id).await;
        assert_eq!(named, client_id);
        let read = ConnectToken::read(&token).expect("a well-formed token");
        assert_eq!(read.protocol_id, PROTOCOL_ID);
        assert_eq!(read.server_addresses.len(), 2);
        assert_eq!(read.server_addresses[0], first);

        let mut client = Client::new("127.0.0.1:0").await.unwrap();
        client.connect(&token).unwrap();
        tokio::time::timeout(LIMIT, client.connected())
            .await
            .expect("in time")
            .expect("connected");
        assert_eq!(client.server_address(), Some(first));
        clients.push(client);
    }
    for client in &mut clients {
        for n in 0..PAYLOADS {
            let sent = vec![n as u8; 1 + n as usize * 100];
            client.send_packet(&sent).unwrap();
            let echo = tokio::time::timeout(LIMIT, client.recv())
                .await
                .expect("in time")
                .expect("connected");
            assert_eq!(echo.data(), &sent[..]);
        }
        assert_eq!(client.state(), ClientState::Connected);
    }
    assert_eq!(server_a.await.unwrap().0, 101);
    assert_eq!(server_b.await.unwrap().0, 102);
}

#[test]
fn refusals_are_401_400_and_404_and_nothing_falls_over() {
    let server: SocketAddr = "127.0.0.1:40000".parse().unwrap();
    let mut running = Running::start("refusals", &[server]);
    let url = running.url.clone();
    let good = format!(r#"{{"protocol_id": {PROTOCOL_ID}, "client_id": 5}}"#);

    for authorization in [
        None,
        Some("Bearer wrong".to_owned()),
        Some(format!("Bearer {SECRET}x")),
        Some(format!("Basic {SECRET}")),
        Some(format!("Bearer{SECRET}")),
        Some("Bearer ".to_owned()),
        Some("Bearer".to_owned()),
    ] {
        // Refused before the body is looked at, even a malformed one.
        for body in [good.as_str(), "{"] {
            let answer = http(&url, "POST", "/token", authorization.as_deref(), body);
            assert_eq!(answer.status, 401, "{authorization:?}: {answer:?}");
            assert_eq!(answer.authenticate.as_deref(), Some("Bearer"));
        }
    }

    let too_big = format!(
        r#"{{"protocol_id": 1, "client_id": 1, "x": "{}"}}"#,
        "a".repeat(8192)
    );
    for body in [
        "",
        "{",
        "[]",
        "null",
        r#"{"client_id": 1}"#,
        r#"{"protocol_id": 1}"#,
        r#"{"protocol_id": 1, "client_id": -1}"#,
        r#"{"protocol_id": 1, "client_id": 1.5}"#,
        r#"{"protocol_id": "0xzz", "client_id": 1}"#,
        r#"{"protocol_id": "", "client_id": 1}"#,
        r#"{"protocol_id": 18446744073709551616, "client_id": 1}"#,
        r#"{"protocol_id": 1, "client_id": 1, "extra": true}"#,
        r#"{"protocol_id": true, "client_id": 1}"#,
        too_big.as_str(),
    ] {
        let answer = ask(&url, body);
        assert_eq!(answer.status, 400, "{body:.60}: {answer:?}");
        let json: serde_json::Value = serde_json::from_str(&answer.body).unwrap();
        assert!(json["error"].is_string(), "{answer:?}");
    }

    let unknown = ask(&url, r#"{"protocol_id": "0x1", "client_id": 1}"#);
    assert_eq!(unknown.status, 404, "{unknown:?}");
    assert_eq!(http(&url, "GET", "/token", None, "").status, 405);
    assert_eq!(http(&url, "GET", "/elsewhere", None, "").status, 404);
    let health = http(&url, "GET", "/health", None, "");
    assert_eq!((health.status, health.body.as_str()), (200, "ok"));

    // The scheme's name is case-insensitive.
    let lower = http(
        &url,
        "POST",
        "/token",
        Some(&format!("bearer {SECRET}")),
        &good,
    );
    assert_eq!(lower.status, 200, "{lower:?}");

    // Still serving, and still right.
    let answer = ask(&url, &good);
    assert_eq!(answer.status, 200, "{answer:?}");
    let json: serde_json::Value = serde_json::from_str(&answer.body).unwrap();
    assert_eq!(json["client_id"], 5);
    assert_eq!(json["expire_seconds"], 30);
    assert!(running.alive(), "the matcher is still running");
}

/// Runs the matcher with `args` to completion.
fn run(args: &[&str]) -> Output {
    matcher().args(args).output().unwrap()
}

#[test]
fn help_works_and_bad_configuration_is_an_error_not_a_panic() {
    let help = run(&["--help"]);
    assert!(help.status.success());
    let text = String::from_utf8_lossy(&help.stdout);
    for option in [
        "--listen",
        "--secret-file",
        "--key-file",
        "--server",
        "--protocol-id",
    ] {
        assert!(text.contains(option), "--help mentions {option}");
    }

    let (secret, key) = files("bad-config", "not a key");
    let (secret, key) = (secret.to_str().unwrap(), key.to_str().unwrap());
    let base = [
        "--listen",
        "127.0.0.1:0",
        "--server",
        "127.0.0.1:40000",
        "--protocol-id",
        "1",
    ];
    let cases: [(&[&str], &str); 4] = [
        (
            &["--secret-file", secret, "--key-file", key],
            "a key is 32 bytes",
        ),
        (
            &["--secret-file", secret, "--key-file", "/nonexistent/key"],
            "cannot read",
        ),
        (
            &["--secret-file", secret, "--key-file", key, "--expire=-3"],
            "--expire",
        ),
        (
            &[
                "--secret-file",
                secret,
                "--key-file",
                key,
                "--protocol-id",
                "x",
            ],
            "not a 64-bit id",
        ),
    ];
    for (args, says) in cases {
        let output = run(&[&base[..], args].concat());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    let no_servers = run(&[
        "--secret-file",
        secret,
        "--key-file",
        key,
        "--protocol-id",
        "1",
    ]);
    assert!(!no_servers.status.success());
    assert!(String::from_utf8_lossy(&no_servers.stderr).contains("--server"));
}

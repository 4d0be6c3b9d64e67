//! The matcher program end to end, over loopback HTTP with a real client
//! (ureq): a fetched token, decoded, connects a netcode client to a netcode
//! server of the fleet and payloads flow; the wrong secret gets 401, a
//! malformed request 400, and none of it makes the program fall over.
//! A browser's request gets a token for the one server given with
//! `--webtransport`, its URL, and the certificate hash its hash file holds
//! at that moment (503 while the file is missing or malformed). Also
//! `--help`, and bad configuration reported as an error.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use netcode_tokio::proto::ConnectToken;
use netcode_tokio::{Client, ClientState, Incoming, Key, Server, ServerConfig};

use crate::common::{
    Answer, KEY, PROTOCOL_ID, Running, SECRET, ask, files, http, key_hex, run, shared_turn,
    shared_turn_blocking, start_nowait, until_unix_second,
};

/// Every wait gives up after this long.
const LIMIT: Duration = Duration::from_secs(10);

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
/// would disconnect the client). Also the first unix second whose tokens
/// it admits: it does not wait for it.
async fn fleet_server(payloads: u64) -> (SocketAddr, u64, tokio::task::JoinHandle<(u64, Server)>) {
    let config = ServerConfig::new(PROTOCOL_ID, Key::from_bytes(KEY));
    let mut server = Server::new("127.0.0.1:0", config).await.unwrap();
    let admitted_from = start_nowait(&mut server, 8);
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
    (address, admitted_from, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetched_tokens_connect_clients_to_the_fleet_and_payloads_flow() {
    let _turn = shared_turn().await;
    const PAYLOADS: u64 = 10;
    let (a, admitted_a, server_a) = fleet_server(PAYLOADS).await;
    let (b, admitted_b, server_b) = fleet_server(PAYLOADS).await;
    let running = Running::start("fleet", &[a, b]);
    // Tokens are issued as of the request: ask once both servers admit
    // them (the restart rule's second is over while the matcher starts).
    until_unix_second(admitted_a.max(admitted_b)).await;

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
    let _turn = shared_turn_blocking();
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
        r#"{"protocol_id": 1, "client_id": 1, "transport": "tcp"}"#,
        r#"{"protocol_id": 1, "client_id": 1, "transport": "WebTransport"}"#,
        r#"{"protocol_id": 1, "client_id": 1, "transport": ""}"#,
        r#"{"protocol_id": 1, "client_id": 1, "transport": null}"#,
        r#"{"protocol_id": 1, "client_id": 1, "transport": 1}"#,
        too_big.as_str(),
    ] {
        let answer = ask(&url, body);
        assert_eq!(answer.status, 400, "{body:.60}: {answer:?}");
        let json: serde_json::Value = serde_json::from_str(&answer.body).unwrap();
        assert!(json["error"].is_string(), "{answer:?}");
    }

    let unknown = ask(&url, r#"{"protocol_id": "0x1", "client_id": 1}"#);
    assert_eq!(unknown.status, 404, "{unknown:?}");
    // No server of this fleet takes browsers.
    let browser = ask(
        &url,
        &format!(
            r#"{{"protocol_id": {PROTOCOL_ID}, "client_id": 5, "transport": "webtransport"}}"#
        ),
    );
    assert_eq!(browser.status, 404, "{browser:?}");
    assert!(browser.body.contains("takes browsers"), "{browser:?}");
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
    assert!(json.get("webtransport").is_none(), "{answer:?}");
    let udp = ask(
        &url,
        &format!(r#"{{"protocol_id": {PROTOCOL_ID}, "client_id": 5, "transport": "udp"}}"#),
    );
    assert_eq!(udp.status, 200, "{udp:?}");
    assert!(!udp.body.contains("webtransport"), "{udp:?}");
    assert!(running.alive(), "the matcher is still running");
}

/// Asks for a browser's token for `client_id`.
fn ask_webtransport(url: &str, client_id: u64) -> Answer {
    ask(
        url,
        &format!(
            r#"{{"protocol_id": "{PROTOCOL_ID:#x}", "client_id": {client_id}, "transport": "webtransport"}}"#
        ),
    )
}

/// A browser's answer, checked: its token lists `server` alone, for
/// `client_id`; returns the WebTransport URL and certificate hash.
fn browser_answer(answer: &Answer, client_id: u64, server: SocketAddr) -> (String, Option<String>) {
    assert_eq!(answer.status, 200, "{answer:?}");
    let json: serde_json::Value = serde_json::from_str(&answer.body).unwrap();
    assert_eq!(json["client_id"], client_id);
    let bytes = STANDARD
        .decode(
            json["connect_token"]
                .as_str()
                .expect("a connect_token string"),
        )
        .expect("base64");
    let token = ConnectToken::read(&bytes).expect("a well-formed token");
    assert_eq!(token.protocol_id, PROTOCOL_ID);
    assert_eq!(token.server_addresses.len(), 1, "one server for a browser");
    assert_eq!(token.server_addresses[0], server);
    let web = &json["webtransport"];
    let url = web["url"].as_str().expect("a url string").to_owned();
    let hash = match &web["certificate_hash"] {
        serde_json::Value::Null => None,
        hash => Some(hash.as_str().expect("a certificate_hash string").to_owned()),
    };
    (url, hash)
}

#[test]
fn browsers_get_one_server_its_url_and_the_hash_its_file_holds() {
    let _turn = shared_turn_blocking();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("webtransport");
    std::fs::create_dir_all(&dir).unwrap();
    let hash_file = dir.join("certificate.hash");
    let _ = std::fs::remove_file(&hash_file);
    let udp: SocketAddr = "127.0.0.1:40000".parse().unwrap();
    let browsers: SocketAddr = "127.0.0.1:40002".parse().unwrap();
    let web_url = "https://127.0.0.1:40003/netcode";
    let fixed: SocketAddr = "[::1]:40004".parse().unwrap();
    let fixed_url = "https://[::1]:40005/netcode";
    let fixed_hash = "ab".repeat(32);
    let running = Running::start_with(
        "webtransport",
        &[udp, browsers, fixed],
        &[
            "--webtransport".into(),
            format!("{browsers}={web_url}#hash-file={}", hash_file.display()),
            "--webtransport".into(),
            format!("{fixed}={fixed_url}#hash={}", fixed_hash.to_uppercase()),
        ],
    );
    let url = running.url.clone();

    // Browsers go to the two servers that take them in turn, each with its
    // own URL and hash; the file's hash is read at each request.
    let first = "0123456789abcdef".repeat(4);
    std::fs::write(
        &hash_file,
        format!(
            "{first}
"
        ),
    )
    .unwrap();
    let answer = ask_webtransport(&url, 7);
    assert_eq!(
        browser_answer(&answer, 7, browsers),
        (web_url.to_owned(), Some(first.clone()))
    );
    let answer = ask_webtransport(&url, 8);
    assert_eq!(
        browser_answer(&answer, 8, fixed),
        (fixed_url.to_owned(), Some(fixed_hash.clone()))
    );
    let rotated = "fedcba9876543210".repeat(4);
    std::fs::write(
        &hash_file,
        format!(
            "{rotated}
"
        ),
    )
    .unwrap();
    let answer = ask_webtransport(&url, 9);
    assert_eq!(
        browser_answer(&answer, 9, browsers),
        (web_url.to_owned(), Some(rotated))
    );

    // UDP clients still get the whole fleet.
    let answer = ask(
        &url,
        &format!(r#"{{"protocol_id": {PROTOCOL_ID}, "client_id": 10}}"#),
    );
    assert_eq!(answer.status, 200, "{answer:?}");
    let json: serde_json::Value = serde_json::from_str(&answer.body).unwrap();
    let bytes = STANDARD
        .decode(json["connect_token"].as_str().unwrap())
        .unwrap();
    assert_eq!(
        ConnectToken::read(&bytes).unwrap().server_addresses.len(),
        3
    );
    assert!(json.get("webtransport").is_none(), "{answer:?}");

    // Without its hash file, the server is skipped (its turn goes to the
    // other) and the failure logged.
    std::fs::remove_file(&hash_file).unwrap();
    for client_id in [11, 12] {
        let answer = ask_webtransport(&url, client_id);
        assert_eq!(
            browser_answer(&answer, client_id, fixed),
            (fixed_url.to_owned(), Some(fixed_hash.clone()))
        );
    }
    let stderr = running.stop();
    assert!(
        stderr.contains(&format!("{browsers} is unavailable to browsers"))
            && stderr.contains("cannot read the hash file"),
        "{stderr}"
    );

    // With only that server taking browsers, a missing or malformed file
    // is 503, and a good one again is served.
    let running = Running::start_with(
        "webtransport-alone",
        &[udp, browsers],
        &[
            "--webtransport".into(),
            format!("{browsers}={web_url}#hash-file={}", hash_file.display()),
        ],
    );
    let url = running.url.clone();
    for content in [None, Some("not a hash\n"), Some("")] {
        if let Some(content) = content {
            std::fs::write(&hash_file, content).unwrap();
        }
        let answer = ask_webtransport(&url, 13);
        assert_eq!(answer.status, 503, "{content:?}: {answer:?}");
        let json: serde_json::Value = serde_json::from_str(&answer.body).unwrap();
        assert!(json["error"].is_string(), "{answer:?}");
    }
    std::fs::write(&hash_file, format!("{first}\n")).unwrap();
    let answer = ask_webtransport(&url, 14);
    assert_eq!(
        browser_answer(&answer, 14, browsers),
        (web_url.to_owned(), Some(first))
    );
    let stderr = running.stop();
    assert!(stderr.contains("64 hex digits"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn help_works_and_bad_configuration_is_an_error_not_a_panic() {
    let _turn = shared_turn_blocking();
    let help = run(&["--help"]);
    assert!(help.status.success());
    let text = String::from_utf8_lossy(&help.stdout);
    for option in [
        "--listen",
        "--secret-file",
        "--key-file",
        "--server",
        "--protocol-id",
        "--webtransport",
        "hash-file=PATH",
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
    let (_, good_key) = files("bad-webtransport", &key_hex());
    let good_key = good_key.to_str().unwrap();
    let cases: [(&[&str], &str); 6] = [
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
        (
            &[
                "--secret-file",
                secret,
                "--key-file",
                "/nonexistent/key",
                "--webtransport",
                "127.0.0.1:40000=https://a/netcode#hash=00",
            ],
            "64 hex digits",
        ),
        (
            &[
                "--secret-file",
                secret,
                "--key-file",
                good_key,
                "--webtransport",
                "127.0.0.1:40001=https://a/netcode",
            ],
            "not one of the --server addresses",
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

//! The matcher program in fleet mode (`--allocator-url`, no `--server`),
//! against a fake Agones allocator on loopback that answers what the test
//! sets: a token request gets a token naming the allocated game server and
//! says which one it is; with no free server the caller gets 503 and a
//! `Retry-After`; a request for a protocol the fleet does not serve is 404
//! and allocates nothing.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use netcode_tokio::proto::ConnectToken;
use serde_json::{Value, json};

use crate::common::{PROTOCOL_ID, Running, ask, shared_turn_blocking};

/// What the fake allocator answers next, and how many requests it got.
#[derive(Default)]
struct Fake {
    answer: Mutex<(u16, String)>,
    requests: Mutex<usize>,
}

/// Starts the fake allocator on a thread of its own (the tests ask the
/// matcher with a blocking client); its state and URL.
fn fake_allocator() -> (Arc<Fake>, String) {
    let fake = Arc::new(Fake::default());
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let state = Arc::clone(&fake);
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let app = Router::new().fallback(move || {
                let fake = Arc::clone(&state);
                async move {
                    *fake.requests.lock().unwrap() += 1;
                    let (status, body) = fake.answer.lock().unwrap().clone();
                    (
                        StatusCode::from_u16(status).unwrap(),
                        [(header::CONTENT_TYPE, "application/json")],
                        body,
                    )
                        .into_response()
                }
            });
            axum::serve(listener, app).await.unwrap();
        });
    });
    (fake, url)
}

/// An allocation of game server `name` at `server`, as the allocator
/// writes it.
fn allocation(name: &str, server: SocketAddr) -> String {
    json!({
        "gameServerName": name,
        "ports": [{"name": "netcode", "port": server.port()}],
        "address": server.ip().to_string(),
        "addresses": [{"type": "InternalIP", "address": server.ip().to_string()}],
        "nodeName": "node-1",
        "source": "local",
        "metadata": {"labels": {}, "annotations": {}},
        "counters": {},
        "lists": {},
    })
    .to_string()
}

fn token_request(protocol_id: u64) -> String {
    format!(r#"{{"protocol_id": "{protocol_id:#x}", "client_id": 7}}"#)
}

#[test]
fn tokens_name_the_allocated_server_and_no_free_server_is_503_with_retry_after() {
    let _turn = shared_turn_blocking();
    let (fake, allocator) = fake_allocator();
    let matcher = Running::start_with(
        "fleet_program",
        &[],
        &["--allocator-url".to_owned(), allocator],
    );

    let first: SocketAddr = "127.0.0.1:7101".parse().unwrap();
    *fake.answer.lock().unwrap() = (200, allocation("netcode-abc", first));
    let answer = ask(&matcher.url, &token_request(PROTOCOL_ID));
    assert_eq!(answer.status, 200, "{answer:?}");
    let json: Value = serde_json::from_str(&answer.body).unwrap();
    assert_eq!(json["allocated"]["server"], "127.0.0.1:7101");
    assert_eq!(json["allocated"]["game_server"], "netcode-abc");
    let bytes = STANDARD
        .decode(json["connect_token"].as_str().expect("a token"))
        .unwrap();
    let token = ConnectToken::read(&bytes).expect("a well-formed token");
    assert_eq!(token.server_addresses.len(), 1);
    assert_eq!(token.server_addresses[0], first);

    // The next request gets the next server the allocator hands out.
    let second: SocketAddr = "127.0.0.1:7102".parse().unwrap();
    *fake.answer.lock().unwrap() = (200, allocation("netcode-def", second));
    let answer = ask(&matcher.url, &token_request(PROTOCOL_ID));
    assert_eq!(answer.status, 200, "{answer:?}");
    let json: Value = serde_json::from_str(&answer.body).unwrap();
    assert_eq!(json["allocated"]["server"], "127.0.0.1:7102");

    *fake.answer.lock().unwrap() = (429, r#"{"error": "no available GameServer"}"#.into());
    let answer = ask(&matcher.url, &token_request(PROTOCOL_ID));
    assert_eq!(answer.status, 503, "{answer:?}");
    let wait: u64 = answer
        .retry_after
        .as_deref()
        .expect("a Retry-After")
        .parse()
        .unwrap();
    assert!(wait >= 1, "{answer:?}");
    assert_eq!(*fake.requests.lock().unwrap(), 3);

    let answer = ask(&matcher.url, &token_request(PROTOCOL_ID ^ 1));
    assert_eq!(answer.status, 404, "{answer:?}");
    assert_eq!(
        *fake.requests.lock().unwrap(),
        3,
        "a refused protocol allocates nothing"
    );
}

#[test]
fn fleet_mode_and_server_flags_are_checked_at_start() {
    let _turn = shared_turn_blocking();
    // Neither a static list nor a fleet: refused at start.
    let (secret, key) = crate::common::files("fleet_program_flags", &crate::common::key_hex());
    let output = crate::common::matcher()
        .args(["--protocol-id", "1", "--listen", "127.0.0.1:0"])
        .arg("--secret-file")
        .arg(&secret)
        .arg("--key-file")
        .arg(&key)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--server"), "{stderr}");
}

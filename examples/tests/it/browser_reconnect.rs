//! Reconnecting, end to end: the browser demo runs on fixed ports with a
//! token history file; a page in headless Chromium with `?reconnect=1`
//! (netcode-browser's `ReconnectingClient`) and the `client` example with
//! `--reconnect` exchange payloads with it; the demo is killed with
//! SIGKILL and started again at once on the same ports and history file.
//! Both clients must be back, each on a fresh token it fetched (the page
//! from the demo's `/token`, the client minting its own), exchanging
//! payloads, within [`BACK_WITHIN`] of the restart.
//!
//! Needs Chromium and the web package, as every browser test
//! (test-fixtures' `browser` module).

#![cfg(unix)]

use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;
use test_fixtures::browser::{BrowserSetup, Engine};

use crate::browser::{get, try_get};
use crate::common::Program;

/// How long after the restart both clients may take to be back: the
/// demo's 5 s token timeout (the clients learn the server is gone, if the
/// restart came sooner), the first backoff (at most 250 ms), a fresh token
/// and the handshake, with room for a loaded machine.
const BACK_WITHIN: Duration = Duration::from_secs(12);

/// A loopback port free now for UDP (`udp`) or TCP, below the usual
/// ephemeral range (as `crash` picks its own) so that no other test's
/// client socket takes it between the kill and the restart; drawn from
/// the clock's nanoseconds, and tried until one binds.
fn free_port(udp: bool) -> u16 {
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.subsec_nanos());
    for _ in 0..500 {
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let port = 20_000 + (seed >> 8) as u16 % 12_000;
        let free = if udp {
            UdpSocket::bind(("127.0.0.1", port)).is_ok()
        } else {
            TcpListener::bind(("127.0.0.1", port)).is_ok()
        };
        if free {
            return port;
        }
    }
    panic!("no free loopback port below 32000");
}

/// The page's latest report, from the demo's `/status` (none while the
/// demo is down or before the page reported).
fn page_report(http: SocketAddr) -> Option<Value> {
    let answer = try_get(http, "/status").ok()?;
    let status: Value = serde_json::from_str(&answer).ok()?;
    status["pages"].as_object()?.values().next().cloned()
}

/// Polls the page's report until `done` holds of it, within `limit`.
fn until_page(
    http: SocketAddr,
    what: &str,
    limit: Duration,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let started = Instant::now();
    loop {
        let report = page_report(http);
        if let Some(report) = &report
            && done(report)
        {
            return report.clone();
        }
        assert!(
            started.elapsed() < limit,
            "{what}: not within {limit:?}; the page's last report: {report:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_tab_and_a_native_client_are_back_after_the_demo_is_killed_and_restarted() {
    let Some(setup) = BrowserSetup::from_env("the reconnect test", Engine::Chromium) else {
        return;
    };
    let pkg = setup
        .package
        .to_str()
        .expect("a UTF-8 package path")
        .to_owned();
    let (udp, webtransport) = (free_port(true), free_port(true));
    let (websocket, http_port) = (free_port(false), free_port(false));
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser-reconnect");
    std::fs::create_dir_all(&dir).unwrap();
    let history = dir.join("history");
    let _ = std::fs::remove_file(&history);
    let history = history.display().to_string();
    let address = |port: u16| format!("127.0.0.1:{port}");
    let args = [
        "--udp".to_owned(),
        address(udp),
        "--webtransport".into(),
        address(webtransport),
        "--websocket".into(),
        address(websocket),
        "--http".into(),
        address(http_port),
        "--web".into(),
        pkg,
        "--token-history".into(),
        history,
        "--seconds".into(),
        "60".into(),
    ];
    let start = || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut demo = Program::start(
            "browser_demo",
            env!("CARGO_BIN_EXE_netcode-browser-demo"),
            &args,
        );
        demo.line_with("open http://");
        demo
    };
    let http: SocketAddr = address(http_port).parse().unwrap();
    let mut demo = start();
    let mut native = Program::start(
        "client",
        env!("CARGO_BIN_EXE_netcode-client"),
        &[&address(udp), "--reconnect", "--seconds", "40"],
    );
    native.line_with("first payload received");
    let _browser = setup.open(&format!("http://{http}/?reconnect=1&seconds=40"));
    until_page(
        http,
        "the page exchanges payloads",
        Duration::from_secs(30),
        |page| page["intact"].as_u64().unwrap_or(0) >= 20,
    );

    // SIGKILL, then at once the same demo on the same ports and history.
    demo.child.kill().unwrap();
    let _ = demo.finish();
    let before = page_report(http);
    assert!(before.is_none(), "the demo is down: {before:?}");
    let demo = start();
    let restarted = Instant::now();

    let page = until_page(http, "the page is back", BACK_WITHIN, |page| {
        page["reconnected"].as_u64().unwrap_or(0) >= 1
    });
    let page_back = restarted.elapsed();
    let intact = page["intact"].as_u64().unwrap_or(0);
    until_page(
        http,
        "payloads after the page is back",
        BACK_WITHIN,
        |page| page["intact"].as_u64().unwrap_or(0) > intact + 10,
    );
    let native_line = native.line_with("connected after");
    let native_back = restarted.elapsed();
    assert!(
        native_back < BACK_WITHIN,
        "the native client: {native_line} after {native_back:?}"
    );
    let status: Value = serde_json::from_str(&get(http, "/status")).unwrap();
    let transports: Vec<&str> = status["clients"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["transport"].as_str())
        .collect();
    assert!(
        transports.contains(&"udp") && transports.contains(&"webtransport"),
        "both clients hold slots of the restarted demo: {status}\n{}",
        demo.transcript()
    );
    let page = page_report(http).unwrap();
    assert_eq!(page["wrong"], 0, "{page}");
    println!(
        "back after the restart: the page in {page_back:?}, the native client in {native_back:?}"
    );
    let _ = native.child.kill();
}

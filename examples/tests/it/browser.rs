//! The browser demo end to end, in real browsers: headless Chromium, then
//! headless Firefox (and Chromium once more, told to take the WebSocket
//! fallback), opens the demo's page, whose wasm client is refused with an expired and a
//! foreign token, then connects over WebTransport, exchanges payloads both
//! ways (each checked byte for byte by its receiver), and disconnects
//! cleanly, so that the server sees a client disconnect, not a timeout;
//! all the while a native UDP client holds another slot of the same server
//! and exchanges the reference payload with it.
//!
//! It needs the browsers and the built wasm client: `NETCODE_CHROMIUM` and
//! `NETCODE_FIREFOX` (the browsers' paths) and `NETCODE_BROWSER_PKG` (the
//! directory `netcode-browser/build-web.sh` wrote), which `.ci/run` sets.
//! Without them a test says SKIPPED on stderr and passes, unless
//! `NETCODE_REQUIRE_BROWSER=1` (also set by `.ci/run`) makes it fail
//! (test-fixtures' `browser` module, which also starts and ends the
//! browser).

#![cfg(unix)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::common::Program;
use netcode_examples::{PRIVATE_KEY, PROTOCOL_ID, Tally, payload};
use netcode_std::proto::Key;
use netcode_std::{Client, ClientState, ConnectTokenBuilder};
use serde_json::Value;
use test_fixtures::browser::{BrowserSetup, Engine};

/// The whole scenario must end within this.
const LIMIT: Duration = Duration::from_secs(60);

/// A plain HTTP/1.1 GET on loopback; the body.
pub(crate) fn get(http: SocketAddr, path: &str) -> String {
    try_get(http, path).unwrap_or_else(|e| panic!("GET {path} from the demo's HTTP: {e}"))
}

/// [`get`], or why it failed (nothing listening, an error status).
pub(crate) fn try_get(http: SocketAddr, path: &str) -> Result<String, String> {
    let mut stream = TcpStream::connect(http).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(|e| e.to_string())?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {http}\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut answer = String::new();
    stream
        .read_to_string(&mut answer)
        .map_err(|e| e.to_string())?;
    let (head, body) = answer.split_once("\r\n\r\n").ok_or("no header and body")?;
    if !head.starts_with("HTTP/1.1 200") {
        return Err(format!("GET {path}: {head}"));
    }
    Ok(body.to_string())
}

/// A native UDP client exchanging the reference payload every frame until
/// `stop`; what it saw.
fn udp_client(server: SocketAddr, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<Tally> {
    std::thread::spawn(move || {
        let token = ConnectTokenBuilder::new(PROTOCOL_ID, &Key::from_bytes(PRIVATE_KEY), 7)
            .server_addresses([server])
            .generate()
            .unwrap();
        let mut client = Client::new("127.0.0.1:0").unwrap();
        let epoch = Instant::now();
        client.connect(&token).unwrap();
        let mut tally = Tally::default();
        while !stop.load(Ordering::Relaxed) && epoch.elapsed() < LIMIT {
            let now = epoch.elapsed().as_secs_f64();
            client.update(now);
            if client.state() == ClientState::Connected {
                tally.connected = true;
                client.send_packet(&payload()).unwrap();
                tally.sent += 1;
            }
            while let Some(packet) = client.receive_packet() {
                tally.check(packet.data());
            }
            std::thread::sleep(Duration::from_millis(16));
        }
        assert_eq!(
            client.state(),
            ClientState::Connected,
            "the UDP client stayed connected"
        );
        tally
    })
}

#[test]
fn chromium_and_a_udp_client_share_the_demo_server() {
    a_browser_and_a_udp_client_share_the_demo_server(Engine::Chromium);
}

#[test]
fn firefox_and_a_udp_client_share_the_demo_server() {
    a_browser_and_a_udp_client_share_the_demo_server(Engine::Firefox);
}

/// The page asked to take the WebSocket fallback at once.
#[test]
fn chromium_over_the_websocket_fallback_shares_the_demo_server() {
    share_the_demo_server(Engine::Chromium, "websocket");
}

/// The demo's page in `engine` beside a UDP client, as the module says.
fn a_browser_and_a_udp_client_share_the_demo_server(engine: Engine) {
    share_the_demo_server(engine, "webtransport");
}

/// The demo's page in `engine` on `transport` beside a UDP client.
fn share_the_demo_server(engine: Engine, transport: &str) {
    let Some(setup) = BrowserSetup::from_env("the browser end-to-end test", engine) else {
        return;
    };
    let pkg = setup.package.to_str().expect("a UTF-8 package path");
    let mut demo = Program::start(
        "browser_demo",
        env!("CARGO_BIN_EXE_netcode-browser-demo"),
        &[
            "--udp",
            "127.0.0.1:0",
            "--webtransport",
            "127.0.0.1:0",
            "--websocket",
            "127.0.0.1:0",
            "--http",
            "127.0.0.1:0",
            "--web",
            pkg,
            "--seconds",
            "60",
        ],
    );
    let open = demo.line_with("open http://");
    let http: SocketAddr = open
        .trim_start_matches("open http://")
        .trim_end_matches('/')
        .parse()
        .expect("the first line names the HTTP address");
    let addresses = demo.line_with("udp ");
    let udp: SocketAddr = addresses
        .trim_start_matches("udp ")
        .split(',')
        .next()
        .and_then(|a| a.parse().ok())
        .expect("the UDP address");

    let stop = Arc::new(AtomicBool::new(false));
    let native = udp_client(udp, Arc::clone(&stop));
    let _browser = setup.open(&format!(
        "http://{http}/?test=1&seconds=4&transport={transport}"
    ));

    // Until the page is done, watching both transports hold slots at once.
    let started = Instant::now();
    let mut together = false;
    let page = loop {
        assert!(
            started.elapsed() < LIMIT,
            "the page never finished:\n{}",
            demo.transcript()
        );
        let status: Value = serde_json::from_str(&get(http, "/status")).expect("JSON");
        let transports: Vec<&str> = status["clients"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["transport"].as_str())
            .collect();
        together |= transports.contains(&"udp") && transports.contains(&transport);
        let page = status["pages"]
            .as_object()
            .and_then(|pages| pages.values().next().cloned());
        if let Some(page) = page
            && matches!(page["phase"].as_str(), Some("done" | "failed"))
        {
            break page;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let status: Value = serde_json::from_str(&get(http, "/status")).unwrap();
    stop.store(true, Ordering::Relaxed);
    let tally = native.join().expect("the UDP client");

    assert_eq!(
        page["phase"],
        "done",
        "the page: {page}\n{}",
        demo.transcript()
    );
    for kind in ["expired", "foreign"] {
        let state = page["refused"][kind].as_str().unwrap_or("none");
        assert!(
            state != "connected" && state != "none",
            "a {kind} token ended in {state:?}: {page}"
        );
    }
    // The page checked the server's payloads; the server checked the page's.
    assert!(
        page["intact"].as_u64().unwrap() >= 20,
        "the page received: {page}"
    );
    assert_eq!(page["wrong"], 0, "{page}");
    let web_client = status["departed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["transport"] == transport)
        .unwrap_or_else(|| panic!("the browser's client left its slot: {status}"));
    assert_eq!(web_client["reason"], "client disconnected", "{status}");
    assert!(web_client["intact"].as_u64().unwrap() >= 20, "{status}");
    assert_eq!(web_client["wrong"], 0, "{status}");
    assert!(
        together,
        "the UDP and browser clients never held slots at the same time"
    );
    assert_eq!(
        page["transport"], transport,
        "the page says which transport it is on: {page}"
    );
    // The UDP client, in the other slot all along.
    let udp_slot = status["clients"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["transport"] == "udp")
        .unwrap_or_else(|| panic!("the UDP client's slot: {status}"));
    assert!(
        udp_slot["intact"].as_u64().unwrap() > 0 && udp_slot["wrong"] == 0,
        "{status}"
    );
    assert!(
        tally.received > 0 && tally.bad == 0,
        "the UDP client saw {tally:?}"
    );
}

//! A browser in the fleet, end to end: headless Chromium opens a page that
//! asks the matcher (in process, in fleet mode) for a browser's token; the
//! matcher asks a fake allocator for a server that takes browsers; the
//! allocator answers with the real `netcode-agones-server` (run with
//! `--webtransport` on a fake sidecar) and the annotations it published;
//! the page's wasm client connects to that server over WebTransport with
//! the URL and hash it was handed, and every payload comes back.
//!
//! Needs Chromium and the built wasm client, as every browser test
//! (`NETCODE_CHROMIUM`, `NETCODE_BROWSER_PKG`, set by `.ci/run`); without
//! them it says SKIPPED, unless `NETCODE_REQUIRE_BROWSER=1`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use netcode_agones::WEBTRANSPORT_LABEL;
use netcode_matcher::fleet::parse_url;
use netcode_matcher::{BROWSER_LABEL, FleetOptions, FleetSource, Matcher, router};
use netcode_std::proto::Key;
use serde_json::{Value, json};
use test_fixtures::browser::{BrowserSetup, Engine};

use crate::browsers::fake_with_browser_port;
use crate::fake_sdk::FakeSdk;
use crate::harness::{DEADLINE, PROTOCOL_ID_ARG, ServerProcess, free_udp_port};

use netcode_agones::netcode_std;

/// The matcher's secret, which the page presents.
const SECRET: &str = "fleet-browser-secret";
/// The browser's client id.
const CLIENT_ID: u64 = 4242;

/// The fake allocator: one `Ready` game server (the fake sidecar's), and
/// for a browser only if it takes browsers. Marks it `Allocated`, as the
/// allocator does, and answers as the allocator's REST gateway does,
/// with the GameServer's annotations.
async fn allocate(State(fake): State<Arc<FakeSdk>>, body: Bytes) -> Response {
    let asked: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let wants_browsers = asked["gameServerSelectors"][0]["matchLabels"][BROWSER_LABEL] == "true";
    let record = fake.record();
    let takes_browsers = record.label(WEBTRANSPORT_LABEL) == Some("true");
    if record.state() != "Ready" || (wants_browsers && !takes_browsers) {
        return (StatusCode::TOO_MANY_REQUESTS, "{}").into_response();
    }
    fake.set_state("Allocated");
    let status = record.gameserver.status.clone().unwrap_or_default();
    let meta = record.gameserver.object_meta.clone().unwrap_or_default();
    let ports: Vec<Value> = (status.ports.iter())
        .map(|port| json!({"name": port.name, "port": port.port}))
        .collect();
    let answer = json!({
        "gameServerName": meta.name,
        "ports": ports,
        "address": status.address,
        "addresses": [],
        "nodeName": "fake-node",
        "source": "local",
        "metadata": {"labels": meta.labels, "annotations": meta.annotations},
    });
    (
        [(header::CONTENT_TYPE, "application/json")],
        answer.to_string(),
    )
        .into_response()
}

/// What the page's server holds: the page, the web package, the reports.
#[derive(Clone)]
struct Site {
    page: Arc<String>,
    package: PathBuf,
    reports: mpsc::Sender<String>,
}

async fn page(State(site): State<Site>) -> Html<String> {
    Html(site.page.as_ref().clone())
}

async fn package_file(State(site): State<Site>, Path(file): Path<String>) -> Response {
    if file.contains("..") {
        return StatusCode::NOT_FOUND.into_response();
    }
    let content_type = if file.ends_with(".wasm") {
        "application/wasm"
    } else {
        "text/javascript"
    };
    match std::fs::read(site.package.join(&file)) {
        Ok(body) => ([(header::CONTENT_TYPE, content_type)], body).into_response(),
        Err(_) => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn report(State(site): State<Site>, RawQuery(query): RawQuery) -> StatusCode {
    let _ = site
        .reports
        .send(percent_decoded(&query.unwrap_or_default()));
    StatusCode::OK
}

/// `text` with its `%XX` escapes decoded.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Serves `app` on a free port of 127.0.0.1; its address.
async fn serve(app: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind HTTP");
    let address = listener.local_addr().expect("its address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    address
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_plays_on_a_server_allocated_from_the_fleet() {
    let Some(setup) = BrowserSetup::from_env("the fleet's browser test", Engine::Chromium) else {
        return;
    };
    let (port, browser_port) = (free_udp_port(), free_udp_port());
    let fake = Arc::new(fake_with_browser_port(port, browser_port));
    let bind = format!("127.0.0.1:{browser_port}");
    let server = ServerProcess::start(port, fake.port(), &["--webtransport", &bind]);
    let waiting = Arc::clone(&fake);
    tokio::task::spawn_blocking(move || {
        waiting.wait_until("Ready", DEADLINE, |r| r.state() == "Ready");
    })
    .await
    .expect("Ready");

    let allocator = serve(
        Router::new()
            .route("/gameserverallocation", post(allocate))
            .with_state(Arc::clone(&fake)),
    )
    .await;
    let fleet = FleetSource::from_options(&FleetOptions::new(
        parse_url(&format!("http://{allocator}")).expect("a URL"),
    ))
    .expect("valid fleet options")
    .expect("a fleet source");
    let protocol_id = u64::from_str_radix(PROTOCOL_ID_ARG.trim_start_matches("0x"), 16)
        .expect("the tests' protocol id");
    let matcher = Matcher::new(
        SECRET.into(),
        Key::from_bytes(test_fixtures::PRIVATE_KEY),
        Vec::new(),
        vec![protocol_id],
        30,
        5,
    );
    let (reports_tx, reports) = mpsc::channel();
    let site = Site {
        page: Arc::new(
            include_str!("fleet_page.html")
                .replace("%SECRET%", SECRET)
                .replace("%PROTOCOL_ID%", PROTOCOL_ID_ARG)
                .replace("%CLIENT_ID%", &CLIENT_ID.to_string()),
        ),
        package: setup.package.clone(),
        reports: reports_tx,
    };
    let pages = Router::new()
        .route("/", get(page))
        .route("/pkg/{*file}", get(package_file))
        .route("/report", get(report))
        .with_state(site);
    let http = serve(router(Arc::new(matcher), Some(Arc::new(fleet))).merge(pages)).await;
    let browser = setup.open(&format!("http://{http}/"));

    let started = Instant::now();
    let mut lines: Vec<String> = Vec::new();
    while !lines.iter().any(|l| l == "done" || l.starts_with("failed")) {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "timed out; the page said {lines:#?}; the server said:\n{}",
            server.output()
        );
        lines.extend(reports.try_iter());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    drop(browser);
    eprintln!("the page said: {lines:?}");
    assert!(
        lines.iter().any(|l| l == "done") && lines.iter().any(|l| l == "echoed=true"),
        "the page said {lines:#?}; the server said:\n{}",
        server.output()
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains(&format!("https://127.0.0.1:{browser_port}/netcode"))),
        "{lines:#?}"
    );
    let record = fake.record();
    assert_eq!(record.state(), "Allocated");
    assert!(
        server.said(&format!("player {CLIENT_ID} joined")),
        "{}",
        server.output()
    );
}

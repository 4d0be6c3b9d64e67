//! The whole path, live: the web package (`build-web.sh`) in a headless
//! browser (Chromium, then Firefox), connected through the browser's own
//! WebTransport to a
//! `netcode_tokio::Server` with `netcode-webtransport` attached, on
//! loopback. The page (`live_page.html`, served here over HTTP with the
//! package) connects with the `NetcodeClient` binding, sends payloads up
//! to its session's limit, receives the server's echoes and a 1200-byte
//! greeting, checks the binding's errors, and disconnects; it reports each
//! step to `/report`. The test holds the page's reports and the server's
//! events to what should happen: above all, the server sees the client's
//! netcode disconnect, not a timeout, and then the session closes. The page
//! connects with `connectAny`, WebTransport first and the server's
//! WebSocket after a bound, and says which it took. It runs in Chromium and
//! in Firefox on their own WebTransport; in Chromium on a datagram stream
//! made to look like Safari 26's (no `writable`, a `createWritable()`); in
//! both on a page without `WebTransport` (the WebSocket); and in Chromium
//! with a WebTransport URL whose UDP port swallows everything, as a network
//! that drops UDP does (the WebSocket, within the bound).
//!
//! It needs the package and the browsers: `NETCODE_BROWSER_PKG` names the
//! package directory, `NETCODE_CHROMIUM` and `NETCODE_FIREFOX` the browsers
//! (`.ci/run` sets them). Without them a test says SKIPPED on stderr and
//! passes, unless
//! `NETCODE_REQUIRE_BROWSER=1` (also set by `.ci/run`) makes it fail
//! (test-fixtures' `browser` module, which also starts and ends the
//! browser).

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use netcode_browser::payload_limit;
use netcode_tokio::{DisconnectReason, Incoming, Server, ServerEvent};
use netcode_webtransport::{WebSocket, WebSocketConfig, WebTransport, WebTransportConfig};
use test_fixtures::browser::{BrowserSetup, Engine};

/// How long the page has for the whole exchange.
const DEADLINE: Duration = Duration::from_secs(60);
/// How long the page waits for WebTransport before the WebSocket.
const FALLBACK_MS: u64 = 1500;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The page's payload pattern (`pattern` in live_page.html).
fn pattern(len: usize, salt: usize) -> Vec<u8> {
    (0..len).map(|i| ((i * 7 + salt) % 256) as u8).collect()
}

/// Percent-decoding of the page's reports.
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| text.get(i + 1..i + 3))
            .flatten()
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match escaped {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Answers one HTTP request: the page, a file of the package, or a report.
fn serve(mut stream: TcpStream, page: &str, pkg: &Path, reports: &mpsc::Sender<String>) {
    let Ok(clone) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(clone);
    let mut request = String::new();
    if reader.read_line(&mut request).is_err() {
        return;
    }
    loop {
        let mut header = String::new();
        match reader.read_line(&mut header) {
            Ok(0) | Err(_) => break,
            Ok(_) if header == "\r\n" => break,
            Ok(_) => {}
        }
    }
    let path = request.split_whitespace().nth(1).unwrap_or("/");
    let (status, content_type, body) = if path == "/" {
        ("200 OK", "text/html", page.as_bytes().to_vec())
    } else if let Some(query) = path.strip_prefix("/report?") {
        let _ = reports.send(decode(query));
        ("200 OK", "text/plain", Vec::new())
    } else if let Some(file) = path.strip_prefix("/pkg/").filter(|f| !f.contains("..")) {
        let content_type = if file.ends_with(".wasm") {
            "application/wasm"
        } else {
            "text/javascript"
        };
        match std::fs::read(pkg.join(file)) {
            Ok(body) => ("200 OK", content_type, body),
            Err(_) => ("404 Not Found", "text/plain", Vec::new()),
        }
    } else {
        ("404 Not Found", "text/plain", Vec::new())
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(&body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_connects_exchanges_payloads_and_disconnects_through_chromium() {
    live_exchange(Engine::Chromium, Shape::Native).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_connects_exchanges_payloads_and_disconnects_through_firefox() {
    live_exchange(Engine::Firefox, Shape::Native).await;
}

/// Safari 26's datagram stream has no `writable` attribute, and a writer
/// comes from `createWritable()`: the page makes Chromium's look so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_with_safaris_datagram_stream_exchanges_payloads() {
    live_exchange(Engine::Chromium, Shape::Safari).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chromium_without_webtransport_falls_back_on_the_websocket() {
    live_exchange(Engine::Chromium, Shape::NoWebTransport).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn firefox_without_webtransport_falls_back_on_the_websocket() {
    live_exchange(Engine::Firefox, Shape::NoWebTransport).await;
}

/// The WebTransport URL names a UDP port that swallows everything, as a
/// network that drops UDP does: the page falls back within its bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_whose_webtransport_never_answers_falls_back_within_the_bound() {
    live_exchange(Engine::Chromium, Shape::Blocked).await;
}

/// How the page's browser looks to the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// As the browser has it (Chromium and Firefox: a `writable`
    /// attribute).
    Native,
    /// As Safari 26 has it: no `writable`, a `createWritable()` method.
    Safari,
    /// No `WebTransport` at all.
    NoWebTransport,
    /// WebTransport whose server never answers (its UDP swallowed).
    Blocked,
}

impl Shape {
    /// Its name on the page (`%SHAPE%`).
    /// The transport the page should end up on.
    fn transport(self) -> &'static str {
        match self {
            Shape::Native | Shape::Safari => "webtransport",
            Shape::NoWebTransport | Shape::Blocked => "websocket",
        }
    }

    fn page_name(self) -> &'static str {
        match self {
            Shape::Native => "native",
            Shape::Safari => "safari",
            Shape::NoWebTransport => "no-webtransport",
            Shape::Blocked => "blocked",
        }
    }
}

/// The page's whole exchange with a live server, in `engine`, on a
/// datagram stream of `shape`.
async fn live_exchange(engine: Engine, shape: Shape) {
    let Some(setup) = BrowserSetup::from_env("the live test", engine) else {
        return;
    };

    let mut server = Server::new("127.0.0.1:0", test_fixtures::config())
        .await
        .expect("bind UDP");
    let bind = "127.0.0.1:0".parse().expect("an address");
    let web = WebTransport::bind(WebTransportConfig::self_signed(bind, &["127.0.0.1"]))
        .await
        .expect("bind WebTransport");
    let socket = WebSocket::bind_beside(WebSocketConfig::new(bind), &web)
        .await
        .expect("bind WebSocket");
    web.attach(&mut server);
    server.start(4).await.expect("start");
    // For `Blocked`: a UDP port that never answers.
    let black_hole = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind a black hole");
    let webtransport_url = match shape {
        Shape::Blocked => format!(
            "https://127.0.0.1:{}/netcode",
            black_hole.local_addr().expect("an address").port()
        ),
        _ => web.url("127.0.0.1"),
    };
    let token = test_fixtures::token_timing_out(1, &[server.public_address()], 5);

    // The server: greets each client with the largest payload that reaches
    // it (1200 bytes, or less where the browser's QUIC takes smaller
    // datagrams: Firefox), echoes every payload (cut to that size).
    let (event_tx, events) = mpsc::channel::<ServerEvent>();
    let (payload_tx, payloads) = mpsc::channel::<Vec<u8>>();
    let relay = web.relay();
    let server_task = tokio::spawn(async move {
        let mut reach = 1200;
        loop {
            match server.next().await {
                Incoming::Payload {
                    client_index,
                    packet,
                } => {
                    let _ = payload_tx.send(packet.data().to_vec());
                    let echo = &packet.data()[..packet.data().len().min(reach)];
                    let _ = server.send_packet(client_index, echo);
                    server.free_packet(packet);
                }
                Incoming::Event(event) => {
                    if let ServerEvent::ClientConnected {
                        client_index,
                        address,
                        ..
                    } = event
                    {
                        reach = address
                            .and_then(|peer| relay.payload_limit_to(peer))
                            .unwrap_or(1200);
                        let _ = server.send_packet(client_index, &pattern(reach, 200));
                    }
                    let _ = event_tx.send(event);
                }
            }
        }
    });

    let page = include_str!("live_page.html")
        .replace("%URL%", &webtransport_url)
        .replace("%WSURL%", &socket.url("127.0.0.1"))
        .replace("%FALLBACK%", &FALLBACK_MS.to_string())
        .replace("%HASH%", &web.certificate_hash_hex())
        .replace("%TOKEN%", &hex(&token))
        .replace("%SHAPE%", shape.page_name());
    let http = TcpListener::bind("127.0.0.1:0").expect("bind HTTP");
    let http_port = http.local_addr().expect("an address").port();
    let (report_tx, reports) = mpsc::channel::<String>();
    let pkg = setup.package.clone();
    std::thread::spawn(move || {
        for stream in http.incoming().flatten() {
            serve(stream, &page, &pkg, &report_tx);
        }
    });
    let browser = setup.open(&format!("http://127.0.0.1:{http_port}/"));

    // Reports until "done" (or a failure), and the server's events until
    // the client left.
    let started = Instant::now();
    let (mut lines, mut server_events) = (Vec::new(), Vec::new());
    let left = |events: &[ServerEvent]| {
        events
            .iter()
            .any(|e| matches!(e, ServerEvent::ClientDisconnected { .. }))
    };
    while !(lines
        .iter()
        .any(|l: &String| l == "done" || l.starts_with("failed"))
        && left(&server_events))
    {
        assert!(
            started.elapsed() < DEADLINE,
            "timed out after {DEADLINE:?}; page: {lines:#?}; server: {server_events:#?}"
        );
        lines.extend(reports.try_iter());
        server_events.extend(events.try_iter());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The page closed its session after the disconnect packets.
    while web.stats().sessions_open + socket.stats().sessions_open > 0 {
        assert!(
            started.elapsed() < DEADLINE,
            "the session stayed open: {:?} {:?}",
            web.stats(),
            socket.stats()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    drop(browser);
    server_task.abort();
    println!("page reports: {lines:#?}");
    println!("server events: {server_events:#?}");
    println!("WebTransport: {:?}", web.stats());
    println!("WebSocket: {:?}", socket.stats());

    let line = |prefix: &str| {
        lines
            .iter()
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} report; page: {lines:#?}"))
            .to_owned()
    };
    // The transport it should be on, found within the bound.
    let transport = line("transport ");
    let (name, took) = transport.split_once(' ').unwrap_or((&transport, ""));
    assert_eq!(name, shape.transport(), "{lines:#?}");
    if shape == Shape::Blocked {
        let took: u64 = took.parse().expect("milliseconds");
        assert!(
            (FALLBACK_MS..FALLBACK_MS + 2000).contains(&took),
            "fell back after {took} ms, with a bound of {FALLBACK_MS} ms"
        );
    }
    let open = line("open ");
    let numbers: Vec<usize> = open
        .split_whitespace()
        .take(2)
        .filter_map(|n| n.parse().ok())
        .collect();
    let [max_datagram_size, limit_at_open] = numbers[..] else {
        panic!("unreadable open report: {open}");
    };
    assert_eq!(limit_at_open, payload_limit(max_datagram_size), "{open}");
    // The limit the page sent with: Firefox raises its datagram size once
    // the session runs, so it may be larger than at the opening.
    let limit: usize = line("limit ")
        .parse()
        .unwrap_or_else(|_| panic!("unreadable limit report: {lines:#?}"));
    assert!(limit >= limit_at_open && limit <= 1200, "{lines:#?}");
    // The client took its writer from `createWritable()` where the stream
    // has it, once; from `writable` where it has not.
    let expected_calls = if shape == Shape::Safari { "1" } else { "0" };
    assert_eq!(line("createWritable calls: "), expected_calls);
    assert_eq!(line("connected "), "0");
    assert_eq!(
        line("too large: "),
        format!(
            "payload of {} bytes is larger than this session's limit of {limit} bytes",
            limit + 1
        )
    );
    assert_eq!(
        line("empty: "),
        "payload is empty (netcode payloads are 1 to 1200 bytes)"
    );
    assert!(
        line("received ").ends_with("greeting=true echoed=true"),
        "{lines:#?}"
    );
    // How large a payload reached the page: all of netcode's 1200 bytes in
    // Chromium; Firefox's QUIC takes datagrams of 1190 bytes toward it, so
    // 1165.
    let reach: usize = line("reach ")
        .parse()
        .unwrap_or_else(|_| panic!("unreadable reach report: {lines:#?}"));
    match engine {
        Engine::Chromium => assert_eq!(reach, 1200, "{lines:#?}"),
        Engine::Firefox => assert!((1000..=1200).contains(&reach), "{lines:#?}"),
    }
    assert_eq!(
        line("disconnected "),
        "disconnected: disconnected by this client"
    );
    assert_eq!(line("send after disconnect: "), "the session is closed");
    let received: Vec<Vec<u8>> = payloads.try_iter().collect();
    assert_eq!(
        received,
        [pattern(1, 0), pattern(100, 1), pattern(limit, 2)],
        "the server received other payloads"
    );
    let reason = server_events.iter().find_map(|e| match e {
        ServerEvent::ClientDisconnected { reason, .. } => Some(*reason),
        _ => None,
    });
    assert_eq!(
        reason,
        Some(DisconnectReason::ClientDisconnect),
        "the server must see the client's netcode disconnect, not a timeout"
    );
}

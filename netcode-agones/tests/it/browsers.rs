//! Browsers in the fleet: `netcode-agones-server --webtransport` serves a
//! WebTransport endpoint beside UDP, publishes its URL and certificate
//! hash (and the label allocations for browsers select on) before Ready,
//! and a WebTransport client (the driver browsers run, natively) with a
//! token for the server's address plays beside a UDP player, tracked in
//! the same players list.

use std::net::SocketAddr;
use std::time::Duration;

use netcode_agones::{CERT_HASH_ANNOTATION, WEBTRANSPORT_LABEL, WEBTRANSPORT_URL_ANNOTATION};
use netcode_webtransport::WebTransportClient;

use crate::fake_sdk::FakeSdk;
use crate::harness::{DEADLINE, Player, ServerProcess, free_udp_port};

/// `hex` (64 hex digits) as a hash.
fn hash_of(hex: &str) -> [u8; 32] {
    let mut hash = [0u8; 32];
    assert_eq!(hex.len(), 64, "{hex:?}");
    for (i, byte) in hash.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex digits");
    }
    hash
}

/// A fake sidecar whose GameServer has the port `netcode` at `port` and
/// the port `webtransport` at `browser_port`, both of 127.0.0.1.
pub(crate) fn fake_with_browser_port(port: u16, browser_port: u16) -> FakeSdk {
    let fake = FakeSdk::start("127.0.0.1", port);
    fake.edit(|r| {
        if let Some(status) = r.gameserver.status.as_mut() {
            status.ports.push(netcode_agones::agones::Port {
                name: "webtransport".into(),
                port: i32::from(browser_port),
            });
        }
    });
    fake
}

#[test]
fn a_browser_and_a_udp_player_share_the_server() {
    let (port, browser_port) = (free_udp_port(), free_udp_port());
    let fake = fake_with_browser_port(port, browser_port);
    let bind = format!("127.0.0.1:{browser_port}");
    let mut server = ServerProcess::start(port, fake.port(), &["--webtransport", &bind]);

    let ready = fake.wait_until("Ready", DEADLINE, |r| r.state() == "Ready");
    let url = format!("https://127.0.0.1:{browser_port}/netcode");
    assert_eq!(
        ready.annotation(WEBTRANSPORT_URL_ANNOTATION),
        Some(url.as_str()),
        "{}",
        server.output()
    );
    assert_eq!(ready.label(WEBTRANSPORT_LABEL), Some("true"));
    let hash = hash_of(ready.annotation(CERT_HASH_ANNOTATION).expect("the hash"));

    let public: SocketAddr = ([127, 0, 0, 1], port).into();
    let mut udp = Player::connect(public, 21);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let token = test_fixtures::token(22, &[public]);
        let mut browser =
            tokio::time::timeout(DEADLINE, WebTransportClient::connect(&url, &[hash], &token))
                .await
                .expect("a session in time")
                .expect("a session");
        tokio::time::timeout(DEADLINE, browser.connected())
            .await
            .expect("connected in time")
            .expect("connected");
        browser.send(b"from a browser").expect("send");
        let echo = tokio::time::timeout(Duration::from_secs(5), browser.recv())
            .await
            .expect("an echo in time");
        assert_eq!(echo.as_deref(), Some(&b"from a browser"[..]));
        udp.echo();
        let mut both = fake.wait_until("both players in the list", DEADLINE, |r| {
            r.list("players").len() == 2
        });
        both.lists.clear();
        browser.disconnect().await;
    });
    fake.wait_until("the browser out of the list", DEADLINE, |r| {
        r.list("players") == ["21"]
    });
    assert!(server.running(), "{}", server.output());
}

/// A replaced certificate (the self-signed one's weekly rotation, or an
/// operator's renewal) is published within a second, so the token service
/// hands out the hash that browsers will meet.
#[test]
fn a_new_certificate_is_published() {
    let (port, browser_port) = (free_udp_port(), free_udp_port());
    let fake = fake_with_browser_port(port, browser_port);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let mut options = netcode_agones::DedicatedOptions::new(
        ([127, 0, 0, 1], port).into(),
        test_fixtures::config(),
    );
    options.sdk_port = Some(fake.port());
    options.browsers = Some(netcode_agones::BrowserOptions::new(
        ([127, 0, 0, 1], browser_port).into(),
    ));
    let mut dedicated = runtime
        .block_on(netcode_agones::DedicatedServer::start(options))
        .expect("the server starts");
    let first = fake.record();
    let first = first
        .annotation(CERT_HASH_ANNOTATION)
        .expect("a hash")
        .to_owned();
    let endpoint = dedicated.webtransport().expect("the endpoint");
    assert_eq!(endpoint.certificate_hash_hex(), first);

    endpoint
        .set_identity(
            netcode_webtransport::self_signed_identity(&["127.0.0.1".into()])
                .expect("a certificate"),
        )
        .expect("installed");
    let new = endpoint.certificate_hash_hex();
    assert_ne!(new, first);
    let started = std::time::Instant::now();
    while fake.record().annotation(CERT_HASH_ANNOTATION) != Some(new.as_str()) {
        assert!(
            started.elapsed() < DEADLINE,
            "the new hash was not published"
        );
        let _ = dedicated.update(std::time::Instant::now());
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "published {:?} after the change",
        started.elapsed()
    );
}

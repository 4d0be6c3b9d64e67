//! The WebSocket fallback beside WebTransport, on one server: a UDP, a
//! WebTransport and a WebSocket client in its slots at once, payloads both
//! ways, a clean disconnect and refused tokens over the WebSocket; then
//! hostile sockets (text, oversized and overlong messages, another path,
//! slow upgrades, ping floods, silence, more sessions than the cap, two
//! thousand idle sockets) refused, closed and counted while a UDP client
//! keeps every echo; and `wss://` with an operator's certificate.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use netcode_tokio::ConnectTokenBuilder;
use netcode_tokio::proto::Key;
use netcode_tokio::proto::client::ClientState;
use netcode_webtransport::{WebSocketClient, WebTransportClient};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use crate::common::*;

type RawSocket = WebSocketStream<TcpStream>;

/// A WebSocket at `url` that speaks no netcode.
async fn raw_socket(url: &str) -> Result<RawSocket, String> {
    let authority = url
        .trim_start_matches("ws://")
        .split('/')
        .next()
        .unwrap_or_default();
    let stream = TcpStream::connect(authority)
        .await
        .map_err(|e| e.to_string())?;
    tokio_tungstenite::client_async(url, stream)
        .await
        .map(|(socket, _)| socket)
        .map_err(|e| e.to_string())
}

/// The close code the server ends `socket` with (reading past anything
/// else it sends).
async fn close_code(socket: &mut RawSocket) -> Option<CloseCode> {
    within("the server closes the socket", async {
        loop {
            match socket.next().await {
                Some(Ok(Message::Close(frame))) => return frame.map(|f| f.code),
                Some(Ok(_)) => {}
                Some(Err(_)) | None => return None,
            }
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn udp_webtransport_and_websocket_clients_share_one_server() {
    let mut rig = Rig::start(4, |_| {}).await;
    let udp = UdpEchoer::start(&rig).await;
    let mut web = within(
        "a WebTransport session",
        WebTransportClient::connect(&rig.url(), &[rig.web.certificate_hash()], &rig.token(2)),
    )
    .await
    .expect("a session");
    within("WebTransport connects", web.connected())
        .await
        .unwrap();
    let mut socket = within(
        "a WebSocket",
        WebSocketClient::connect(&rig.socket_url(), &rig.token(3)),
    )
    .await
    .expect("a socket");
    within("WebSocket connects", socket.connected())
        .await
        .unwrap();
    assert_eq!(socket.payload_limit(), 1200);
    assert_eq!(rig.snapshot().await.connected, 3);

    for (i, len) in [1, 100, 1200].into_iter().enumerate() {
        let payload = pattern(len, i as u64);
        socket.send(&payload).await.unwrap();
        assert_eq!(
            within("an echo over the WebSocket", socket.recv()).await,
            Some(payload)
        );
    }
    let mut over = Vec::new();
    while let Some((id, is_virtual)) = connected_over(&rig.event().await) {
        over.push((id, is_virtual));
        if over.len() == 3 {
            break;
        }
    }
    over.sort();
    assert_eq!(over, [(1, false), (2, true), (3, true)]);

    socket.disconnect().await;
    loop {
        if left_by_disconnecting(&rig.event().await, 3) {
            break;
        }
    }
    rig.until_no_socket_open("the socket's place comes back")
        .await;
    let stats = rig.socket.stats();
    assert_eq!(stats.sessions_accepted, 1, "{stats:?}");
    assert!(stats.messages_received >= 4, "{stats:?}");
    assert!(stats.messages_sent >= 4, "{stats:?}");
    assert_eq!(rig.web.stats().sessions_accepted, 1);

    // A token of another key: the server drops its requests (counted),
    // and the client times out as a UDP client would.
    let foreign = ConnectTokenBuilder::new(PROTOCOL_ID, &Key::from_bytes([0x5a; 32]), 4)
        .server_addresses([rig.udp])
        .timeout_seconds(1)
        .issued_at(rig.admitted_from)
        .generate()
        .unwrap();
    let mut refused = WebSocketClient::connect(&rig.socket_url(), &foreign)
        .await
        .expect("the socket opens");
    assert_eq!(
        within("a refused client gives up", refused.connected()).await,
        Err(ClientState::ConnectionRequestTimedOut)
    );
    let dropped: u64 = rig.snapshot().await.stats.dropped.iter().sum();
    assert!(dropped > 0, "the foreign requests were counted");

    web.disconnect().await;
    udp.stop().await;
}

/// Sessions the hostile endpoint holds at most.
const CAP: usize = 8;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_websockets_are_refused_and_counted_while_a_udp_client_keeps_every_echo() {
    let rig = Rig::start_both(
        4,
        |_| {},
        |config| {
            config.max_sessions = CAP;
            config.upgrade_timeout = Duration::from_millis(500);
            config.silence_timeout = Duration::from_millis(1000);
            config.max_messages_per_second = 200;
        },
    )
    .await;
    let url = rig.socket_url();
    let udp = UdpEchoer::start(&rig).await;

    // A text message ends the session (1003).
    let mut text = raw_socket(&url).await.unwrap();
    text.send(Message::text("hello")).await.unwrap();
    assert_eq!(close_code(&mut text).await, Some(CloseCode::Unsupported));

    // Longer than a netcode packet: dropped, the session goes on; longer
    // than any message read: the session ends (1009).
    let mut long = raw_socket(&url).await.unwrap();
    long.send(Message::binary(vec![0xee; 1301])).await.unwrap();
    long.send(Message::binary(pattern(40, 1))).await.unwrap();
    rig.until(
        "the oversized message counted, the next one taken",
        |_, _| {
            let stats = rig.socket.stats();
            stats.messages_oversized == 1 && stats.messages_received == 1
        },
    )
    .await;
    long.send(Message::binary(vec![0xee; 5000])).await.unwrap();
    assert_eq!(close_code(&mut long).await, Some(CloseCode::Size));

    // Another path: 404.
    assert!(
        raw_socket(&url.replace("/netcode", "/elsewhere"))
            .await
            .is_err()
    );

    // A slow upgrade: half a request, then nothing; closed at the bound.
    let mut slow = TcpStream::connect(rig.socket.local_addr()).await.unwrap();
    slow.write_all(b"GET /netcode HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let mut rest = [0u8; 64];
    let read = within("the slow upgrade is cut off", slow.read(&mut rest)).await;
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");

    // A ping flood: closed as a flood (1008).
    let mut flood = raw_socket(&url).await.unwrap();
    for _ in 0..400 {
        if flood.send(Message::Ping(vec![1; 8].into())).await.is_err() {
            break;
        }
    }
    assert_eq!(close_code(&mut flood).await, Some(CloseCode::Policy));

    // Garbage binary messages: the server drops them as netcode garbage.
    let mut garbage = raw_socket(&url).await.unwrap();
    for n in 0..100u64 {
        garbage
            .send(Message::binary(pattern(1 + (n as usize * 97) % 1200, n)))
            .await
            .unwrap();
    }
    // Then it falls silent: closed after the silence timeout.
    assert_eq!(
        close_code(&mut garbage).await,
        Some(CloseCode::Library(
            netcode_webtransport::WEBSOCKET_CLOSE_SILENT
        ))
    );

    // More sessions than the cap, once the ones above are gone: the rest
    // are refused (429).
    drop((text, long, flood, garbage));
    rig.until_no_socket_open("the earlier sessions are gone")
        .await;
    let mut held = Vec::new();
    let mut over = 0;
    for _ in 0..CAP + 4 {
        match raw_socket(&url).await {
            Ok(socket) => held.push(socket),
            Err(_) => over += 1,
        }
    }
    assert_eq!(held.len(), CAP);
    assert_eq!(over, 4);
    drop(held);
    rig.until_no_socket_open("every place comes back").await;

    let stats = rig.socket.stats();
    assert_eq!(stats.sessions_sent_text, 1, "{stats:?}");
    assert_eq!(stats.messages_oversized, 2, "{stats:?}");
    assert_eq!(stats.sessions_wrong_path, 1, "{stats:?}");
    assert!(stats.sessions_failed >= 1, "{stats:?}");
    assert_eq!(stats.sessions_flooding, 1, "{stats:?}");
    assert!(stats.sessions_silent >= 1, "{stats:?}");
    assert_eq!(stats.sessions_over_cap, 4, "{stats:?}");
    let snapshot = rig.snapshot().await;
    assert!(
        snapshot.stats.dropped.iter().sum::<u64>() >= 100,
        "the garbage was dropped and counted: {snapshot:?}"
    );
    assert_eq!(snapshot.connected, 1, "only the UDP client holds a slot");

    // After all that, a well-behaved socket is served again.
    let mut client = WebSocketClient::connect(&url, &rig.token(2)).await.unwrap();
    within("connects after the storm", client.connected())
        .await
        .unwrap();
    client.send(b"after the storm").await.unwrap();
    assert_eq!(
        within("an echo", client.recv()).await.as_deref(),
        Some(&b"after the storm"[..])
    );
    client.disconnect().await;
    udp.stop().await;
}

/// Idle sockets held open at once in the test below, under a cap of
/// twice as many.
const IDLE: usize = 2000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_idle_websockets_under_the_cap_leave_the_udp_client_alone() {
    let rig = Rig::start_both(4, |_| {}, |config| config.max_sessions = 2 * IDLE).await;
    let url = rig.socket_url();
    let udp = UdpEchoer::start(&rig).await;
    let mut idle = Vec::with_capacity(IDLE);
    for _ in 0..IDLE {
        idle.push(raw_socket(&url).await.expect("under the cap"));
    }
    assert_eq!(rig.socket.stats().sessions_open, IDLE);
    // They send nothing; the server holds them and goes on.
    tokio::time::sleep(Duration::from_millis(300)).await;
    drop(idle);
    rig.until_no_socket_open("every idle socket's place comes back")
        .await;
    assert_eq!(rig.socket.stats().sessions_accepted, IDLE as u64);
    udp.stop().await;
}

/// `wss://` with the operator's certificate (here one the test makes and
/// its client trusts as a root): the TLS handshake, the upgrade, and a
/// message through to the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secure_websocket_serves_with_the_operators_certificate() {
    use std::sync::Arc;
    use tokio_rustls::rustls::{self, RootCertStore, pki_types::CertificateDer};

    let identity = netcode_webtransport::self_signed_identity(&["127.0.0.1".to_owned()]).unwrap();
    let certificate =
        CertificateDer::from(identity.certificate_chain().as_slice()[0].der().to_vec());
    let rig = Rig::start_both(4, |_| {}, |config| config.tls = Some(identity)).await;
    let url = rig.socket_url();
    assert!(url.starts_with("wss://127.0.0.1:"), "{url}");

    let mut roots = RootCertStore::empty();
    roots.add(certificate).unwrap();
    let client = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let tcp = TcpStream::connect(rig.socket.local_addr()).await.unwrap();
    let tls = tokio_rustls::TlsConnector::from(Arc::new(client))
        .connect("127.0.0.1".try_into().unwrap(), tcp)
        .await
        .expect("the TLS handshake");
    let (mut socket, _) = within("the upgrade", tokio_tungstenite::client_async(url, tls))
        .await
        .expect("upgraded");
    socket.send(Message::binary(pattern(40, 3))).await.unwrap();
    rig.until("the message reached the server", |_, _| {
        rig.socket.stats().messages_received == 1
    })
    .await;
    // A plain connection to the secure door gets no upgrade.
    assert!(
        raw_socket(&rig.socket_url().replace("wss://", "ws://"))
            .await
            .is_err()
    );
    assert_eq!(rig.socket.stats().sessions_accepted, 1);
    assert!(rig.socket.stats().sessions_failed >= 1);
}

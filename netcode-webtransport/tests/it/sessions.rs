//! A browser-style client (netcode's client over a WebTransport session,
//! natively) and a UDP client in two slots of one server, admitted by
//! tokens of one key: payloads both ways byte for byte, a clean
//! disconnect the server sees as one, and tokens the server must refuse.

use netcode_tokio::{Client, ClientState, ConnectTokenBuilder, unix_time};
use netcode_webtransport::{SendError, WebTransportClient};

use crate::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn udp_and_webtransport_clients_share_the_slots_of_one_server() {
    let mut rig = Rig::start(4, |_| {}).await;

    let mut udp = Client::new("127.0.0.1:0").await.unwrap();
    udp.connect(&rig.token(1)).unwrap();
    within("the UDP client connects", udp.connected())
        .await
        .unwrap();

    let hash = rig.web.certificate_hash();
    let mut web = within(
        "the session opens",
        WebTransportClient::connect(&rig.url(), &[hash], &rig.token(2)),
    )
    .await
    .expect("a session");
    within("the WebTransport client connects", web.connected())
        .await
        .unwrap();

    let mut joined = [rig.event().await, rig.event().await].map(|e| connected_over(&e).unwrap());
    joined.sort();
    assert_eq!(
        joined,
        [(1, false), (2, true)],
        "client 1 over UDP, client 2 over a session"
    );
    assert_eq!(rig.snapshot().await.connected, 2);

    // Payloads up to the session's limit, echoed byte for byte, while the
    // UDP client's go the same way.
    let limit = web.payload_limit();
    assert!((1000..=1200).contains(&limit), "payload limit {limit}");
    for n in 0..40u64 {
        let len = if n == 0 {
            limit
        } else {
            1 + (n as usize * 37) % limit
        };
        let sent = pattern(len, n);
        web.send(&sent).unwrap();
        assert_eq!(
            within("an echo over WebTransport", web.recv())
                .await
                .as_deref(),
            Some(&sent[..])
        );
        let sent = pattern(1 + (n as usize * 53) % 1200, n + 7);
        udp.send_packet(&sent).unwrap();
        let echo = within("an echo over UDP", udp.recv())
            .await
            .expect("connected");
        assert_eq!(echo.data(), &sent[..]);
    }
    // The limit as of the last turn (path MTU discovery may have raised
    // it since the first payload): one byte more is refused, as is none.
    let limit = web.payload_limit();
    assert_eq!(
        web.send(&vec![0; limit + 1]),
        Err(SendError::TooLarge {
            len: limit + 1,
            limit
        })
    );
    assert_eq!(web.send(&[]), Err(SendError::Empty));
    assert!(
        web.driver().client_index().is_some(),
        "a slot while connected"
    );

    web.disconnect().await;
    let left = rig.event().await;
    assert!(left_by_disconnecting(&left, 2), "{left:?}");
    assert_eq!(web.state(), ClientState::Disconnected);
    let late = web.send(b"too late");
    assert_eq!(late, Err(SendError::SessionClosed));
    assert_eq!(
        late.map_err(|e| e.to_string()),
        Err("the session is closed".to_owned())
    );
    rig.until("the session is gone", |web, _| web.sessions_open == 0)
        .await;
    // The UDP client goes on.
    udp.send_packet(b"still here").unwrap();
    let echo = within("an echo over UDP", udp.recv())
        .await
        .expect("connected");
    assert_eq!(echo.data(), b"still here");
    assert_eq!(rig.snapshot().await.connected, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_and_foreign_tokens_are_refused_over_webtransport() {
    let rig = Rig::start(4, |_| {}).await;
    let hash = rig.web.certificate_hash();
    let now = unix_time();
    let expired = ConnectTokenBuilder::new(PROTOCOL_ID, &key(), 3)
        .server_addresses([rig.udp])
        .issued_at(now - 60)
        .expire_seconds(30)
        .timeout_seconds(2)
        .generate()
        .unwrap();
    let other_key = netcode_tokio::proto::Key::from_bytes([0x5a; 32]);
    // Issued when the server admits tokens: only the key is wrong.
    let foreign = ConnectTokenBuilder::new(PROTOCOL_ID, &other_key, 4)
        .server_addresses([rig.udp])
        .timeout_seconds(2)
        .issued_at(rig.admitted_from)
        .generate()
        .unwrap();
    for (what, token) in [("expired", expired), ("foreign", foreign)] {
        let mut web = within(
            "the session opens",
            WebTransportClient::connect(&rig.url(), &[hash], &token),
        )
        .await
        .expect("a session");
        let ended = within("the client gives up", web.connected()).await;
        assert!(
            matches!(ended, Err(state) if state != ClientState::Connected),
            "{what} token: {ended:?}"
        );
    }
    let snapshot = rig.snapshot().await;
    assert_eq!(snapshot.connected, 0);
    assert!(
        rig.web.stats().datagrams_received > 0,
        "the requests reached the server"
    );
}

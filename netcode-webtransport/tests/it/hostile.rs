//! Hostile input on the WebTransport path, while a UDP client exchanges
//! payloads with the same server: garbage datagrams on a live session,
//! datagrams longer than any netcode packet, streams, requests for another
//! path, and a flood of sessions opened and abandoned beyond the cap. The
//! server survives, everything refused is counted, the sessions it holds
//! stay within the cap and go back to none, and the UDP client never
//! misses an echo.

use std::time::Duration;

use netcode_webtransport::wtransport::{ClientConfig, Connection, Endpoint};

use crate::common::*;

/// Sessions the endpoint holds at most in this test.
const CAP: usize = 6;
/// Sessions the flood opens.
const FLOOD: usize = 3 * CAP;

async fn raw_session(url: &str, hash: [u8; 32]) -> Result<Connection, String> {
    let config = ClientConfig::builder()
        .with_bind_default()
        .with_server_certificate_hashes([hash.into()])
        .build();
    let endpoint = Endpoint::client(config).map_err(|e| e.to_string())?;
    endpoint.connect(url).await.map_err(|e| e.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_sessions_leave_the_server_and_its_udp_clients_whole() {
    let rig = Rig::start(4, |config| {
        config.max_sessions = CAP;
        config.silence_timeout = Duration::from_millis(1500);
        config.handshake_timeout = Duration::from_secs(2);
    })
    .await;
    let hash = rig.web.certificate_hash();
    let url = rig.url();

    let udp = UdpEchoer::start(&rig).await;

    // Garbage, oversized datagrams and streams on one live session.
    let session = within("a raw session", raw_session(&url, hash))
        .await
        .expect("session");
    // QUIC's path MTU discovery lets datagrams above netcode's 1300 bytes
    // through on loopback within moments of the handshake.
    within(
        "datagrams longer than netcode packets fit the path",
        async {
            while session.max_datagram_size().unwrap_or(0) <= 1301 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        },
    )
    .await;
    let mut bi = within("a bidirectional stream", session.open_bi())
        .await
        .unwrap()
        .await
        .unwrap();
    let _ = bi.0.write_all(b"no streams here").await;
    let mut uni = within("a unidirectional stream", session.open_uni())
        .await
        .unwrap()
        .await
        .unwrap();
    let _ = uni.write_all(b"nor here").await;
    // Datagrams can be lost even on loopback (QUIC drops what it cannot
    // send in time): the session sends until the server has counted
    // enough of each kind.
    let mut n = 0u64;
    loop {
        let (web, snapshot) = (rig.web.stats(), rig.snapshot().await);
        let garbage_dropped = snapshot.stats.dropped.iter().sum::<u64>();
        if web.datagrams_oversized >= 20 && garbage_dropped >= 400 && web.streams_refused >= 2 {
            break;
        }
        assert!(n < 100_000, "never counted: {web:?}\n{snapshot:?}");
        for _ in 0..10 {
            let garbage = pattern(1 + (n as usize * 97) % 1200, n);
            let _ = session.send_datagram(&garbage);
            n += 1;
        }
        let oversized = session.max_datagram_size().unwrap_or(0).max(1301);
        let _ = session.send_datagram(vec![0xee; oversized]);
        tokio::time::sleep(Duration::from_millis(2)).await;
    }

    // A request for another path.
    let wrong = url.replace("/netcode", "/elsewhere");
    assert!(
        within("another path", raw_session(&wrong, hash))
            .await
            .is_err()
    );

    // A flood of sessions that never send, beyond the cap.
    let mut flood = Vec::new();
    for _ in 0..FLOOD {
        let url = url.clone();
        flood.push(tokio::spawn(async move { raw_session(&url, hash).await }));
    }
    let mut opened = Vec::new();
    let mut refused = 0;
    for attempt in flood {
        match within("a flood session", attempt).await.unwrap() {
            Ok(session) => opened.push(session),
            Err(_) => refused += 1,
        }
        assert!(
            rig.web.stats().sessions_open <= CAP,
            "{:?}",
            rig.web.stats()
        );
    }
    assert!(
        refused >= FLOOD - CAP,
        "{refused} of {FLOOD} refused with a cap of {CAP}"
    );
    // Silent sessions are closed, and every place comes back.
    rig.until("every session closed", |web, _| web.sessions_open == 0)
        .await;
    let stats = rig.web.stats();
    assert!(stats.sessions_over_cap as usize >= FLOOD - CAP, "{stats:?}");
    assert!(stats.sessions_silent as usize >= opened.len(), "{stats:?}");
    assert_eq!(stats.sessions_wrong_path, 1, "{stats:?}");
    assert_eq!(
        rig.snapshot().await.connected,
        1,
        "only the UDP client holds a slot"
    );

    // After all that, a well-behaved session is served again.
    let mut web = within(
        "a session after the flood",
        netcode_webtransport::WebTransportClient::connect(&url, &[hash], &rig.token(2)),
    )
    .await
    .expect("a session");
    within("connects", web.connected()).await.unwrap();
    web.send(b"after the storm").unwrap();
    assert_eq!(
        within("an echo", web.recv()).await.as_deref(),
        Some(&b"after the storm"[..])
    );

    udp.stop().await;
}

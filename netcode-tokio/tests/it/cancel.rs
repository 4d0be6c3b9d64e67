//! Cancellation safety: `recv` and `next` raced in `select!` against a
//! short timer, so most of their futures are dropped unfinished, still
//! deliver every payload exactly once.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::common::*;
use netcode_tokio::{Client, Incoming};

/// Payloads sent each way, in bursts.
const PAYLOADS: u64 = 300;
/// Payloads per burst; the sender pauses between bursts, so the receiver's
/// futures are cancelled in the gaps.
const BURST: u64 = 10;
/// How long a receiver waits before cancelling its future.
const PATIENCE: Duration = Duration::from_millis(1);

/// Sends the [`PAYLOADS`] through `send`, a burst at a time, with pauses
/// in which `turn` keeps the sender's connection alive.
async fn bursts<T>(
    sender: &mut T,
    mut send: impl FnMut(&mut T, &[u8]),
    mut turn: impl AsyncFnMut(&mut T),
) {
    for n in 0..PAYLOADS {
        send(sender, &payload(1, n));
        if n % BURST == BURST - 1 {
            let _ = tokio::time::timeout(Duration::from_millis(3), turn(sender)).await;
        }
    }
}

/// Which of the [`PAYLOADS`] `data` is.
fn which(data: &[u8]) -> u64 {
    (0..PAYLOADS)
        .find(|n| payload(1, *n) == data)
        .expect("one of the payloads sent")
}

#[tokio::test]
async fn a_server_whose_next_is_cancelled_loses_no_payload() {
    let (mut server, admitted) = server("127.0.0.1:0", 2).await;
    let address = server.public_address();
    let client = tokio::spawn(async move {
        let mut client = Client::new("127.0.0.1:0").await.unwrap();
        client.connect(&token(admitted, 1, &[address])).unwrap();
        within("connect", client.connected()).await.unwrap();
        let send = |c: &mut Client, p: &[u8]| c.send_packet(p).unwrap();
        bursts(&mut client, send, async |c: &mut Client| c.turn().await).await;
        // The server says when it has everything.
        within("the server's word", client.recv()).await.unwrap();
    });

    let (mut got, mut cancelled) = (BTreeSet::new(), 0u64);
    while (got.len() as u64) < PAYLOADS {
        tokio::select! {
            biased;
            incoming = server.next() => {
                if let Incoming::Payload { packet, .. } = incoming {
                    assert!(got.insert(which(packet.data())), "delivered twice");
                }
            }
            _ = tokio::time::sleep(PATIENCE) => cancelled += 1,
        }
        assert!(cancelled < 100_000, "payloads stopped arriving");
    }
    server.send_packet(0, b"done").unwrap();
    within("the client finishes", client).await.unwrap();
    assert!(
        cancelled > 0,
        "no future was cancelled: the test proved nothing"
    );
    assert_eq!(server.transport_stats().queue_full, 0);
}

#[tokio::test]
async fn a_client_whose_recv_is_cancelled_loses_no_payload() {
    let (mut server, admitted) = server("127.0.0.1:0", 2).await;
    let mut client = Client::new("127.0.0.1:0").await.unwrap();
    client
        .connect(&token(admitted, 1, &[server.public_address()]))
        .unwrap();
    let (connected, _) = tokio::join!(client.connected(), async {
        let _ = tokio::time::timeout(Duration::from_secs(2), server.next_event()).await;
    });
    connected.unwrap();

    let sender = tokio::spawn(async move {
        let send = |s: &mut netcode_tokio::Server, p: &[u8]| s.send_packet(0, p).unwrap();
        bursts(&mut server, send, async |s: &mut netcode_tokio::Server| {
            s.turn().await
        })
        .await;
        // Kept alive until the client has read everything.
        loop {
            server.turn().await;
        }
    });

    let (mut got, mut cancelled) = (BTreeSet::new(), 0u64);
    while (got.len() as u64) < PAYLOADS {
        tokio::select! {
            biased;
            packet = client.recv() => {
                let packet = packet.expect("still connected");
                assert!(got.insert(which(packet.data())), "delivered twice");
            }
            _ = tokio::time::sleep(PATIENCE) => cancelled += 1,
        }
        assert!(cancelled < 100_000, "payloads stopped arriving");
    }
    sender.abort();
    assert!(
        cancelled > 0,
        "no future was cancelled: the test proved nothing"
    );
}

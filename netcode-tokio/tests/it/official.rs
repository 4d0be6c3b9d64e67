//! netcode-tokio against the official Rust port (`netcode-official`, library
//! `netcode`) over 127.0.0.1 UDP: its client on our tokio server, our tokio
//! client on its server, 1200-byte payloads both ways checked byte for
//! byte, and a disconnect from each side seen by the other.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::common::*;
use netcode as official;
use netcode_tokio::{Client, ClientState, DisconnectReason, Incoming, ServerEvent};
use tokio::sync::oneshot;

/// Payloads each way before a scenario moves on.
const ENOUGH: u32 = 10;

fn pattern() -> Vec<u8> {
    (0..1200).map(|i| (i % 256) as u8).collect()
}

/// Seconds since `start`, for the official peer's `update`.
fn seconds(start: Instant) -> f64 {
    start.elapsed().as_secs_f64()
}

#[tokio::test]
async fn their_client_talks_to_our_tokio_server_then_leaves() {
    // Their generator stamps the token with their clock: our server must
    // have left its start second by then.
    let mut server = server_after_the_restart_second("127.0.0.1:0", 4).await;
    let address = server.public_address();
    let (left, leaving) = oneshot::channel();
    // Our server echoes, and reports how its client left.
    let ours = tokio::spawn(async move {
        let (mut connected, mut payloads) = (None, 0u32);
        loop {
            match server.next().await {
                Incoming::Event(ServerEvent::ClientConnected { client_id, .. }) => {
                    connected = Some(client_id);
                }
                Incoming::Event(ServerEvent::ClientDisconnected { reason, .. }) => {
                    let _ = left.send((connected, payloads, reason));
                    return server;
                }
                Incoming::Payload {
                    client_index,
                    packet,
                } => {
                    assert_eq!(packet.data(), &pattern()[..], "payload from their client");
                    assert_eq!(server.client_user_data(client_index), Some(&[7; 256]));
                    payloads += 1;
                    server.send_packet(client_index, packet.data()).unwrap();
                    server.free_packet(packet);
                }
            }
        }
    });

    let token = official::generate_connect_token(
        &[address],
        &[address],
        30,
        5,
        42,
        PROTOCOL_ID,
        &KEY,
        &[7; 256],
    )
    .expect("their token");
    let start = Instant::now();
    let mut client = official::Client::new("127.0.0.1:0".parse().unwrap(), 0.0).unwrap();
    client.connect(&token).unwrap();
    let mut echoes = 0;
    while echoes < ENOUGH {
        assert!(
            start.elapsed() < LIMIT,
            "their client never got {ENOUGH} echoes"
        );
        client.update(seconds(start));
        if client.state() == official::ClientState::Connected {
            client.send_packet(&pattern()).unwrap();
        }
        while let Some((data, _)) = client.receive_packet() {
            assert_eq!(data, pattern(), "echo from our server");
            echoes += 1;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    client.disconnect();
    let (connected, payloads, reason) = within("our server sees the client leave", leaving)
        .await
        .unwrap();
    assert_eq!(connected, Some(42));
    assert!(payloads >= ENOUGH);
    assert_eq!(reason, DisconnectReason::ClientDisconnect);
    let server = ours.await.unwrap();
    assert_eq!(
        server.disconnect_reason(0),
        DisconnectReason::ClientDisconnect
    );
}

#[tokio::test]
async fn our_tokio_client_talks_to_their_server_then_is_kicked() {
    let start = Instant::now();
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let mut server = official::Server::new(any, PROTOCOL_ID, &KEY, 0.0).unwrap();
    server.start(4).unwrap();
    let mut client = Client::new("127.0.0.1:0").await.unwrap();
    client.connect(&token_now(43, &[server.address()])).unwrap();

    // Their server is updated between our client's (cancelled) waits.
    let payload = pattern();
    let (mut at_server, mut at_client) = (0, 0);
    while at_server < ENOUGH || at_client < ENOUGH {
        assert!(start.elapsed() < LIMIT, "payloads did not flow both ways");
        server.update(seconds(start));
        while let Some((data, _)) = server.receive_packet(0) {
            assert_eq!(data, payload, "payload from our client");
            at_server += 1;
        }
        if server.client_connected(0) {
            server.send_packet(0, &payload).unwrap();
        }
        if client.state() == ClientState::Connected {
            client.send_packet(&payload).unwrap();
        }
        tokio::select! {
            packet = client.recv() => {
                let packet = packet.expect("connected");
                assert_eq!(packet.data(), &payload[..], "payload from their server");
                at_client += 1;
                client.free_packet(packet);
            }
            _ = tokio::time::sleep(Duration::from_millis(1)) => {}
        }
    }
    assert_eq!(server.client_id(0), 43);
    assert_eq!((client.client_index(), client.max_clients()), (0, 4));

    server.disconnect_client(0);
    within("our client sees the kick", async {
        while client.recv().await.is_some() {}
    })
    .await;
    assert_eq!(client.state(), ClientState::Disconnected);
}

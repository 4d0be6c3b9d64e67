//! Our client and server against the official Rust port (`netcode-official`
//! on crates.io) over 127.0.0.1 UDP: handshakes, 1200-byte payloads both
//! ways checked byte for byte, disconnects from either side, tokens from
//! either generator, and refusals for the wrong protocol id or key.

use std::net::SocketAddr;
use std::thread::sleep;
use std::time::{Duration, Instant};

use netcode as official;
use netcode_std::proto::Key;
use netcode_std::{
    Client, ClientState, DisconnectReason, Server, ServerConfig, ServerEvent, TokenRequest,
    generate_connect_token,
};

const PROTOCOL_ID: u64 = 0x1122_3344_5566_7788;
const PRIVATE_KEY: [u8; 32] = [
    0x60, 0x6a, 0xbe, 0x6e, 0xc9, 0x19, 0x10, 0xea, 0x9a, 0x65, 0x62, 0xf6, 0x6f, 0x2b, 0x30, 0xe4,
    0x43, 0x71, 0xd6, 0x2c, 0xd1, 0x99, 0x27, 0x26, 0x6b, 0x3c, 0x60, 0xf4, 0xb7, 0x15, 0xab, 0xa1,
];
/// Every loop gives up after this long.
const LIMIT: Duration = Duration::from_secs(10);

fn pattern() -> Vec<u8> {
    (0..1200).map(|i| (i % 256) as u8).collect()
}

/// Runs `step` every millisecond (with the seconds elapsed) until it returns
/// true; panics with `what` after [`LIMIT`].
fn run_until(what: &str, mut step: impl FnMut(f64) -> bool) {
    let start = Instant::now();
    while start.elapsed() < LIMIT {
        if step(start.elapsed().as_secs_f64()) {
            return;
        }
        sleep(Duration::from_millis(1));
    }
    panic!("timed out after {LIMIT:?}: {what}");
}

/// Runs `step` for `duration`, for checks that something never happens.
fn run_for(duration: Duration, mut step: impl FnMut(f64)) {
    let start = Instant::now();
    while start.elapsed() < duration {
        step(start.elapsed().as_secs_f64());
        sleep(Duration::from_millis(1));
    }
}

fn our_server() -> Server {
    let config = ServerConfig::new(PROTOCOL_ID, Key::from_bytes(PRIVATE_KEY));
    let mut server = Server::new("127.0.0.1:0", config).expect("bind our server");
    server.start(4).expect("start our server");
    server
}

fn their_server() -> official::Server {
    let address: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let mut server =
        official::Server::new(address, PROTOCOL_ID, &PRIVATE_KEY, 0.0).expect("bind their server");
    server.start(4).expect("start their server");
    server
}

fn their_token(server: SocketAddr, protocol_id: u64, key: &[u8; 32]) -> [u8; 2048] {
    official::generate_connect_token(&[server], &[server], 30, 5, 42, protocol_id, key, &[7; 256])
        .expect("their token")
}

fn our_token(server: SocketAddr, protocol_id: u64, key: &[u8; 32]) -> [u8; 2048] {
    let key = Key::from_bytes(*key);
    generate_connect_token(&TokenRequest {
        protocol_id,
        private_key: &key,
        client_id: 43,
        public_addresses: &[server],
        internal_addresses: None,
        expire_seconds: 30,
        timeout_seconds: 5,
        user_data: Some(&[9; 256]),
    })
    .expect("our token")
}

#[test]
fn their_client_connects_to_our_server_with_their_token() {
    let mut server = our_server();
    let address = server.public_address();
    let mut client = official::Client::new("127.0.0.1:0".parse().unwrap(), 0.0).unwrap();
    client
        .connect(&their_token(address, PROTOCOL_ID, &PRIVATE_KEY))
        .unwrap();
    let payload = pattern();
    let (mut at_server, mut at_client) = (0, 0);
    run_until("their client connects and payloads flow both ways", |t| {
        client.update(t);
        server.update(t);
        if client.state() == official::ClientState::Connected {
            client.send_packet(&payload).unwrap();
        }
        if server.client_connected(0) {
            server.send_packet(0, &payload).unwrap();
        }
        while let Some(p) = server.receive_packet(0) {
            assert_eq!(p.data(), &payload[..], "payload from their client");
            at_server += 1;
            server.free_packet(p);
        }
        while let Some((data, _)) = client.receive_packet() {
            assert_eq!(data, payload, "payload from our server");
            at_client += 1;
        }
        at_server >= 10 && at_client >= 10
    });
    assert_eq!(server.client_id(0), Some(42));
    assert_eq!(server.client_user_data(0), Some(&[7; 256]));
    client.disconnect();
    run_until("our server sees the client leave", |t| {
        server.update(t);
        !server.client_connected(0)
    });
    assert_eq!(
        server.disconnect_reason(0),
        DisconnectReason::ClientDisconnect
    );
    let mut saw = false;
    while let Some(event) = server.poll_event() {
        if let ServerEvent::ClientDisconnected { reason, .. } = event {
            assert_eq!(reason, DisconnectReason::ClientDisconnect);
            saw = true;
        }
    }
    assert!(saw, "a disconnect event with the client's reason");
}

#[test]
fn our_client_connects_to_their_server_with_our_token() {
    let mut server = their_server();
    let address = server.address();
    let mut client = Client::new("127.0.0.1:0").unwrap();
    client
        .connect(&our_token(address, PROTOCOL_ID, &PRIVATE_KEY))
        .unwrap();
    let payload = pattern();
    let (mut at_server, mut at_client) = (0, 0);
    run_until("our client connects and payloads flow both ways", |t| {
        client.update(t);
        server.update(t);
        if client.state() == ClientState::Connected {
            client.send_packet(&payload).unwrap();
        }
        if server.client_connected(0) {
            server.send_packet(0, &payload).unwrap();
        }
        while let Some((data, _)) = server.receive_packet(0) {
            assert_eq!(data, payload, "payload from our client");
            at_server += 1;
        }
        while let Some(p) = client.receive_packet() {
            assert_eq!(p.data(), &payload[..], "payload from their server");
            at_client += 1;
            client.free_packet(p);
        }
        at_server >= 10 && at_client >= 10
    });
    assert_eq!(server.client_id(0), 43);
    assert_eq!(client.client_index(), 0);
    assert_eq!(client.max_clients(), 4);
    server.disconnect_client(0);
    run_until("our client sees the server disconnect it", |t| {
        server.update(t);
        client.update(t);
        client.state() == ClientState::Disconnected
    });
}

#[test]
fn our_client_connects_to_our_server_with_their_token_and_theirs_with_ours() {
    // Their generator's token at our server (from our client), and our
    // generator's token at their server (from their client).
    let mut ours = our_server();
    let mut client = Client::new("127.0.0.1:0").unwrap();
    client
        .connect(&their_token(
            ours.public_address(),
            PROTOCOL_ID,
            &PRIVATE_KEY,
        ))
        .unwrap();
    run_until("their token admits our client to our server", |t| {
        client.update(t);
        ours.update(t);
        client.state() == ClientState::Connected && ours.client_connected(0)
    });

    let mut theirs = their_server();
    let mut their_client = official::Client::new("127.0.0.1:0".parse().unwrap(), 0.0).unwrap();
    their_client
        .connect(&our_token(theirs.address(), PROTOCOL_ID, &PRIVATE_KEY))
        .unwrap();
    run_until("our token admits their client to their server", |t| {
        their_client.update(t);
        theirs.update(t);
        their_client.state() == official::ClientState::Connected && theirs.client_connected(0)
    });
    assert_eq!(theirs.client_user_data(0), Some(&[9; 256]));
}

#[test]
fn wrong_protocol_id_or_key_never_connects_either_way() {
    let other_key = [0x33; 32];
    for (protocol_id, key) in [(PROTOCOL_ID + 1, &PRIVATE_KEY), (PROTOCOL_ID, &other_key)] {
        // Their client, bad token, our server.
        let mut server = our_server();
        let mut client = official::Client::new("127.0.0.1:0".parse().unwrap(), 0.0).unwrap();
        client
            .connect(&their_token(server.public_address(), protocol_id, key))
            .unwrap();
        run_for(Duration::from_millis(700), |t| {
            client.update(t);
            server.update(t);
            assert_ne!(client.state(), official::ClientState::Connected);
            assert!(!server.client_connected(0));
        });
        assert!(
            server.stats().dropped_total() > 0,
            "our server dropped the requests"
        );

        // Our client, bad token, their server.
        let mut server = their_server();
        let mut client = Client::new("127.0.0.1:0").unwrap();
        client
            .connect(&our_token(server.address(), protocol_id, key))
            .unwrap();
        run_for(Duration::from_millis(700), |t| {
            client.update(t);
            server.update(t);
            assert_ne!(client.state(), ClientState::Connected);
            assert!(!server.client_connected(0));
        });
        assert_eq!(client.state(), ClientState::SendingConnectionRequest);
    }
}

//! What the live interop tests share: the reference's protocol id and test
//! key, the payload and loops that always end (from the workspace's
//! `support/test-fixtures`), and peers and tokens from the official port
//! (`netcode-official`) and from us.
#![allow(dead_code, unreachable_pub, unused_imports)]

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use netcode as official;
use netcode_mio::Registered;
use netcode_mio::mio::{Events, Poll, Token};
use netcode_std::proto::Key;
use netcode_std::transport::Socket;
use netcode_std::{ClientState, ConnectTokenBuilder, DisconnectReason, ServerConfig, ServerEvent};

pub use test_fixtures::{PRIVATE_KEY, PROTOCOL_ID, run_for, run_until};

/// The payload every scenario sends: 1200 bytes, byte i is `i % 256`.
pub fn pattern() -> Vec<u8> {
    test_fixtures::pattern(1200, 0)
}

pub fn their_server() -> official::Server {
    let address: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let mut server =
        official::Server::new(address, PROTOCOL_ID, &PRIVATE_KEY, 0.0).expect("bind their server");
    server.start(4).expect("start their server");
    server
}

pub fn their_token(server: SocketAddr, protocol_id: u64, key: &[u8; 32]) -> [u8; 2048] {
    official::generate_connect_token(&[server], &[server], 30, 5, 42, protocol_id, key, &[7; 256])
        .expect("their token")
}

pub fn our_token(server: SocketAddr, protocol_id: u64, key: &[u8; 32]) -> [u8; 2048] {
    let key = Key::from_bytes(*key);
    ConnectTokenBuilder::new(protocol_id, &key, 43)
        .server_addresses([server])
        .expire_seconds(30)
        .timeout_seconds(5)
        .user_data(&[9; 256])
        .generate()
        .expect("our token")
}

/// Our server as the scenarios drive it: a std one, or a mio one in its
/// own poll.
pub trait OurServer {
    type Socket: Socket;
    /// Reads what arrived and sends what is due, at `t` seconds.
    fn step(&mut self, t: f64);
    /// The netcode-std server (for a mio server, the one inside).
    fn server(&mut self) -> &mut netcode_std::Server<Self::Socket>;
}

/// Our client as the scenarios drive it, likewise.
pub trait OurClient {
    type Socket: Socket;
    /// Reads what arrived and sends what is due, at `t` seconds.
    fn step(&mut self, t: f64);
    /// The netcode-std client (for a mio client, the one inside).
    fn client(&mut self) -> &mut netcode_std::Client<Self::Socket>;
}

impl OurServer for netcode_std::Server {
    type Socket = std::net::UdpSocket;
    fn step(&mut self, t: f64) {
        self.update(t);
    }
    fn server(&mut self) -> &mut netcode_std::Server<Self::Socket> {
        self
    }
}

impl OurClient for netcode_std::Client {
    type Socket = std::net::UdpSocket;
    fn step(&mut self, t: f64) {
        self.update(t);
    }
    fn client(&mut self) -> &mut netcode_std::Client<Self::Socket> {
        self
    }
}

/// A netcode-mio server or client with a poll of its own: each step takes
/// the events that are ready (without waiting), hands them to
/// `handle_readable`, then updates.
pub struct Polled<T> {
    poll: Poll,
    events: Events,
    pub inner: T,
}

impl Polled<netcode_mio::Server> {
    /// Our mio server on 127.0.0.1, port 0, started with 4 slots by
    /// `start`: the tokens it is given are their generator's, stamped
    /// with their clock, so it must have left the restart rule's second
    /// before they are made.
    pub fn server() -> Self {
        let poll = Poll::new().expect("poll");
        let config = ServerConfig::new(PROTOCOL_ID, Key::from_bytes(PRIVATE_KEY));
        let mut server = netcode_mio::Server::new("127.0.0.1:0", config, poll.registry(), Token(0))
            .expect("bind our mio server");
        server.start(4).expect("start our mio server");
        Self::new(poll, server)
    }
}

impl Polled<netcode_mio::Client> {
    /// Our mio client on 127.0.0.1, port 0.
    pub fn client() -> Self {
        let poll = Poll::new().expect("poll");
        let config = netcode_mio::ClientConfig::default();
        let client = netcode_mio::Client::new("127.0.0.1:0", config, poll.registry(), Token(1))
            .expect("bind our mio client");
        Self::new(poll, client)
    }
}

impl<T> Polled<T> {
    fn new(poll: Poll, inner: T) -> Self {
        Self {
            poll,
            events: Events::with_capacity(64),
            inner,
        }
    }

    /// Hands each event ready now (no waiting) to `readable`, then calls
    /// `update`.
    fn pump(&mut self, t: f64, readable: fn(&mut T, Token, f64) -> bool, update: fn(&mut T, f64)) {
        self.poll
            .poll(&mut self.events, Some(Duration::ZERO))
            .expect("poll");
        for event in self.events.iter() {
            assert!(readable(&mut self.inner, event.token(), t), "our token");
        }
        update(&mut self.inner, t);
    }
}

impl OurServer for Polled<netcode_mio::Server> {
    type Socket = netcode_mio::RegisteredSocket;
    fn step(&mut self, t: f64) {
        use netcode_mio::Server;
        self.pump(t, Server::handle_readable, Server::update);
    }
    fn server(&mut self) -> &mut netcode_std::Server<Self::Socket> {
        &mut self.inner
    }
}

impl OurClient for Polled<netcode_mio::Client> {
    type Socket = netcode_mio::RegisteredSocket;
    fn step(&mut self, t: f64) {
        use netcode_mio::Client;
        self.pump(t, Client::handle_readable, Client::update);
    }
    fn client(&mut self) -> &mut netcode_std::Client<Self::Socket> {
        &mut self.inner
    }
}

/// Their client connects to our server (4 slots) with their token;
/// 1200-byte payloads flow both ways, checked byte for byte; then their
/// client disconnects, and our server reports the client's reason in the
/// slot and in an event.
pub fn their_client_talks_to_our_server_then_leaves(ours: &mut impl OurServer) {
    let address = ours.server().public_address();
    let mut client = official::Client::new("127.0.0.1:0".parse().unwrap(), 0.0).unwrap();
    client
        .connect(&their_token(address, PROTOCOL_ID, &PRIVATE_KEY))
        .unwrap();
    let payload = pattern();
    let (mut at_server, mut at_client) = (0, 0);
    run_until(
        "their client connects and payloads flow both ways",
        Instant::now(),
        |t| {
            client.update(t);
            ours.step(t);
            if client.state() == official::ClientState::Connected {
                client.send_packet(&payload).unwrap();
            }
            let server = ours.server();
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
        },
    );
    let server = ours.server();
    assert_eq!(server.client_id(0), Some(42));
    assert_eq!(server.client_user_data(0), Some(&[7; 256]));
    client.disconnect();
    run_until("our server sees the client leave", Instant::now(), |t| {
        ours.step(t);
        !ours.server().client_connected(0)
    });
    let server = ours.server();
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

/// Our client connects to their server with our token; 1200-byte payloads
/// flow both ways, checked byte for byte; then their server disconnects
/// our client, which reaches Disconnected.
pub fn our_client_talks_to_their_server_then_is_kicked(ours: &mut impl OurClient) {
    let mut server = their_server();
    let address = server.address();
    ours.client()
        .connect(&our_token(address, PROTOCOL_ID, &PRIVATE_KEY))
        .unwrap();
    let payload = pattern();
    let (mut at_server, mut at_client) = (0, 0);
    run_until(
        "our client connects and payloads flow both ways",
        Instant::now(),
        |t| {
            ours.step(t);
            server.update(t);
            let client = ours.client();
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
        },
    );
    assert_eq!(server.client_id(0), 43);
    assert_eq!(ours.client().client_index(), 0);
    assert_eq!(ours.client().max_clients(), 4);
    server.disconnect_client(0);
    run_until(
        "our client sees the server disconnect it",
        Instant::now(),
        |t| {
            server.update(t);
            ours.step(t);
            ours.client().state() == ClientState::Disconnected
        },
    );
}

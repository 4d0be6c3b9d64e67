//! A server on any storage and network clients of `netcode_proto`,
//! exchanging datagrams in frames of 10 ms, with what the server sent and
//! allocated counted: the rig of the tests that follow whole sessions
//! (`prepared_keys`, `keep_alives`).

use std::net::SocketAddr;

use netcode_proto::Key;
use netcode_proto::client::{Client, ClientState};
use netcode_proto::io::Output;
use netcode_proto::seeded::SeededRng;
use netcode_proto::server::{Server, ServerConfig, ServerStorage};
use netcode_proto::session::Sent;
use netcode_proto::time::Instant;
use netcode_proto::token::{ConnectTokenParams, generate_connect_token};

pub(crate) const PROTOCOL_ID: u64 = 0x1234;
pub(crate) const UNIX: u64 = 1_800_000_000;

pub(crate) fn server_address() -> SocketAddr {
    "127.0.0.1:40000".parse().unwrap()
}

pub(crate) fn client_address(n: usize) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 50_000 + n as u16))
}

/// Datagrams gathered from one side's output.
#[derive(Default)]
pub(crate) struct Outbox {
    pub(crate) datagrams: Vec<(SocketAddr, Vec<u8>)>,
}

impl<E> Output<E> for Outbox {
    fn send(&mut self, to: SocketAddr, datagram: &[u8]) {
        self.datagrams.push((to, datagram.to_vec()));
    }

    fn event(&mut self, _event: E) {}
}

/// An output that allocates nothing, for a side whose allocations are
/// counted: datagrams copied into inline arrays, events ignored.
pub(crate) struct Mailbox {
    pub(crate) datagrams: [(SocketAddr, [u8; 1300], usize); 64],
    pub(crate) count: usize,
}

impl Mailbox {
    pub(crate) fn new() -> Self {
        Self {
            datagrams: [(server_address(), [0; 1300], 0); 64],
            count: 0,
        }
    }

    /// Moves what it holds into `outbox`.
    fn empty_into(&mut self, outbox: &mut Outbox) {
        for (to, bytes, len) in &self.datagrams[..self.count] {
            outbox.datagrams.push((*to, bytes[..*len].to_vec()));
        }
        self.count = 0;
    }
}

impl<E> Output<E> for Mailbox {
    fn send(&mut self, to: SocketAddr, datagram: &[u8]) {
        let entry = &mut self.datagrams[self.count];
        entry.0 = to;
        entry.1[..datagram.len()].copy_from_slice(datagram);
        entry.2 = datagram.len();
        self.count += 1;
    }

    fn event(&mut self, _event: E) {}
}

/// A server on storage `S` and network clients, exchanging datagrams in
/// frames of 10 ms; the allocations made inside the server's `handle` are
/// counted.
pub(crate) struct Rig<S: ServerStorage> {
    pub(crate) server: Server<S>,
    pub(crate) clients: Vec<(SocketAddr, Client, Outbox)>,
    pub(crate) to_clients: Outbox,
    rng: SeededRng,
    pub(crate) now: Instant,
    pub(crate) server_allocations: u64,
    pub(crate) payloads_echoed: usize,
    /// Every datagram the server sent, as its destination and packet type
    /// (the prefix byte's low four bits), in order.
    pub(crate) sent: Vec<(SocketAddr, u8)>,
}

impl<S: ServerStorage> Rig<S> {
    pub(crate) fn new(storage: S, slots: usize) -> Self {
        let key = Key::from_bytes([3; 32]);
        let mut server = Server::new(
            ServerConfig::new(PROTOCOL_ID, key, server_address()),
            storage,
        )
        .unwrap();
        let mut rng = SeededRng::new(7);
        let mut to_clients = Outbox::default();
        server
            .start(Instant::ZERO, UNIX - 1, slots, &mut rng, &mut to_clients)
            .unwrap();
        Self {
            server,
            clients: Vec::new(),
            to_clients,
            rng,
            now: Instant::ZERO,
            server_allocations: 0,
            payloads_echoed: 0,
            sent: Vec::new(),
        }
    }

    /// Connects one more client (the `n`th ever) and runs until it is.
    pub(crate) fn connect(&mut self, n: usize) {
        let token = generate_connect_token(
            &ConnectTokenParams {
                protocol_id: PROTOCOL_ID,
                private_key: &Key::from_bytes([3; 32]),
                client_id: n as u64 + 1,
                public_addresses: &[server_address()],
                internal_addresses: None,
                create_timestamp: UNIX,
                expire_seconds: 30,
                timeout_seconds: 10,
                user_data: &[0; 256],
            },
            &mut self.rng,
        )
        .unwrap()
        .write()
        .unwrap();
        let mut client = Client::new();
        let mut outbox = Outbox::default();
        client.connect(self.now, &token, &mut outbox).unwrap();
        self.clients.push((client_address(n), client, outbox));
        let last = self.clients.len() - 1;
        for _ in 0..50 {
            self.frame();
            if self.clients[last].1.state() == ClientState::Connected {
                return;
            }
        }
        panic!("client {n} did not connect");
    }

    /// Every client sends one payload; the server echoes what it gets.
    pub(crate) fn send_payloads(&mut self) {
        for (_, client, outbox) in &mut self.clients {
            if client.state() == ClientState::Connected {
                let sent = client.send_payload(self.now, &[9; 100], outbox);
                assert_eq!(sent, Ok(Sent::Network));
            }
        }
        self.frame();
    }

    /// One frame: the server's update, the clients' datagrams to the
    /// server, the server's to the clients, then the clients' updates. What
    /// the server sends in a frame reaches the clients (and `sent`) in it.
    pub(crate) fn frame(&mut self) {
        self.now += core::time::Duration::from_millis(10);
        let now = self.now;
        self.server.update(now, UNIX, &mut self.to_clients);
        let mut mailbox = Mailbox::new();
        for (from, _, outbox) in &mut self.clients {
            for (_, mut bytes) in outbox.datagrams.drain(..) {
                let mut echo = [0u8; 1300];
                let (allocations, received) = counting_alloc::count(|| {
                    let received = self.server.handle(now, *from, &mut bytes, &mut mailbox);
                    received.map(|(index, payload)| {
                        echo[..payload.data.len()].copy_from_slice(payload.data);
                        (index, payload.data.len())
                    })
                });
                self.server_allocations += allocations;
                mailbox.empty_into(&mut self.to_clients);
                if let Some((index, len)) = received {
                    let _ =
                        self.server
                            .send_payload(now, index, &echo[..len], &mut self.to_clients);
                    self.payloads_echoed += 1;
                }
            }
        }
        for (to, mut bytes) in self.to_clients.datagrams.drain(..) {
            self.sent.push((to, bytes[0] & 0x0f));
            if let Some((_, client, outbox)) = self.clients.iter_mut().find(|c| c.0 == to) {
                let _ = client.handle(now, server_address(), &mut bytes, outbox);
            }
        }
        for (_, client, outbox) in &mut self.clients {
            client.update(now, outbox);
        }
    }

    pub(crate) fn disconnect(&mut self, client: usize) {
        let (_, c, outbox) = &mut self.clients[client];
        c.disconnect(self.now, outbox);
        self.frame();
    }
}

//! The prepared receive keys of connected clients (`Tables::prepared_keys`):
//! `HeapStorage` grows its table with the clients connected at once and
//! allocates only when that count reaches a new high, and a client whose
//! slot the table does not reach is served the same way, its key set up
//! per packet (STANDARD.md: *Connected Clients*, *Packet Processing*).

use std::net::SocketAddr;

use netcode_proto::Key;
use netcode_proto::client::{Client, ClientState};
use netcode_proto::io::Output;
use netcode_proto::seeded::SeededRng;
use netcode_proto::server::{ClientSlot, HeapStorage, Server, ServerConfig, ServerStorage, Tables};
use netcode_proto::session::Sent;
use netcode_proto::time::Instant;
use netcode_proto::token::{ConnectTokenParams, generate_connect_token};

const PROTOCOL_ID: u64 = 0x1234;
const UNIX: u64 = 1_800_000_000;

fn server_address() -> SocketAddr {
    "127.0.0.1:40000".parse().unwrap()
}

fn client_address(n: usize) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 50_000 + n as u16))
}

/// Datagrams gathered from one side's output.
#[derive(Default)]
struct Outbox {
    datagrams: Vec<(SocketAddr, Vec<u8>)>,
}

impl<E> Output<E> for Outbox {
    fn send(&mut self, to: SocketAddr, datagram: &[u8]) {
        self.datagrams.push((to, datagram.to_vec()));
    }

    fn event(&mut self, _event: E) {}
}

/// The server's output while its allocations are counted: inline arrays,
/// emptied into an [`Outbox`] afterwards.
struct Mailbox {
    datagrams: [(SocketAddr, [u8; 1300], usize); 16],
    count: usize,
}

impl Mailbox {
    fn new() -> Self {
        Self {
            datagrams: [(server_address(), [0; 1300], 0); 16],
            count: 0,
        }
    }

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
struct Rig<S: ServerStorage> {
    server: Server<S>,
    clients: Vec<(SocketAddr, Client, Outbox)>,
    to_clients: Outbox,
    rng: SeededRng,
    now: Instant,
    server_allocations: u64,
    payloads_echoed: usize,
}

impl<S: ServerStorage> Rig<S> {
    fn new(storage: S, slots: usize) -> Self {
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
        }
    }

    /// Connects one more client (the `n`th ever) and runs until it is.
    fn connect(&mut self, n: usize) {
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
    fn send_payloads(&mut self) {
        for (_, client, outbox) in &mut self.clients {
            if client.state() == ClientState::Connected {
                let sent = client.send_payload(self.now, &[9; 100], outbox);
                assert_eq!(sent, Ok(Sent::Network));
            }
        }
        self.frame();
    }

    /// One frame: the clients' datagrams to the server, the server's to
    /// the clients, then both sides' updates.
    fn frame(&mut self) {
        self.now += core::time::Duration::from_millis(10);
        let now = self.now;
        for (from, _, outbox) in &mut self.clients {
            for (_, mut bytes) in outbox.datagrams.drain(..) {
                let mut mailbox = Mailbox::new();
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
            if let Some((_, client, outbox)) = self.clients.iter_mut().find(|c| c.0 == to) {
                let _ = client.handle(now, server_address(), &mut bytes, outbox);
            }
        }
        for (_, client, outbox) in &mut self.clients {
            client.update(now, outbox);
        }
        self.server.update(now, UNIX, &mut self.to_clients);
    }

    fn disconnect(&mut self, client: usize) {
        let (_, c, outbox) = &mut self.clients[client];
        c.disconnect(self.now, outbox);
        self.frame();
    }
}

#[test]
fn heap_storage_grows_its_prepared_keys_with_the_clients_connected_at_once() {
    let mut rig = Rig::new(HeapStorage::new(256), 256);
    assert_eq!(
        rig.server.storage().prepared_key_slots(),
        0,
        "none before a connection"
    );

    rig.connect(0);
    assert_eq!(rig.server.storage().prepared_key_slots(), 16);
    for n in 1..40 {
        rig.connect(n);
    }
    assert_eq!(rig.server.num_connected_clients(), 40);
    // 16 reached on the first connection, then doubled to 32 and 64.
    assert_eq!(rig.server.storage().prepared_key_slots(), 64);
    assert_eq!(rig.server_allocations, 3, "one allocation per new high");

    // Clients leaving and others taking their slots allocate nothing.
    for client in 0..10 {
        rig.disconnect(client);
    }
    assert_eq!(rig.server.num_connected_clients(), 30);
    for n in 40..50 {
        rig.connect(n);
    }
    rig.send_payloads();
    assert_eq!(rig.server.num_connected_clients(), 40);
    assert_eq!(rig.server.storage().prepared_key_slots(), 64);
    assert_eq!(rig.server_allocations, 3, "no allocation below the high");
    assert_eq!(rig.payloads_echoed, 40);
}

#[test]
fn heap_storage_never_grows_its_prepared_keys_past_the_slots() {
    let mut rig = Rig::new(HeapStorage::new(5), 5);
    for n in 0..5 {
        rig.connect(n);
    }
    assert_eq!(rig.server.storage().prepared_key_slots(), 5);
    let mut reserved = HeapStorage::new(5);
    reserved.reserve_prepared_keys(1000);
    assert_eq!(reserved.prepared_key_slots(), 5);
}

/// Storage whose prepared key table reaches only the first `reach` slots.
struct ShortKeyTable {
    inner: HeapStorage,
    reach: usize,
}

impl ServerStorage for ShortKeyTable {
    fn tables(&mut self) -> Tables<'_> {
        let mut tables = self.inner.tables();
        let keys = std::mem::take(&mut tables.prepared_keys);
        let reach = self.reach.min(keys.len());
        tables.prepared_keys = &mut keys[..reach];
        tables
    }

    fn slots(&self) -> &[ClientSlot] {
        self.inner.slots()
    }

    fn reach_prepared_key(&mut self, index: usize) {
        self.inner.reach_prepared_key(index);
    }
}

#[test]
fn a_client_past_the_prepared_keys_is_served_with_its_key_set_up_per_packet() {
    for reach in [0, 2] {
        let storage = ShortKeyTable {
            inner: HeapStorage::new(4),
            reach,
        };
        let mut rig = Rig::new(storage, 4);
        for n in 0..4 {
            rig.connect(n);
        }
        for _ in 0..3 {
            rig.send_payloads();
        }
        assert_eq!(
            rig.payloads_echoed, 12,
            "reach {reach}: every payload echoed"
        );
        assert_eq!(rig.server.num_connected_clients(), 4);

        // A replayed datagram is refused past the table as within it.
        let (from, client, outbox) = &mut rig.clients[3];
        let now = rig.now;
        assert_eq!(
            client.send_payload(now, &[1; 10], outbox),
            Ok(Sent::Network)
        );
        let (_, datagram) = outbox.datagrams.pop().unwrap();
        let from = *from;
        let mut first = datagram.clone();
        let mut again = datagram;
        let mut sink = Outbox::default();
        assert!(
            rig.server
                .handle(now, from, &mut first, &mut sink)
                .is_some()
        );
        assert!(
            rig.server
                .handle(now, from, &mut again, &mut sink)
                .is_none()
        );
    }
}

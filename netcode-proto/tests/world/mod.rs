//! A deterministic world for scenario tests: one server and any number of
//! clients wired through the network simulator, on simulated time.
#![allow(dead_code, unreachable_pub)]

use std::net::SocketAddr;
use std::time::Duration;

use netcode_proto::Key;
use netcode_proto::client::{Client, ClientEvent, ClientState};
use netcode_proto::constants::USER_DATA_BYTES;
use netcode_proto::seeded::SeededRng;
use netcode_proto::server::{HeapStorage, Server, ServerConfig, ServerEvent};
use netcode_proto::sim::{NetworkSimulator, SimConfig};
use netcode_proto::token::{ConnectTokenParams, generate_connect_token};

pub const PROTOCOL_ID: u64 = 0x1122_3344_5566_7788;
pub const PRIVATE_KEY: [u8; 32] = [
    0x60, 0x6a, 0xbe, 0x6e, 0xc9, 0x19, 0x10, 0xea, 0x9a, 0x65, 0x62, 0xf6, 0x6f, 0x2b, 0x30, 0xe4,
    0x43, 0x71, 0xd6, 0x2c, 0xd1, 0x99, 0x27, 0x26, 0x6b, 0x3c, 0x60, 0xf4, 0xb7, 0x15, 0xab, 0xa1,
];
/// Unix time at the start of every world.
pub const UNIX_START: u64 = 1_800_000_000;
/// One frame of the reference's tests.
pub const FRAME: Duration = Duration::from_millis(100);

/// A datagram filter: return false to drop it (from, to, bytes).
pub type Filter = Box<dyn FnMut(SocketAddr, SocketAddr, &[u8]) -> bool>;

pub struct Peer {
    pub address: SocketAddr,
    pub client: Client,
    pub events: Vec<ClientEvent>,
    pub received: Vec<(u64, Vec<u8>)>,
    /// Whether `update` is called for this client.
    pub updating: bool,
}

pub struct World {
    pub sim: NetworkSimulator,
    pub now: Duration,
    pub unix: u64,
    pub server_address: SocketAddr,
    pub server: Server<HeapStorage>,
    pub server_events: Vec<ServerEvent>,
    pub server_received: Vec<(usize, u64, Vec<u8>)>,
    pub server_updating: bool,
    pub peers: Vec<Peer>,
    pub rng: SeededRng,
    pub filter: Option<Filter>,
    /// Every datagram that crossed the network, for replay tests.
    pub captured: Vec<(SocketAddr, SocketAddr, Vec<u8>)>,
    pub capture: bool,
    /// Peer index by address, for O(1) delivery.
    pub by_address: std::collections::HashMap<SocketAddr, usize>,
}

impl World {
    pub fn new(sim: SimConfig, seed: u64, slots: usize, max_clients: usize) -> Self {
        let server_address: SocketAddr = "[::1]:40000".parse().unwrap();
        Self::with_server_address(sim, seed, slots, max_clients, server_address)
    }

    pub fn with_server_address(
        sim: SimConfig,
        seed: u64,
        slots: usize,
        max_clients: usize,
        server_address: SocketAddr,
    ) -> Self {
        Self::with_storage(
            sim,
            seed,
            HeapStorage::new(slots),
            max_clients,
            server_address,
        )
    }

    pub fn with_storage(
        sim: SimConfig,
        seed: u64,
        storage: HeapStorage,
        max_clients: usize,
        server_address: SocketAddr,
    ) -> Self {
        let config = ServerConfig::new(PROTOCOL_ID, Key::from_bytes(PRIVATE_KEY), server_address);
        let server = Server::new(config, storage).unwrap();
        let mut world = Self {
            sim: NetworkSimulator::new(sim, seed),
            now: Duration::from_secs(1000),
            unix: UNIX_START,
            server_address,
            server,
            server_events: Vec::new(),
            server_received: Vec::new(),
            server_updating: true,
            peers: Vec::new(),
            rng: SeededRng::new(seed),
            filter: None,
            captured: Vec::new(),
            capture: false,
            by_address: std::collections::HashMap::new(),
        };
        world.start_server(max_clients);
        world
    }

    /// A one-slot world on a perfect network whose one client (peer 0) is
    /// connected with a token of `expire` and `timeout` seconds.
    pub fn one_connected(seed: u64, expire: i64, timeout: i32) -> (Self, usize) {
        let mut w = Self::new(SimConfig::default(), seed, 1, 1);
        let c = w.add_client("[::]:50000");
        let server = w.server_address;
        let token = w.token_for(1, &[server], expire, timeout);
        w.connect(c, &token);
        assert!(w.run_until(50, |w| w.state(c) == ClientState::Connected));
        (w, c)
    }

    pub fn start_server(&mut self, max_clients: usize) {
        let mut out = self
            .sim
            .output(self.now, self.server_address, &mut self.server_events);
        self.server
            .start(self.now, self.unix, max_clients, &mut self.rng, &mut out)
            .unwrap();
    }

    pub fn add_client(&mut self, address: &str) -> usize {
        let address: SocketAddr = address.parse().unwrap();
        self.by_address.insert(address, self.peers.len());
        self.peers.push(Peer {
            address,
            client: Client::new(),
            events: Vec::new(),
            received: Vec::new(),
            updating: true,
        });
        self.peers.len() - 1
    }

    /// A token for `client_id` listing `addresses` (the server's by default).
    pub fn token_for(
        &mut self,
        client_id: u64,
        addresses: &[SocketAddr],
        expire: i64,
        timeout: i32,
    ) -> [u8; 2048] {
        let key = Key::from_bytes(PRIVATE_KEY);
        let user_data = user_data_for(client_id);
        let params = ConnectTokenParams {
            protocol_id: PROTOCOL_ID,
            private_key: &key,
            client_id,
            public_addresses: addresses,
            internal_addresses: None,
            create_timestamp: self.unix,
            expire_seconds: expire,
            timeout_seconds: timeout,
            user_data: &user_data,
        };
        generate_connect_token(&params, &mut self.rng)
            .unwrap()
            .write()
            .unwrap()
    }

    pub fn token(&mut self, client_id: u64) -> [u8; 2048] {
        let server = self.server_address;
        self.token_for(client_id, &[server], 30, 15)
    }

    pub fn connect(&mut self, peer: usize, token: &[u8]) {
        let now = self.now;
        let p = &mut self.peers[peer];
        let mut out = self.sim.output(now, p.address, &mut p.events);
        let _ = p.client.connect(now, token, &mut out);
    }

    pub fn state(&self, peer: usize) -> ClientState {
        self.peers[peer].client.state()
    }

    /// Advances time by `dt`: delivers every due datagram, then updates the
    /// clients and the server, as the reference's test loops do.
    pub fn step(&mut self, dt: Duration) {
        self.now += dt;
        self.unix = UNIX_START + (self.now.as_secs() - 1000);
        let now = self.now;
        while let Some(mut d) = self.sim.receive_any(now) {
            if let Some(filter) = self.filter.as_mut()
                && !filter(d.from, d.to, &d.bytes)
            {
                continue;
            }
            if self.capture {
                self.captured.push((d.from, d.to, d.bytes.clone()));
            }
            if d.to == self.server_address {
                let mut out = self
                    .sim
                    .output(now, self.server_address, &mut self.server_events);
                if let Some((index, payload)) =
                    self.server.handle(now, d.from, &mut d.bytes, &mut out)
                {
                    self.server_received
                        .push((index, payload.sequence, payload.data.to_vec()));
                }
            } else if let Some(p) = self
                .by_address
                .get(&d.to)
                .and_then(|&i| self.peers.get_mut(i))
            {
                let mut out = self.sim.output(now, p.address, &mut p.events);
                if let Some(payload) = p.client.handle(now, d.from, &mut d.bytes, &mut out) {
                    p.received.push((payload.sequence, payload.data.to_vec()));
                }
            }
        }
        for p in self.peers.iter_mut().filter(|p| p.updating) {
            let mut out = self.sim.output(now, p.address, &mut p.events);
            p.client.update(now, &mut out);
        }
        if self.server_updating {
            let mut out = self
                .sim
                .output(now, self.server_address, &mut self.server_events);
            self.server.update(now, self.unix, &mut out);
        }
    }

    /// Steps frame by frame until `done` holds, at most `max_frames` times.
    pub fn run_until(&mut self, max_frames: usize, mut done: impl FnMut(&World) -> bool) -> bool {
        for _ in 0..max_frames {
            if done(self) {
                return true;
            }
            self.step(FRAME);
        }
        done(self)
    }

    pub fn client_send(&mut self, peer: usize, payload: &[u8]) {
        let now = self.now;
        let p = &mut self.peers[peer];
        let mut out = self.sim.output(now, p.address, &mut p.events);
        let _ = p.client.send_payload(now, payload, &mut out).unwrap();
    }

    pub fn server_send(&mut self, index: usize, payload: &[u8]) {
        let mut out = self
            .sim
            .output(self.now, self.server_address, &mut self.server_events);
        let _ = self
            .server
            .send_payload(self.now, index, payload, &mut out)
            .unwrap();
    }

    pub fn client_disconnect(&mut self, peer: usize) {
        let now = self.now;
        let p = &mut self.peers[peer];
        let mut out = self.sim.output(now, p.address, &mut p.events);
        p.client.disconnect(now, &mut out);
    }

    pub fn server_disconnect(&mut self, index: usize) {
        let mut out = self
            .sim
            .output(self.now, self.server_address, &mut self.server_events);
        self.server.disconnect_client(index, &mut out);
    }
}

pub fn user_data_for(client_id: u64) -> [u8; USER_DATA_BYTES] {
    core::array::from_fn(|i| (client_id as usize).wrapping_mul(31).wrapping_add(i) as u8)
}

/// A payload of `len` bytes whose byte i is `(i + salt) % 256`.
pub fn pattern(len: usize, salt: usize) -> Vec<u8> {
    (0..len).map(|i| ((i + salt) % 256) as u8).collect()
}

/// The reference tests' lossy network.
pub fn lossy() -> SimConfig {
    SimConfig {
        latency: Duration::from_millis(250),
        jitter: Duration::from_millis(250),
        loss_percent: 5.0,
        duplicate_percent: 10.0,
        ..SimConfig::default()
    }
}

pub fn perfect() -> SimConfig {
    SimConfig::default()
}

//! The netcode clients of the UDP run, all on the calling thread, one set
//! per implementation (the bare clients of the floor are in `floor.rs`;
//! what every set keeps and counts, in `echo.rs`).
//!
//! * **netcode-mio**: N clients in one `mio::Poll`: `handle_readable` per
//!   event, then their queues and windows, each client's window sent inside
//!   one `client.batch()` (one `sendmmsg`); `update` for all every 5 ms.
//! * **netcode-official**: each client's socket is private and read only in
//!   `update`, so the loop calls every client's `update` per pass.
//! * **renetcode**: sans-IO clients on the bench's non-blocking sockets in
//!   a mio poll, read until they would block, `update` every 5 ms.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use netcode_bench::fixtures::{
    EXPIRE_SECONDS, PRIVATE_KEY, PROTOCOL_ID, TIMEOUT_SECONDS, USER_DATA, payload,
};
use netcode_mio::mio::net::UdpSocket;
use netcode_mio::mio::{Events, Poll, Token};
use netcode_mio::proto::Key;
use netcode_mio::{ClientConfig, ClientState, ConnectTokenBuilder, Registered};
use renetcode::{ClientAuthentication, ConnectToken, NetcodeClient};

use super::clock::{Clock, unix_now};
use super::echo::{EchoClients, Flow, SWEEP_SECONDS, Tally};
use super::floor::BareClients;
use super::kinds::{ClientKind, PAYLOAD_BYTES};
use super::net::{MAX_WAIT, poll, retry, udp_socket};

/// `n` clients of `which`, connecting to `server`.
pub(super) fn new_clients(
    which: ClientKind,
    n: usize,
    server: SocketAddr,
    clock: Clock,
) -> Result<Box<dyn EchoClients>, String> {
    Ok(match which {
        ClientKind::Mio => Box::new(MioClients::new(n, server)?),
        ClientKind::Official => Box::new(OfficialClients::new(n, server, clock)?),
        ClientKind::Renet => Box::new(RenetClients::new(n, server)?),
        ClientKind::Bare => Box::new(BareClients::new(n, server)?),
    })
}

struct MioClients {
    poll: Poll,
    events: Events,
    clients: Vec<netcode_mio::Client>,
    flows: Vec<Flow>,
    ready: Vec<usize>,
    connected: usize,
    next_sweep: f64,
    payload: Vec<u8>,
}

impl MioClients {
    fn new(n: usize, server: SocketAddr) -> Result<Self, String> {
        let poll = Poll::new().map_err(|e| format!("poll: {e}"))?;
        let key = Key::from_bytes(PRIVATE_KEY);
        let mut clients = Vec::with_capacity(n);
        for i in 0..n {
            let mut client = netcode_mio::Client::new(
                "127.0.0.1:0",
                ClientConfig::default(),
                poll.registry(),
                Token(i),
            )
            .map_err(|e| format!("netcode-mio client {i}: {e}"))?;
            let token = ConnectTokenBuilder::new(PROTOCOL_ID, &key, i as u64 + 1)
                .server_addresses([server])
                .expire_seconds(EXPIRE_SECONDS as i64)
                .timeout_seconds(TIMEOUT_SECONDS)
                .user_data(&USER_DATA)
                .generate()
                .map_err(|e| format!("netcode-mio token: {e}"))?;
            client
                .connect(&token)
                .map_err(|e| format!("netcode-mio client {i}: {e}"))?;
            clients.push(client);
        }
        Ok(Self {
            poll,
            events: Events::with_capacity(1024),
            clients,
            flows: vec![Flow::default(); n],
            ready: Vec::with_capacity(n),
            connected: 0,
            next_sweep: 0.0,
            payload: payload(PAYLOAD_BYTES),
        })
    }
}

impl EchoClients for MioClients {
    fn connected(&self) -> usize {
        self.connected
    }

    fn turn(&mut self, clock: Clock, window: usize, tally: &mut Tally) {
        let _ = poll(&mut self.poll, &mut self.events, MAX_WAIT);
        let now = clock.now();
        self.ready.clear();
        for event in self.events.iter() {
            let token = event.token();
            if let Some(client) = self.clients.get_mut(token.0) {
                client.handle_readable(token, now);
                self.ready.push(token.0);
            }
        }
        if now >= self.next_sweep {
            // Every client: connection requests, keep-alives, timeouts,
            // stalled windows.
            self.next_sweep = now + SWEEP_SECONDS;
            for client in &mut self.clients {
                client.update(now);
            }
            self.connected = (self.clients.iter())
                .filter(|c| c.state() == ClientState::Connected)
                .count();
            self.ready.clear();
            self.ready.extend(0..self.clients.len());
        }
        for &i in &self.ready {
            let (client, flow) = (&mut self.clients[i], &mut self.flows[i]);
            while let Some(packet) = client.receive_packet() {
                flow.echo(packet.data(), tally);
                client.free_packet(packet);
            }
            if window > 0 && client.state() == ClientState::Connected {
                let room = flow.room(now, window, tally);
                let mut batch = client.batch();
                for _ in 0..room {
                    flow.stamp(0, &mut self.payload);
                    if batch.send_packet(&self.payload).is_ok() {
                        flow.sent(now);
                    }
                }
            }
        }
    }
}

struct OfficialClients {
    clients: Vec<netcode::Client>,
    flows: Vec<Flow>,
    connected: usize,
    payload: Vec<u8>,
}

impl OfficialClients {
    fn new(n: usize, server: SocketAddr, clock: Clock) -> Result<Self, String> {
        let mut clients = Vec::with_capacity(n);
        for i in 0..n {
            let address = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
            let mut client = netcode::Client::new(address, clock.now())
                .map_err(|e| format!("netcode-official client {i}: {e}"))?;
            let token = netcode::generate_connect_token(
                &[server],
                &[server],
                EXPIRE_SECONDS as i32,
                TIMEOUT_SECONDS,
                i as u64 + 1,
                PROTOCOL_ID,
                &PRIVATE_KEY,
                &USER_DATA,
            )
            .map_err(|e| format!("netcode-official token: {e}"))?;
            client
                .connect(&token)
                .map_err(|e| format!("netcode-official client {i}: {e}"))?;
            clients.push(client);
        }
        Ok(Self {
            clients,
            flows: vec![Flow::default(); n],
            connected: 0,
            payload: payload(PAYLOAD_BYTES),
        })
    }
}

impl EchoClients for OfficialClients {
    fn connected(&self) -> usize {
        self.connected
    }

    /// Never waits: each client's socket is its own, read only in
    /// `update`, so every client is updated every turn.
    fn turn(&mut self, clock: Clock, window: usize, tally: &mut Tally) {
        let now = clock.now();
        let mut connected = 0;
        for (client, flow) in self.clients.iter_mut().zip(&mut self.flows) {
            client.update(now);
            while let Some((data, _sequence)) = client.receive_packet() {
                flow.echo(&data, tally);
            }
            if client.state() == netcode::ClientState::Connected {
                connected += 1;
                if window > 0 {
                    for _ in 0..flow.room(now, window, tally) {
                        flow.stamp(0, &mut self.payload);
                        if client.send_packet(&self.payload).is_ok() {
                            flow.sent(now);
                        }
                    }
                }
            }
        }
        self.connected = connected;
    }
}

struct RenetClient {
    client: NetcodeClient,
    socket: UdpSocket,
    flow: Flow,
}

struct RenetClients {
    poll: Poll,
    events: Events,
    clients: Vec<RenetClient>,
    ready: Vec<usize>,
    connected: usize,
    last_sweep: Option<f64>,
    buffer: Box<[u8; 1500]>,
    payload: Vec<u8>,
}

impl RenetClients {
    fn new(n: usize, server: SocketAddr) -> Result<Self, String> {
        let poll = Poll::new().map_err(|e| format!("poll: {e}"))?;
        let mut clients = Vec::with_capacity(n);
        for i in 0..n {
            let socket = udp_socket(poll.registry(), Token(i), Ipv4Addr::LOCALHOST)
                .map_err(|e| format!("renetcode client {i}: {e}"))?;
            let connect_token = ConnectToken::generate(
                unix_now(),
                PROTOCOL_ID,
                EXPIRE_SECONDS,
                i as u64 + 1,
                TIMEOUT_SECONDS,
                vec![server],
                Some(&USER_DATA),
                &PRIVATE_KEY,
            )
            .map_err(|e| format!("renetcode token: {e:?}"))?;
            let client =
                NetcodeClient::new(unix_now(), ClientAuthentication::Secure { connect_token })
                    .map_err(|e| format!("renetcode client {i}: {e:?}"))?;
            clients.push(RenetClient {
                client,
                socket,
                flow: Flow::default(),
            });
        }
        Ok(Self {
            poll,
            events: Events::with_capacity(1024),
            clients,
            ready: Vec::with_capacity(n),
            connected: 0,
            last_sweep: None,
            buffer: Box::new([0; 1500]),
            payload: payload(PAYLOAD_BYTES),
        })
    }
}

impl EchoClients for RenetClients {
    fn connected(&self) -> usize {
        self.connected
    }

    fn turn(&mut self, clock: Clock, window: usize, tally: &mut Tally) {
        let _ = poll(&mut self.poll, &mut self.events, MAX_WAIT);
        let now = clock.now();
        let buffer = &mut self.buffer;
        self.ready.clear();
        for event in self.events.iter() {
            let i = event.token().0;
            let Some(RenetClient {
                client,
                socket,
                flow,
            }) = self.clients.get_mut(i)
            else {
                continue;
            };
            loop {
                let len = match socket.recv_from(&mut buffer[..]) {
                    Ok((len, _from)) => len,
                    Err(e) if retry(&e) => continue,
                    Err(_) => break,
                };
                if let Some(payload) = client.process_packet(&mut buffer[..len]) {
                    flow.echo(payload, tally);
                }
            }
            self.ready.push(i);
        }
        let last = *self.last_sweep.get_or_insert(now);
        if now - last >= SWEEP_SECONDS {
            // Every client: its timers, and whatever protocol packet is due
            // (requests, responses, keep-alives).
            self.last_sweep = Some(now);
            let elapsed = Duration::from_secs_f64(now - last);
            for RenetClient { client, socket, .. } in &mut self.clients {
                if let Some((packet, addr)) = client.update(elapsed) {
                    let _ = socket.send_to(packet, addr);
                }
            }
            self.connected = (self.clients.iter())
                .filter(|c| c.client.is_connected())
                .count();
            self.ready.clear();
            self.ready.extend(0..self.clients.len());
        }
        if window == 0 {
            return;
        }
        for &i in &self.ready {
            let RenetClient {
                client,
                socket,
                flow,
            } = &mut self.clients[i];
            if !client.is_connected() {
                continue;
            }
            for _ in 0..flow.room(now, window, tally) {
                flow.stamp(0, &mut self.payload);
                if let Ok((addr, packet)) = client.generate_payload_packet(&self.payload)
                    && socket.send_to(packet, addr).is_ok()
                {
                    flow.sent(now);
                }
            }
        }
    }
}

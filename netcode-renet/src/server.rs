//! The server side: a [`RenetServer`]'s connections carried by a
//! `netcode_std::Server`, one netcode slot per renet client id, in the
//! shape of renet_netcode's `NetcodeServerTransport`.

use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use netcode_std::constants::{MAX_PAYLOAD_BYTES, USER_DATA_BYTES};
use netcode_std::transport::Socket;
use netcode_std::{SendError, Server, ServerConfig, ServerEvent, ToAddress};
use renet::{ClientId, RenetServer};

use crate::error::{NetcodeTransportError, SetupError};
use crate::framing::{self, PayloadSink};
use crate::reassembly::Inbound;
use crate::stats::FramingStats;

/// What the adapter keeps for one occupied slot.
#[derive(Debug)]
struct Connection {
    client_id: ClientId,
    inbound: Inbound,
    /// The transport's time when a payload last came from this client.
    last_received: Duration,
}

/// A renet server's transport over a netcode 1.02 server: connects and
/// disconnects become renet connections, renet's packets travel as netcode
/// payloads (split in two when over 1200 bytes, see the crate docs).
///
/// Drive it as renet_netcode's: each tick, [`update`](Self::update) before
/// the game reads messages and [`send_packets`](Self::send_packets) after
/// it sends them.
///
/// The type parameter is the host's socket type: [`UdpSocket`] for
/// [`new`](Self::new); any [`Socket`] through
/// [`from_server`](Self::from_server).
#[derive(Debug)]
pub struct NetcodeServerTransport<S: Socket = UdpSocket> {
    host: Server<S>,
    /// By slot.
    connections: Vec<Option<Connection>>,
    slots: HashMap<ClientId, usize>,
    /// The sum of the durations given to `update`.
    elapsed: Duration,
    stats: FramingStats,
    scratch: [u8; MAX_PAYLOAD_BYTES],
}

impl NetcodeServerTransport<UdpSocket> {
    /// A transport on a new netcode server at the public address `address`
    /// (for example `"127.0.0.1:5000"`; see `netcode_std::Server::new` for
    /// how it binds), started with `max_clients` slots.
    pub fn new(
        address: impl ToAddress,
        config: ServerConfig,
        max_clients: usize,
    ) -> Result<Self, SetupError> {
        let mut server = Server::new(address, config)?;
        server.start(max_clients)?;
        Ok(Self::from_server(server))
    }
}

impl<S: Socket> NetcodeServerTransport<S> {
    /// A transport on a netcode server made any way (dual stack, another
    /// socket type, other socket options); start it before the first
    /// update. Clients it already holds are taken on at that update only if
    /// their connect events are still queued.
    pub fn from_server(server: Server<S>) -> Self {
        Self {
            host: server,
            connections: Vec::new(),
            slots: HashMap::new(),
            elapsed: Duration::ZERO,
            stats: FramingStats::default(),
            scratch: [0; MAX_PAYLOAD_BYTES],
        }
    }

    /// Advances the transport by `duration` and receives from the network:
    /// new netcode clients become renet connections, departed ones are
    /// removed, payloads go to renet (split packets joined first), and the
    /// clients renet disconnected get netcode disconnect packets.
    ///
    /// Fails only when the netcode server is not running.
    pub fn update(
        &mut self,
        duration: Duration,
        server: &mut RenetServer,
    ) -> Result<(), NetcodeTransportError> {
        if !self.host.running() {
            return Err(NetcodeTransportError::NotRunning);
        }
        self.elapsed = self.elapsed.saturating_add(duration);
        self.host.update(self.elapsed.as_secs_f64());
        self.apply_events(server);
        for (index, connection) in self.connections.iter_mut().enumerate() {
            let Some(connection) = connection else {
                continue;
            };
            while let Some(payload) = self.host.receive_packet(index) {
                connection.last_received = self.elapsed;
                let packet = connection.inbound.accept(
                    payload.data(),
                    payload.sequence(),
                    self.elapsed,
                    &mut self.stats,
                );
                if let Some(packet) = packet {
                    // The connection exists: it was added with the slot.
                    let _ = server.process_packet_from(packet, connection.client_id);
                }
                self.host.free_packet(payload);
            }
            connection.inbound.expire(self.elapsed, &mut self.stats);
        }
        for client_id in server.disconnections_id() {
            match self.slots.get(&client_id) {
                Some(&index) => self.host.disconnect_client(index),
                // Not a netcode client (a renet local client, say).
                None => server.remove_connection(client_id),
            }
        }
        self.apply_events(server);
        Ok(())
    }

    /// Mirrors the host's connects and disconnects in the slot map and in
    /// renet.
    fn apply_events(&mut self, server: &mut RenetServer) {
        let slots = self.host.max_clients();
        if self.connections.len() < slots {
            self.connections.resize_with(slots, || None);
        }
        while let Some(event) = self.host.poll_event() {
            match event {
                ServerEvent::ClientConnected {
                    client_index,
                    client_id,
                    ..
                } => {
                    if let Some(slot) = self.connections.get_mut(client_index) {
                        *slot = Some(Connection {
                            client_id,
                            inbound: Inbound::default(),
                            last_received: self.elapsed,
                        });
                        self.slots.insert(client_id, client_index);
                        server.add_connection(client_id);
                    }
                }
                ServerEvent::ClientDisconnected {
                    client_index,
                    client_id,
                    ..
                } => {
                    if let Some(slot) = self.connections.get_mut(client_index) {
                        *slot = None;
                    }
                    if self.slots.get(&client_id) == Some(&client_index) {
                        self.slots.remove(&client_id);
                    }
                    server.remove_connection(client_id);
                }
            }
        }
    }

    /// Sends every connected client the packets renet has for it, each in
    /// one netcode payload or two, together (one `sendmmsg` per 32
    /// datagrams on Linux). A packet that cannot be sent is logged and
    /// counted in [`stats`](Self::stats), and the rest of that client's
    /// packets this tick are counted and skipped, as renet_netcode does.
    pub fn send_packets(&mut self, server: &mut RenetServer) {
        let mut batch = self.host.batch();
        for client_id in server.clients_id() {
            let Some(&index) = self.slots.get(&client_id) else {
                continue;
            };
            let Ok(packets) = server.get_packets_to_send(client_id) else {
                continue;
            };
            let mut sink = SlotSink {
                host: &mut batch,
                index,
            };
            for (sent, packet) in packets.iter().enumerate() {
                let result =
                    framing::send_packet(packet, &mut sink, &mut self.scratch, &mut self.stats);
                if let Err(error) = result {
                    let skipped = packets.len() - sent;
                    self.stats.packets_not_sent += skipped as u64;
                    log::error!(
                        "netcode-renet: {skipped} packet(s) to client {client_id} not sent: {error}"
                    );
                    break;
                }
            }
        }
    }

    /// Disconnects every client at once, with netcode's disconnect packets,
    /// and removes them from renet: for shutting down. Otherwise use
    /// `RenetServer::disconnect_all`, which the next update carries out.
    pub fn disconnect_all(&mut self, server: &mut RenetServer) {
        self.host.disconnect_all_clients();
        self.apply_events(server);
    }

    /// The server's public addresses: the one connect tokens list, and a
    /// dual-stack server's second.
    pub fn addresses(&self) -> Vec<SocketAddr> {
        let mut addresses = vec![self.host.public_address()];
        addresses.extend(self.host.secondary_address());
        addresses
    }

    /// Slots the server opened.
    pub fn max_clients(&self) -> usize {
        self.host.max_clients()
    }

    /// Clients connected now.
    pub fn connected_clients(&self) -> usize {
        self.host.num_connected_clients()
    }

    /// The netcode slot of renet client `client_id`, while connected.
    pub fn client_slot(&self, client_id: ClientId) -> Option<usize> {
        self.slots.get(&client_id).copied()
    }

    /// The renet client id of the client in netcode slot `index`.
    pub fn slot_client_id(&self, index: usize) -> Option<ClientId> {
        self.connections.get(index)?.as_ref().map(|c| c.client_id)
    }

    /// The user data from the connect token of client `client_id`.
    pub fn user_data(&self, client_id: ClientId) -> Option<[u8; USER_DATA_BYTES]> {
        let index = self.client_slot(client_id)?;
        self.host.client_user_data(index).copied()
    }

    /// The address of client `client_id`.
    pub fn client_addr(&self, client_id: ClientId) -> Option<SocketAddr> {
        self.host.client_address(self.client_slot(client_id)?)
    }

    /// How long since a payload last came from client `client_id` (or
    /// since it connected), in the time given to `update`. Unlike
    /// renet_netcode's, it does not count netcode keep-alives, which the
    /// host keeps to itself; the host still times silent clients out by
    /// their token's timeout.
    pub fn time_since_last_received_packet(&self, client_id: ClientId) -> Option<Duration> {
        let index = self.client_slot(client_id)?;
        let connection = self.connections.get(index)?.as_ref()?;
        Some(self.elapsed.saturating_sub(connection.last_received))
    }

    /// The framing's counters.
    pub fn stats(&self) -> FramingStats {
        self.stats
    }

    /// The netcode server, for what the adapter does not wrap: counters,
    /// sockets, `poll_timeout`, `wait`.
    pub fn host(&self) -> &Server<S> {
        &self.host
    }

    /// The netcode server, mutably. Receiving payloads or polling events
    /// through it takes them from renet.
    pub fn host_mut(&mut self) -> &mut Server<S> {
        &mut self.host
    }
}

/// One slot of the server as the framing's sink.
struct SlotSink<'a, S: Socket> {
    host: &'a mut Server<S>,
    index: usize,
}

impl<S: Socket> PayloadSink for SlotSink<'_, S> {
    fn next_sequence(&self) -> u64 {
        self.host.next_packet_sequence(self.index).unwrap_or(0)
    }

    fn send(&mut self, payload: &[u8]) -> Result<(), SendError> {
        self.host.send_packet(self.index, payload)
    }
}

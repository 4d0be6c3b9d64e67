//! The client side: a [`RenetClient`]'s connection carried by a
//! `netcode_std::Client`, in the shape of renet_netcode's
//! `NetcodeClientTransport`.

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use netcode_std::constants::MAX_PAYLOAD_BYTES;
use netcode_std::transport::Socket;
use netcode_std::{Client, ClientState, SendError, ToAddress};
use renet::RenetClient;

use crate::error::{NetcodeTransportError, SetupError};
use crate::framing::{self, PayloadSink};
use crate::reassembly::Inbound;
use crate::stats::FramingStats;

/// A renet client's transport over a netcode 1.02 client: the netcode
/// state drives renet's connecting / connected / disconnected status, and
/// renet's packets travel as netcode payloads (split in two when over 1200
/// bytes, see the crate docs).
///
/// Drive it as renet_netcode's: each tick, [`update`](Self::update) before
/// the game reads messages and [`send_packets`](Self::send_packets) after
/// it sends them.
#[derive(Debug)]
pub struct NetcodeClientTransport<S: Socket = UdpSocket> {
    host: Client<S>,
    inbound: Inbound,
    /// The sum of the durations given to `update`.
    elapsed: Duration,
    /// When a payload last came from the server (or the transport was made).
    last_received: Duration,
    stats: FramingStats,
    scratch: [u8; MAX_PAYLOAD_BYTES],
}

impl NetcodeClientTransport<UdpSocket> {
    /// A transport on a new netcode client bound to `address` (for example
    /// `"0.0.0.0:0"`), connecting with `connect_token`, the 2048 bytes the
    /// web backend issued (`ConnectTokenBuilder`, or any netcode 1.02
    /// backend).
    pub fn new(address: impl ToAddress, connect_token: &[u8]) -> Result<Self, SetupError> {
        let mut client = Client::new(address)?;
        client.connect(connect_token)?;
        Ok(Self::from_client(client))
    }
}

impl<S: Socket> NetcodeClientTransport<S> {
    /// A transport on a netcode client made any way (dual stack, another
    /// socket type) that has started connecting: an idle client makes the
    /// first update fail with `Disconnected`.
    pub fn from_client(client: Client<S>) -> Self {
        Self {
            host: client,
            inbound: Inbound::default(),
            elapsed: Duration::ZERO,
            last_received: Duration::ZERO,
            stats: FramingStats::default(),
            scratch: [0; MAX_PAYLOAD_BYTES],
        }
    }

    /// Advances the transport by `duration` and receives from the network:
    /// renet's status follows netcode's, and payloads go to renet (split
    /// packets joined first).
    ///
    /// Fails, and marks renet disconnected by the transport, once the
    /// netcode client is neither connecting nor connected; fails, after
    /// sending netcode's disconnect packets, once renet has disconnected.
    pub fn update(
        &mut self,
        duration: Duration,
        client: &mut RenetClient,
    ) -> Result<(), NetcodeTransportError> {
        self.elapsed = self.elapsed.saturating_add(duration);
        self.host.update(self.elapsed.as_secs_f64());
        let state = self.host.state();
        if !state.is_active() {
            client.disconnect_due_to_transport();
            return Err(NetcodeTransportError::Disconnected(state));
        }
        if let Some(reason) = client.disconnect_reason() {
            self.host.disconnect();
            return Err(NetcodeTransportError::Renet(reason));
        }
        if state == ClientState::Connected {
            client.set_connected();
        } else {
            client.set_connecting();
        }
        while let Some(payload) = self.host.receive_packet() {
            self.last_received = self.elapsed;
            let packet = self.inbound.accept(
                payload.data(),
                payload.sequence(),
                self.elapsed,
                &mut self.stats,
            );
            if let Some(packet) = packet {
                client.process_packet(packet);
            }
            self.host.free_packet(payload);
        }
        self.inbound.expire(self.elapsed, &mut self.stats);
        Ok(())
    }

    /// Sends the server the packets renet has, each in one netcode payload
    /// or two, together. While netcode is still connecting, renet keeps
    /// its messages for later and this does nothing.
    ///
    /// Fails once the netcode client is neither connecting nor connected,
    /// or when a packet cannot be sent (the rest of this tick's packets are
    /// then counted in [`stats`](Self::stats) and dropped, as renet_netcode
    /// drops them).
    pub fn send_packets(&mut self, client: &mut RenetClient) -> Result<(), NetcodeTransportError> {
        let state = self.host.state();
        if state != ClientState::Connected {
            return if state.is_active() {
                Ok(())
            } else {
                Err(NetcodeTransportError::Disconnected(state))
            };
        }
        let packets = client.get_packets_to_send();
        let mut batch = self.host.batch();
        let mut sink = ClientSink { host: &mut batch };
        for (sent, packet) in packets.iter().enumerate() {
            let result =
                framing::send_packet(packet, &mut sink, &mut self.scratch, &mut self.stats);
            if let Err(error) = result {
                self.stats.packets_not_sent += (packets.len() - sent) as u64;
                return Err(error);
            }
        }
        Ok(())
    }

    /// Disconnects at once, with netcode's disconnect packets: for quitting
    /// the game. Otherwise use `RenetClient::disconnect`, which the next
    /// update carries out.
    pub fn disconnect(&mut self) {
        self.host.disconnect();
    }

    /// Why the client is not connecting or connected: its netcode state
    /// (`Disconnected`, or an error state such as `ConnectionTimedOut`);
    /// `None` while connecting or connected.
    pub fn disconnect_reason(&self) -> Option<ClientState> {
        let state = self.host.state();
        (!state.is_active()).then_some(state)
    }

    /// The netcode client's state.
    pub fn state(&self) -> ClientState {
        self.host.state()
    }

    /// The address of the client's socket.
    pub fn addr(&self) -> SocketAddr {
        self.host.local_addr()
    }

    /// The netcode slot the server gave this client (0 until connected).
    pub fn client_index(&self) -> usize {
        self.host.client_index()
    }

    /// How long since a payload last came from the server (or since the
    /// transport was made), in the time given to `update`. Unlike
    /// renet_netcode's, it does not count netcode keep-alives, which the
    /// host keeps to itself; the host still times a silent server out by
    /// the token's timeout.
    pub fn time_since_last_received_packet(&self) -> Duration {
        self.elapsed.saturating_sub(self.last_received)
    }

    /// The framing's counters.
    pub fn stats(&self) -> FramingStats {
        self.stats
    }

    /// The netcode client, for what the adapter does not wrap: counters,
    /// sockets, `poll_timeout`, `wait`.
    pub fn host(&self) -> &Client<S> {
        &self.host
    }

    /// The netcode client, mutably. Receiving payloads through it takes
    /// them from renet.
    pub fn host_mut(&mut self) -> &mut Client<S> {
        &mut self.host
    }
}

/// The client as the framing's sink.
struct ClientSink<'a, S: Socket> {
    host: &'a mut Client<S>,
}

impl<S: Socket> PayloadSink for ClientSink<'_, S> {
    fn next_sequence(&self) -> u64 {
        self.host.next_packet_sequence()
    }

    fn send(&mut self, payload: &[u8]) -> Result<(), SendError> {
        self.host.send_packet(payload)
    }
}

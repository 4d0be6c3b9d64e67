//! The sans-IO netcode client (STANDARD.md: *Client State Machine*).
//!
//! Drive it with three calls: [`Client::handle`] for every datagram that
//! arrives, then [`Client::update`] once per tick (or at
//! [`Client::next_deadline`]), and [`Client::send_payload`] whenever the game
//! has something to say. Everything the client produces goes to an
//! [`Output`]: datagrams to send, and [`ClientEvent`]s.
//!
//! Behaviour follows the C reference: requests and responses at 10 Hz,
//! keep-alives at 10 Hz when idle, fallback through the token's server
//! addresses on denial, timeout or a server disconnect, token expiry
//! measured per server address from `expire - create`, and 10 redundant
//! disconnect packets on [`Client::disconnect`].

mod loopback;
mod state;

pub use loopback::LoopbackError;
pub use state::ClientState;

use core::net::SocketAddr;
use core::time::Duration;

use crate::time::Instant;

use crate::address::same_endpoint;
use crate::constants::{CHALLENGE_TOKEN_BYTES, is_payload_size};
use crate::io::Output;
use crate::packet::{
    ChallengePacket, KeepAlivePacket, Packet, PacketContext, PacketError, PacketTypes,
    RequestPacket, read_encrypted, write_packet,
};
use crate::replay::ReplayProtection;
use crate::session::{Payload, SendError, Sent};
use crate::stats::{DropReason, DroppedDatagram, Stats};
use crate::timing::{
    CLIENT_SEND, CLIENT_TIMEOUT, NUM_DISCONNECT_PACKETS, TokenTimeout, after, next_send,
    token_expired,
};
use crate::token::{ConnectToken, TokenError};
use crate::traffic::{ConnectionStats, Traffic};

/// What a client reports as it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientEvent {
    /// The client moved from one state to another (possibly the same one,
    /// as when it moves on to the next server address).
    StateChanged {
        /// The state before.
        from: ClientState,
        /// The state after.
        to: ClientState,
    },
}

/// The state of the handshake with the current server address.
#[derive(Debug, Clone)]
struct Attempt {
    server_index: usize,
    server_address: SocketAddr,
    start: Instant,
    /// `None` until the first packet to this address: send at the next update.
    last_send: Option<Instant>,
    last_receive: Instant,
    challenge_sequence: u64,
    challenge_token: [u8; CHALLENGE_TOKEN_BYTES],
    /// Set by a denied or disconnect packet; acted on by the next update.
    pending_disconnect: Option<ClientState>,
    /// When the last connection response went: the start of the
    /// handshake's round trip.
    response_sent: Option<Instant>,
}

/// A netcode client: one connection to one server at a time.
#[derive(Debug, Clone)]
pub struct Client {
    state: ClientState,
    token: Option<ConnectToken>,
    attempt: Option<Attempt>,
    replay: ReplayProtection,
    sequence: u64,
    client_index: u32,
    max_clients: u32,
    loopback: bool,
    stats: Stats,
    /// What the connection carried.
    traffic: Traffic,
}

impl Default for Client {
    fn default() -> Self {
        Self::new()
    }
}

impl Client {
    /// A disconnected client.
    pub fn new() -> Self {
        Self {
            state: ClientState::Disconnected,
            token: None,
            attempt: None,
            replay: ReplayProtection::new(),
            sequence: 0,
            client_index: 0,
            max_clients: 0,
            loopback: false,
            stats: Stats::new(),
            traffic: Traffic::EMPTY,
        }
    }

    /// What the connection (since the last `connect`) has carried: packets
    /// and bytes each way, duplicates dropped, packets lost by the gaps in
    /// the server's sequences, the handshake's round trip, and the time
    /// since the server's last packet as of `now`. Worked out when asked;
    /// counting costs a few additions per packet.
    pub fn connection_stats(&self, now: Instant) -> ConnectionStats {
        let since = self
            .attempt
            .as_ref()
            .map_or(core::time::Duration::ZERO, |a| {
                now.saturating_duration_since(a.last_receive)
            });
        self.traffic.report(since)
    }

    /// The current state.
    pub fn state(&self) -> ClientState {
        self.state
    }

    /// The slot the server gave this client (0 until connected).
    pub fn client_index(&self) -> u32 {
        self.client_index
    }

    /// The server's slot count (0 until connected).
    pub fn max_clients(&self) -> u32 {
        self.max_clients
    }

    /// The address currently being tried or connected to.
    pub fn server_address(&self) -> Option<SocketAddr> {
        self.attempt.as_ref().map(|a| a.server_address)
    }

    /// The server addresses of the current connect token, in the order they
    /// are tried (empty while there is no token: idle, or loopback).
    pub fn token_server_addresses(&self) -> &[SocketAddr] {
        self.token
            .as_ref()
            .map_or(&[], |t| t.server_addresses.as_slice())
    }

    /// The sequence the next packet sent will carry.
    pub fn next_packet_sequence(&self) -> u64 {
        self.sequence
    }

    /// Whether the client is a loopback client of an in-process server.
    pub fn is_loopback(&self) -> bool {
        self.loopback
    }

    /// Counters since the client was created.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Starts connecting with a 2048-byte connect token.
    ///
    /// Disconnects first if connecting or connected. An unreadable token
    /// moves the client to [`ClientState::InvalidConnectToken`] and returns
    /// the reason; otherwise the client is
    /// [`ClientState::SendingConnectionRequest`] to the token's first
    /// address, and its first request goes out at the next
    /// [`update`](Self::update).
    pub fn connect<O: Output<ClientEvent>>(
        &mut self,
        now: Instant,
        connect_token: &[u8],
        out: &mut O,
    ) -> Result<(), TokenError> {
        self.disconnect(now, out);
        let token = match ConnectToken::read(connect_token) {
            Ok(token) => token,
            Err(e) => {
                self.set_state(ClientState::InvalidConnectToken, out);
                return Err(e);
            }
        };
        let first = token.server_addresses[0];
        self.token = Some(token);
        self.traffic = Traffic::EMPTY;
        self.begin_attempt(now, 0, first);
        self.set_state(ClientState::SendingConnectionRequest, out);
        Ok(())
    }

    /// Processes one received datagram, decrypting it in place.
    ///
    /// Returns the payload if the datagram carried one for the application.
    /// Anything invalid or unexpected is dropped and counted in
    /// [`stats`](Self::stats).
    pub fn handle<'b, O: Output<ClientEvent>>(
        &mut self,
        now: Instant,
        from: SocketAddr,
        datagram: &'b mut [u8],
        out: &mut O,
    ) -> Option<Payload<'b>> {
        let prefix = datagram.first().copied();
        self.process(now, from, datagram, out)
            .unwrap_or_else(|reason| {
                self.stats
                    .report_drop(out, DroppedDatagram::new(from, prefix, reason));
                None
            })
    }

    fn process<'b, O: Output<ClientEvent>>(
        &mut self,
        now: Instant,
        from: SocketAddr,
        datagram: &'b mut [u8],
        out: &mut O,
    ) -> Result<Option<Payload<'b>>, DropReason> {
        let (Some(token), Some(attempt), false) = (&self.token, &mut self.attempt, self.loopback)
        else {
            return Err(DropReason::NotActive);
        };
        // Checked before any crypto: a spoofed sender cannot touch the
        // replay window or cost a decryption.
        if !same_endpoint(&from, &attempt.server_address) {
            return Err(DropReason::NotFromServer);
        }
        let context = PacketContext {
            protocol_id: token.protocol_id,
            read_key: Some(&token.server_to_client_key),
            accepted: PacketTypes::CLIENT,
        };
        let bytes = datagram.len();
        let (sequence, packet) =
            match read_encrypted(&context, None, datagram, Some(&mut self.replay)) {
                Ok(read) => read,
                Err(e) => {
                    if e == PacketError::Replayed {
                        self.traffic.duplicate();
                    }
                    return Err(e.into());
                }
            };
        let packet_type = packet.packet_type();
        // Challenges and denials carry the server's global sequence; only
        // the connection's own packets say what was lost.
        if matches!(
            packet,
            Packet::KeepAlive(_) | Packet::Payload(_) | Packet::Disconnect
        ) {
            self.traffic.received(sequence, bytes);
        }
        let state = self.state;
        let payload = match (packet, state) {
            (
                Packet::Denied,
                ClientState::SendingConnectionRequest | ClientState::SendingConnectionResponse,
            ) => {
                attempt.pending_disconnect = Some(ClientState::ConnectionDenied);
                attempt.last_receive = now;
                None
            }
            (Packet::Challenge(challenge), ClientState::SendingConnectionRequest) => {
                attempt.challenge_sequence = challenge.challenge_sequence;
                attempt.challenge_token = *challenge.token;
                attempt.last_receive = now;
                self.set_state(ClientState::SendingConnectionResponse, out);
                None
            }
            (Packet::KeepAlive(_), ClientState::Connected) => {
                attempt.last_receive = now;
                None
            }
            (Packet::KeepAlive(keep_alive), ClientState::SendingConnectionResponse) => {
                attempt.last_receive = now;
                if let Some(sent) = attempt.response_sent {
                    self.traffic
                        .set_handshake_rtt(now.saturating_duration_since(sent));
                }
                self.client_index = keep_alive.client_index;
                self.max_clients = keep_alive.max_clients;
                self.set_state(ClientState::Connected, out);
                None
            }
            (Packet::Payload(data), ClientState::Connected) => {
                attempt.last_receive = now;
                Some(Payload { sequence, data })
            }
            (Packet::Disconnect, ClientState::Connected) => {
                attempt.pending_disconnect = Some(ClientState::Disconnected);
                attempt.last_receive = now;
                None
            }
            _ => return Err(DropReason::UnexpectedInState),
        };
        self.stats.count_received(packet_type);
        Ok(payload)
    }

    /// Advances time: sends what is due, then applies token expiry, pending
    /// denials and disconnects, and timeouts, in the reference's order.
    /// Handle the datagrams that arrived first.
    pub fn update<O: Output<ClientEvent>>(&mut self, now: Instant, out: &mut O) {
        if self.loopback || !self.state.is_active() {
            return;
        }
        self.send_due(now, out);

        let Some(token) = &self.token else { return };
        let Some(attempt) = &self.attempt else { return };
        let connecting = matches!(
            self.state,
            ClientState::SendingConnectionRequest | ClientState::SendingConnectionResponse
        );
        if connecting
            && token_expired(
                attempt.start,
                Duration::from_secs(token.lifetime_seconds()),
                now,
            )
        {
            self.reset_connection(ClientState::ConnectTokenExpired, out);
            return;
        }
        if let Some(target) = attempt.pending_disconnect {
            if !self.try_next_server(now, out) {
                self.reset_connection(target, out);
            }
            return;
        }
        let Some(timeout) = timeout_of(token) else {
            return;
        };
        if CLIENT_TIMEOUT.holds(after(attempt.last_receive, timeout), now) {
            match self.state {
                ClientState::SendingConnectionRequest => {
                    if !self.try_next_server(now, out) {
                        self.reset_connection(ClientState::ConnectionRequestTimedOut, out);
                    }
                }
                ClientState::SendingConnectionResponse => {
                    if !self.try_next_server(now, out) {
                        self.reset_connection(ClientState::ConnectionResponseTimedOut, out);
                    }
                }
                _ => self.reset_connection(ClientState::ConnectionTimedOut, out),
            }
        }
    }

    /// When [`update`](Self::update) next has something to do, or `None`
    /// while idle. An event loop can sleep until then (or until a datagram
    /// arrives).
    pub fn next_deadline(&self) -> Option<Instant> {
        if self.loopback || !self.state.is_active() {
            return None;
        }
        let token = self.token.as_ref()?;
        let attempt = self.attempt.as_ref()?;
        let Some(last_send) = attempt.last_send else {
            return Some(attempt.last_receive);
        };
        if attempt.pending_disconnect.is_some() {
            return Some(attempt.last_receive);
        }
        let mut deadline = CLIENT_SEND.earliest(next_send(last_send));
        if self.state != ClientState::Connected {
            deadline = deadline.min(after(
                attempt.start,
                Duration::from_secs(token.lifetime_seconds()),
            ));
        }
        if let Some(timeout) = timeout_of(token) {
            deadline = deadline.min(CLIENT_TIMEOUT.earliest(after(attempt.last_receive, timeout)));
        }
        Some(deadline)
    }

    /// Sends one payload of 1 to 1200 bytes to the server, right away.
    pub fn send_payload<O: Output<ClientEvent>>(
        &mut self,
        now: Instant,
        payload: &[u8],
        out: &mut O,
    ) -> Result<Sent, SendError> {
        if !is_payload_size(payload.len()) {
            return Err(SendError::PayloadSize);
        }
        if self.state != ClientState::Connected {
            return Err(SendError::NotConnected);
        }
        if self.loopback {
            let sequence = self.sequence;
            self.sequence += 1;
            return Ok(Sent::Loopback {
                client_index: self.client_index as usize,
                sequence,
            });
        }
        self.send_packet(now, &Packet::Payload(payload), out);
        Ok(Sent::Network)
    }

    /// Disconnects: from a connecting or connected state, sends 10 redundant
    /// disconnect packets, then forgets the connection and moves to
    /// [`ClientState::Disconnected`]. Does nothing when already idle.
    pub fn disconnect<O: Output<ClientEvent>>(&mut self, now: Instant, out: &mut O) {
        if self.loopback {
            self.disconnect_loopback(out);
            return;
        }
        if !self.state.is_active() {
            return;
        }
        for _ in 0..NUM_DISCONNECT_PACKETS {
            self.send_packet(now, &Packet::Disconnect, out);
        }
        self.reset_connection(ClientState::Disconnected, out);
    }

    fn send_due<O: Output<ClientEvent>>(&mut self, now: Instant, out: &mut O) {
        let Some(attempt) = &self.attempt else { return };
        if let Some(last_send) = attempt.last_send
            && !CLIENT_SEND.holds(next_send(last_send), now)
        {
            return;
        }
        let Some(token) = &self.token else { return };
        match self.state {
            ClientState::SendingConnectionRequest => {
                // Copied out of `self` (10 times a second at most) so the
                // packet does not borrow the client while it sends.
                let (nonce, private_data) = (token.nonce, token.private_data);
                let request = RequestPacket {
                    expire_timestamp: token.expire_timestamp,
                    nonce: &nonce,
                    private_data: &private_data,
                };
                self.send_packet(now, &Packet::Request(request), out);
            }
            ClientState::SendingConnectionResponse => {
                let token = attempt.challenge_token;
                let response = ChallengePacket {
                    challenge_sequence: attempt.challenge_sequence,
                    token: &token,
                };
                self.send_packet(now, &Packet::Response(response), out);
            }
            ClientState::Connected => {
                let keep_alive = KeepAlivePacket {
                    client_index: 0,
                    max_clients: 0,
                };
                self.send_packet(now, &Packet::KeepAlive(keep_alive), out);
            }
            _ => {}
        }
    }

    /// Writes and sends one packet to the current server; every packet,
    /// requests included, takes a sequence number.
    fn send_packet<O: Output<ClientEvent>>(
        &mut self,
        now: Instant,
        packet: &Packet<'_>,
        out: &mut O,
    ) {
        let (Some(token), Some(attempt)) = (&self.token, &mut self.attempt) else {
            return;
        };
        let sequence = self.sequence;
        self.sequence += 1;
        // The buffer fits every packet and payload sizes were checked, so
        // writing cannot fail; if it ever did, nothing would be sent.
        let (key, protocol_id) = (&token.client_to_server_key, token.protocol_id);
        let written = out.send_with(attempt.server_address, &mut |buffer| {
            write_packet(packet, sequence, key, protocol_id, buffer).ok()
        });
        if let Some(n) = written {
            self.stats.count_sent(packet.packet_type());
            self.traffic.sent(n);
            if matches!(packet, Packet::Response(_)) {
                attempt.response_sent = Some(now);
            }
        }
        attempt.last_send = Some(now);
    }

    fn begin_attempt(&mut self, now: Instant, server_index: usize, server_address: SocketAddr) {
        self.attempt = Some(Attempt {
            server_index,
            server_address,
            start: now,
            last_send: None,
            last_receive: now,
            challenge_sequence: 0,
            challenge_token: [0; CHALLENGE_TOKEN_BYTES],
            pending_disconnect: None,
            response_sent: None,
        });
        self.replay.reset();
    }

    /// Moves on to the token's next server address, if there is one. The
    /// sequence, client index and max clients carry over, as in the reference.
    fn try_next_server<O: Output<ClientEvent>>(&mut self, now: Instant, out: &mut O) -> bool {
        let (Some(token), Some(attempt)) = (&self.token, &self.attempt) else {
            return false;
        };
        let next = attempt.server_index + 1;
        let Some(&address) = token.server_addresses.get(next) else {
            return false;
        };
        self.begin_attempt(now, next, address);
        self.set_state(ClientState::SendingConnectionRequest, out);
        true
    }

    /// Forgets the connection and moves to `state`.
    fn reset_connection<O: Output<ClientEvent>>(&mut self, state: ClientState, out: &mut O) {
        self.sequence = 0;
        self.loopback = false;
        self.client_index = 0;
        self.max_clients = 0;
        self.token = None;
        self.attempt = None;
        self.replay.reset();
        self.set_state(state, out);
    }

    fn set_state<O: Output<ClientEvent>>(&mut self, state: ClientState, out: &mut O) {
        let from = self.state;
        self.state = state;
        out.event(ClientEvent::StateChanged { from, to: state });
    }
}

/// The token's timeout, or `None` when its timeouts are disabled.
fn timeout_of(token: &ConnectToken) -> Option<Duration> {
    TokenTimeout::new(token.timeout_seconds).silence()
}

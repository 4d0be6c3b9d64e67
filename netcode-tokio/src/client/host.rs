//! The host's methods that make sense under tokio, on the tokio client
//! itself: connecting, state, payloads, events, batches, addresses and
//! counters, each what [`netcode_std::Client`]'s method of the same name
//! does. None takes a time (the client keeps tokio's) and none blocks.

use std::net::SocketAddr;

use netcode_std::proto::stats::Stats;
use netcode_std::{
    Batch, Batching, ClientEvent, ClientState, ConnectError, ConnectionStats, ReceivedPacket,
    SendError, TransportStats,
};

use super::Client;

impl Client {
    /// Starts connecting with a 2048-byte connect token; see
    /// [`netcode_std::Client::connect`]. Await [`connected`](Self::connected)
    /// for the outcome.
    pub fn connect(&mut self, connect_token: &[u8]) -> Result<(), ConnectError> {
        self.inner.connect(connect_token)
    }

    /// Where the client is in its life.
    pub fn state(&self) -> ClientState {
        self.inner.state()
    }

    /// Sends a payload to the server (connected only).
    pub fn send_packet(&mut self, data: &[u8]) -> Result<(), SendError> {
        self.inner.send_packet(data)
    }

    /// The oldest payload queued from the server.
    pub fn receive_packet(&mut self) -> Option<ReceivedPacket> {
        self.inner.receive_packet()
    }

    /// Gives a payload's buffer back for reuse (optional).
    pub fn free_packet(&mut self, packet: ReceivedPacket) {
        self.inner.free_packet(packet);
    }

    /// The oldest state change not yet taken.
    pub fn poll_event(&mut self) -> Option<ClientEvent> {
        self.inner.poll_event()
    }

    /// Disconnects (the server gets disconnect packets).
    pub fn disconnect(&mut self) {
        self.inner.disconnect();
    }

    /// What the connection has carried; see
    /// [`netcode_std::Client::connection_stats`].
    pub fn connection_stats(&self) -> ConnectionStats {
        self.inner.connection_stats()
    }

    /// The client's slot on the server (connected only).
    pub fn client_index(&self) -> usize {
        self.inner.client_index()
    }

    /// The server's slot count (connected only).
    pub fn max_clients(&self) -> usize {
        self.inner.max_clients()
    }

    /// The server it is connecting or connected to.
    pub fn server_address(&self) -> Option<SocketAddr> {
        self.inner.server_address()
    }

    /// The sequence the next payload will carry.
    pub fn next_packet_sequence(&self) -> u64 {
        self.inner.next_packet_sequence()
    }

    /// Holds every datagram the client produces until the returned scope
    /// ends, then sends them together; see [`netcode_std::Batch`].
    pub fn batch(&mut self) -> Batch<'_, Self> {
        Batch::new(self)
    }

    /// The address the first socket is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.inner.local_addr()
    }

    /// The port the first socket is bound to.
    pub fn port(&self) -> u16 {
        self.inner.port()
    }

    /// Protocol counters.
    pub fn stats(&self) -> Stats {
        self.inner.stats()
    }

    /// Socket and queue counters.
    pub fn transport_stats(&self) -> TransportStats {
        self.inner.transport_stats()
    }
}

impl Batching for Client {
    fn set_batching(&mut self, on: bool) {
        self.inner.set_batching(on);
    }
}

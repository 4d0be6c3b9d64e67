//! The host's methods that make sense under tokio, on the tokio server
//! itself: slots, payloads, events, batches, addresses and counters, each
//! what [`netcode_std::Server`]'s method of the same name does. None takes
//! a time (the server keeps tokio's) and none blocks.

use std::net::SocketAddr;

use netcode_std::history_store::WriterStats;
use netcode_std::proto::stats::Stats;
use netcode_std::{
    Batch, Batching, ConnectionStats, DisconnectReason, ReceivedPacket, SendError, ServerEvent,
    TransportStats,
};

use super::Server;

impl Server {
    /// Disconnects every client (they get disconnect packets) and closes
    /// the slots; see [`netcode_std::Server::stop`].
    pub fn stop(&mut self) {
        self.inner.stop();
    }

    /// Whether the server is started.
    pub fn running(&self) -> bool {
        self.inner.running()
    }

    /// Open slots (0 when stopped).
    pub fn max_clients(&self) -> usize {
        self.inner.max_clients()
    }

    /// Occupied slots.
    pub fn num_connected_clients(&self) -> usize {
        self.inner.num_connected_clients()
    }

    /// Sends a payload to the client in slot `client_index`; see
    /// [`netcode_std::Server::send_packet`].
    pub fn send_packet(&mut self, client_index: usize, data: &[u8]) -> Result<(), SendError> {
        self.inner.send_packet(client_index, data)
    }

    /// The oldest payload queued from the client in slot `client_index`.
    pub fn receive_packet(&mut self, client_index: usize) -> Option<ReceivedPacket> {
        self.inner.receive_packet(client_index)
    }

    /// The next payload from any client, with its slot, visiting only slots
    /// that hold payloads; see [`netcode_std::Server::receive_any`].
    pub fn receive_any(&mut self) -> Option<(usize, ReceivedPacket)> {
        self.inner.receive_any()
    }

    /// Gives a payload's buffer back for reuse (optional).
    pub fn free_packet(&mut self, packet: ReceivedPacket) {
        self.inner.free_packet(packet);
    }

    /// The oldest connect or disconnect event not yet taken.
    pub fn poll_event(&mut self) -> Option<ServerEvent> {
        self.inner.poll_event()
    }

    /// Disconnects the client in slot `client_index` (it gets disconnect
    /// packets).
    pub fn disconnect_client(&mut self, client_index: usize) {
        self.inner.disconnect_client(client_index);
    }

    /// Disconnects every client.
    pub fn disconnect_all_clients(&mut self) {
        self.inner.disconnect_all_clients();
    }

    /// What the connection in slot `client_index` has carried; see
    /// [`netcode_std::Server::client_stats`].
    pub fn client_stats(&self, client_index: usize) -> Option<ConnectionStats> {
        self.inner.client_stats(client_index)
    }

    /// Whether slot `client_index` holds a client.
    pub fn client_connected(&self, client_index: usize) -> bool {
        self.inner.client_connected(client_index)
    }

    /// The client id of the client in slot `client_index`.
    pub fn client_id(&self, client_index: usize) -> Option<u64> {
        self.inner.client_id(client_index)
    }

    /// The address of the client in slot `client_index`.
    pub fn client_address(&self, client_index: usize) -> Option<SocketAddr> {
        self.inner.client_address(client_index)
    }

    /// The user data of the client in slot `client_index`, from its token.
    pub fn client_user_data(&self, client_index: usize) -> Option<&[u8; 256]> {
        self.inner.client_user_data(client_index)
    }

    /// Why the last client of slot `client_index` left.
    pub fn disconnect_reason(&self, client_index: usize) -> DisconnectReason {
        self.inner.disconnect_reason(client_index)
    }

    /// The sequence the next payload to slot `client_index` will carry.
    pub fn next_packet_sequence(&self, client_index: usize) -> Option<u64> {
        self.inner.next_packet_sequence(client_index)
    }

    /// Holds every datagram the server produces until the returned scope
    /// ends, then sends them together; see [`netcode_std::Batch`].
    pub fn batch(&mut self) -> Batch<'_, Self> {
        Batch::new(self)
    }

    /// The address connect tokens list for this server.
    pub fn public_address(&self) -> SocketAddr {
        self.inner.public_address()
    }

    /// A dual-stack server's second public address.
    pub fn secondary_address(&self) -> Option<SocketAddr> {
        self.inner.secondary_address()
    }

    /// The address the first socket is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.inner.local_addr()
    }

    /// The port the first socket is bound to.
    pub fn port(&self) -> u16 {
        self.inner.port()
    }

    /// Protocol counters: packets by type, drops by reason.
    pub fn stats(&self) -> Stats {
        self.inner.stats()
    }

    /// Socket and queue counters.
    pub fn transport_stats(&self) -> TransportStats {
        self.inner.transport_stats()
    }

    /// Records of new tokens not yet durable in the token history file.
    pub fn token_records_pending(&self) -> usize {
        self.inner.token_records_pending()
    }

    /// The token history file's writer counters, when there is a file.
    pub fn token_history_stats(&self) -> Option<WriterStats> {
        self.inner.token_history_stats()
    }
}

impl Batching for Server {
    fn set_batching(&mut self, on: bool) {
        self.inner.set_batching(on);
    }
}

//! What the application does with a client's connection: payloads in and
//! out, events, disconnecting, what is known of the connection, and
//! loopback mode.

use std::net::SocketAddr;

use netcode_proto::ConnectionStats;
use netcode_proto::client::{ClientEvent, LoopbackError};
use netcode_proto::session::{SendError, Sent};

use super::Client;
use crate::packet::ReceivedPacket;
use crate::transport::Socket;

impl<S: Socket> Client<S> {
    /// The next state change, oldest first.
    pub fn poll_event(&mut self) -> Option<ClientEvent> {
        self.io.events.pop()
    }

    /// Whether an event or a loopback payload waits for
    /// [`poll_event`](Self::poll_event) or
    /// [`poll_loopback_packet`](Self::poll_loopback_packet): a layer that
    /// hands them on (a callback each) can skip the polls after a call that
    /// caused none.
    pub fn delivery_waiting(&self) -> bool {
        !self.io.events.is_empty() || !self.io.loopback.is_empty()
    }

    /// Sends a payload of 1 to 1200 bytes to the server (before returning,
    /// or at the end of the current [`batch`](Self::batch); to the loopback
    /// outbox in loopback mode). Fails unless connected.
    pub fn send_packet(&mut self, data: &[u8]) -> Result<(), SendError> {
        let sent = self.core.send_payload(self.clock.now, data, &mut self.io);
        self.finish();
        if let Sent::Loopback { sequence, .. } = sent? {
            self.io.push_loopback(data, sequence);
        }
        Ok(())
    }

    /// The oldest payload received from the server (at most 256 wait; more
    /// are dropped as in the reference).
    pub fn receive_packet(&mut self) -> Option<ReceivedPacket> {
        self.io.queue.pop()
    }

    /// Gives a received payload's buffer back for reuse. Dropping the
    /// packet instead is fine; it only costs an allocation later.
    pub fn free_packet(&mut self, packet: ReceivedPacket) {
        self.io.pool.recycle(packet);
    }

    /// Disconnects: when connecting or connected, sends 10 disconnect
    /// packets, then moves to
    /// [`ClientState::Disconnected`](crate::ClientState::Disconnected). A
    /// loopback client leaves loopback mode.
    pub fn disconnect(&mut self) {
        self.core.disconnect(self.clock.now, &mut self.io);
        self.finish();
    }

    /// What the connection (since the last `connect`) has carried: packets
    /// and bytes each way, duplicates dropped, packets lost, the handshake's
    /// round trip, the time since the server's last packet as of the last
    /// update. See [`ConnectionStats`].
    pub fn connection_stats(&self) -> ConnectionStats {
        self.core.connection_stats(self.clock.now)
    }

    /// The slot the server gave this client (0 until connected).
    pub fn client_index(&self) -> usize {
        self.core.client_index() as usize
    }

    /// The server's slot count (0 until connected).
    pub fn max_clients(&self) -> usize {
        self.core.max_clients() as usize
    }

    /// The server address being tried or connected to.
    pub fn server_address(&self) -> Option<SocketAddr> {
        self.core.server_address()
    }

    /// The sequence the next packet sent will carry.
    pub fn next_packet_sequence(&self) -> u64 {
        self.core.next_packet_sequence()
    }

    /// Becomes the loopback client of an in-process server, in slot
    /// `client_index` of `max_clients` (the server side calls
    /// [`Server::connect_loopback_client`](crate::Server::connect_loopback_client)):
    /// connected at once, with no packets, keep-alives or timeouts.
    pub fn connect_loopback(
        &mut self,
        client_index: usize,
        max_clients: usize,
    ) -> Result<(), LoopbackError> {
        let index = u32::try_from(client_index).map_err(|_| LoopbackError::InvalidClientIndex)?;
        let max = u32::try_from(max_clients).unwrap_or(u32::MAX);
        self.core.connect_loopback(index, max, &mut self.io)
    }

    /// Leaves loopback mode and moves to
    /// [`ClientState::Disconnected`](crate::ClientState::Disconnected).
    pub fn disconnect_loopback(&mut self) {
        self.core.disconnect_loopback(&mut self.io);
    }

    /// Whether the client is the loopback client of an in-process server.
    pub fn loopback(&self) -> bool {
        self.core.is_loopback()
    }

    /// Delivers a payload the in-process server sent this loopback client
    /// (from [`Server::poll_loopback_packet`](crate::Server::poll_loopback_packet)).
    pub fn process_loopback_packet(&mut self, data: &[u8], sequence: u64) -> Result<(), SendError> {
        let payload = self.core.receive_loopback_payload(data, sequence)?;
        self.io.enqueue(payload.data, payload.sequence);
        Ok(())
    }

    /// The oldest payload this loopback client sent, for the application to
    /// deliver with [`Server::process_loopback_packet`](crate::Server::process_loopback_packet)
    /// (or use [`transfer_loopback`](crate::transfer_loopback)). Free it
    /// afterwards.
    pub fn poll_loopback_packet(&mut self) -> Option<ReceivedPacket> {
        self.io.loopback.pop_front()
    }
}

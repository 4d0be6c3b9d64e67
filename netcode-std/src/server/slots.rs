//! What the application does with a server's clients: payloads in and
//! out, events, disconnects, what is known of each slot, and loopback
//! clients.

use std::net::SocketAddr;

use netcode_proto::ConnectionStats;
use netcode_proto::constants::USER_DATA_BYTES;
use netcode_proto::server::{DisconnectReason, ServerError, ServerEvent};
use netcode_proto::session::{SendError, Sent};

use super::Server;
use crate::packet::ReceivedPacket;
use crate::transport::Socket;

impl<S: Socket> Server<S> {
    /// Sends a payload of 1 to 1200 bytes to the client in slot
    /// `client_index` (before returning, or at the end of the current
    /// [`batch`](Self::batch)). A loopback client's payload waits for
    /// [`poll_loopback_packet`](Self::poll_loopback_packet).
    pub fn send_packet(&mut self, client_index: usize, data: &[u8]) -> Result<(), SendError> {
        let sent = self
            .core
            .send_payload(self.clock.now, client_index, data, &mut self.io);
        self.finish();
        match sent? {
            Sent::Network => {}
            Sent::Loopback {
                client_index,
                sequence,
            } => self.io.push_loopback(client_index, data, sequence),
        }
        Ok(())
    }

    /// The oldest payload received from the client in slot `client_index`
    /// (at most 256 wait per slot; more are dropped as in the reference).
    pub fn receive_packet(&mut self, client_index: usize) -> Option<ReceivedPacket> {
        if client_index >= self.core.max_clients() {
            return None;
        }
        self.io.queues.get_mut(client_index)?.pop()
    }

    /// The next payload from any client, with the slot it came from,
    /// visiting only slots that hold payloads: clients take turns, a
    /// payload each, in the order their first payloads arrived. The
    /// C-style [`receive_packet`](Self::receive_packet) per slot still
    /// works beside it; an echo loop over thousands of slots should use
    /// this.
    pub fn receive_any(&mut self) -> Option<(usize, ReceivedPacket)> {
        let max_clients = self.core.max_clients();
        while let Some((index, packet)) = self.io.pop_ready() {
            if index < max_clients {
                return Some((index, packet));
            }
            self.io.pool.recycle(packet);
        }
        None
    }

    /// What the connection in slot `client_index` has carried (packets and
    /// bytes each way, duplicates dropped, packets lost, the handshake's
    /// round trip, the time since the client's last packet); `None` for a
    /// free slot. See [`ConnectionStats`].
    pub fn client_stats(&self, client_index: usize) -> Option<ConnectionStats> {
        self.core.client_stats(client_index)
    }

    /// Gives a received payload's buffer back for reuse. Dropping the
    /// packet instead is fine; it only costs an allocation later.
    pub fn free_packet(&mut self, packet: ReceivedPacket) {
        self.io.pool.recycle(packet);
    }

    /// The next connect or disconnect event, oldest first. At most 4096
    /// wait; beyond that the oldest are dropped (and counted in
    /// [`transport_stats`](Self::transport_stats)).
    pub fn poll_event(&mut self) -> Option<ServerEvent> {
        self.io.events.pop()
    }

    /// Whether an event waits for [`poll_event`](Self::poll_event): a
    /// layer that hands events on (a callback per event) can skip the
    /// poll after a call that caused none.
    pub fn event_waiting(&self) -> bool {
        !self.io.events.is_empty()
    }

    /// Disconnects the client in slot `client_index` with 10 disconnect
    /// packets. Free and loopback slots are left alone.
    pub fn disconnect_client(&mut self, client_index: usize) {
        self.core.disconnect_client(client_index, &mut self.io);
        self.finish();
    }

    /// Disconnects every network client (loopback slots stay).
    pub fn disconnect_all_clients(&mut self) {
        self.core.disconnect_all_clients(&mut self.io);
        self.finish();
    }

    /// Whether slot `client_index` holds a client.
    pub fn client_connected(&self, client_index: usize) -> bool {
        self.core.client_connected(client_index)
    }

    /// The client id of the client in slot `client_index`.
    pub fn client_id(&self, client_index: usize) -> Option<u64> {
        self.core.client_id(client_index)
    }

    /// The address of the client in slot `client_index` (`None` for a free
    /// or loopback slot).
    pub fn client_address(&self, client_index: usize) -> Option<SocketAddr> {
        self.core.client_address(client_index)
    }

    /// The user data from the connect token of the client in slot
    /// `client_index`.
    pub fn client_user_data(&self, client_index: usize) -> Option<&[u8; USER_DATA_BYTES]> {
        self.core.client_user_data(client_index)
    }

    /// Why slot `client_index` was last vacated.
    pub fn disconnect_reason(&self, client_index: usize) -> DisconnectReason {
        self.core.disconnect_reason(client_index)
    }

    /// The sequence the next packet to slot `client_index` will carry.
    pub fn next_packet_sequence(&self, client_index: usize) -> Option<u64> {
        self.core.next_packet_sequence(client_index)
    }

    /// Puts an in-process client in slot `client_index`: connected at once,
    /// with no packets, keep-alives or timeouts. Its client calls
    /// [`Client::connect_loopback`](crate::Client::connect_loopback) with
    /// the same slot and [`max_clients`](Self::max_clients).
    pub fn connect_loopback_client(
        &mut self,
        client_index: usize,
        client_id: u64,
        user_data: Option<&[u8; USER_DATA_BYTES]>,
    ) -> Result<(), ServerError> {
        self.core
            .connect_loopback_client(client_index, client_id, user_data, &mut self.io)
    }

    /// Empties loopback slot `client_index`.
    pub fn disconnect_loopback_client(&mut self, client_index: usize) -> Result<(), ServerError> {
        self.core
            .disconnect_loopback_client(client_index, &mut self.io)
    }

    /// Whether slot `client_index` holds a loopback client.
    pub fn client_loopback(&self, client_index: usize) -> bool {
        self.core.client_loopback(client_index)
    }

    /// Delivers a payload that the loopback client of slot `client_index`
    /// sent (from [`Client::poll_loopback_packet`](crate::Client::poll_loopback_packet)).
    pub fn process_loopback_packet(
        &mut self,
        client_index: usize,
        data: &[u8],
        sequence: u64,
    ) -> Result<(), SendError> {
        let payload =
            self.core
                .receive_loopback_payload(self.clock.now, client_index, data, sequence)?;
        self.io
            .enqueue(client_index, payload.data, payload.sequence);
        Ok(())
    }

    /// The oldest payload sent to the loopback client of slot
    /// `client_index`, for the application to deliver with
    /// [`Client::process_loopback_packet`](crate::Client::process_loopback_packet)
    /// (or use [`transfer_loopback`](crate::transfer_loopback)). Free it
    /// afterwards.
    pub fn poll_loopback_packet(&mut self, client_index: usize) -> Option<ReceivedPacket> {
        self.io.pop_loopback(client_index)
    }
}

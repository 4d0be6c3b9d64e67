//! Time passing on a server, and clients leaving: keep-alives when a
//! client has heard nothing for the send interval, timeouts, and
//! disconnects with their redundant packets (STANDARD.md: *Connected
//! Clients*).

use crate::time::Instant;

use super::compact::Nanos;
use super::timers::slot_deadline;
use super::{DisconnectReason, Server, ServerEvent, ServerStorage};
use crate::io::Output;
use crate::packet::Packet;
use crate::timing::{NUM_DISCONNECT_PACKETS, SERVER_KEEP_ALIVE, SERVER_TIMEOUT, after, next_send};

impl<S: ServerStorage> Server<S> {
    /// Sends keep-alives that are due and applies timeouts. Handle the
    /// datagrams that arrived first. `unix_seconds` (the wall clock) is
    /// kept for the connection requests handled until the next update, and
    /// frees the connect token history entries whose tokens expired by then.
    ///
    /// The server's unix time never moves back: an earlier `unix_seconds`
    /// than a previous one (a wall clock stepped back) is ignored until
    /// the clock passes it again, because a token whose entry was freed as
    /// expired must stay expired, or it could start a second session under
    /// the same keys. A clock that leaps forward by mistake therefore makes
    /// the server refuse tokens as expired until real time catches up.
    pub fn update<O: Output<ServerEvent>>(&mut self, now: Instant, unix_seconds: u64, out: &mut O) {
        self.time = now;
        self.unix_time = self.unix_time.max(unix_seconds);
        if !self.running {
            return;
        }
        let hasher = self.hasher;
        self.storage
            .tables()
            .free_expired_tokens(&mut self.live, &hasher, self.unix_time);
        let now_key = Nanos::new(now);
        if now_key == Nanos::NEVER {
            // Past the timers' range (584 years from the clock's origin):
            // their keys no longer tell times apart, so every connected
            // network client is visited once instead.
            for index in 0..self.max_clients {
                if self.connected_slot(index).is_some_and(|s| !s.loopback) {
                    self.visit_slot(now, index, out);
                }
            }
        } else {
            // The slots whose timers have come, earliest first; the others
            // are not visited (see `timers.rs`). A visited slot's real
            // deadline is later than `now`, and below the end of the range
            // its key is too, so each slot is visited once.
            while let Some((index, key)) = self.storage.tables().first_timer(&self.live) {
                if key > now_key {
                    break;
                }
                self.visit_slot(now, index, out);
            }
        }
        self.deadline = self.exact_first_deadline();
    }

    /// Sends the keep-alive or applies the timeout that is due for the
    /// connected network client of slot `index`, and re-arms its timer.
    fn visit_slot<O: Output<ServerEvent>>(&mut self, now: Instant, index: usize, out: &mut O) {
        let slot = &self.storage.slots()[index];
        if SERVER_KEEP_ALIVE.holds(next_send(slot.last_send), now) {
            self.send_keep_alive(now, index, out);
        }
        let slot = &self.storage.slots()[index];
        if let Some(timeout) = slot.timeout
            && SERVER_TIMEOUT.holds(after(slot.last_receive, timeout), now)
        {
            self.disconnect_slot(index, DisconnectReason::TimedOut, false, out);
            return;
        }
        self.storage.tables().arm_timer(&mut self.live, index);
    }

    /// The earliest deadline of any connected client: the first timer's,
    /// once keys left early by traffic since they were set are brought to
    /// their slots' real deadlines.
    fn exact_first_deadline(&mut self) -> Option<Instant> {
        loop {
            let mut tables = self.storage.tables();
            let (index, key) = tables.first_timer(&self.live)?;
            if Nanos::new(slot_deadline(&tables.slots[index])) <= key {
                return Some(key.instant());
            }
            tables.arm_timer(&mut self.live, index);
        }
    }

    /// Disconnects the client in slot `index` with 10 disconnect packets.
    /// Loopback slots are left alone (use
    /// [`disconnect_loopback_client`](Self::disconnect_loopback_client)).
    pub fn disconnect_client<O: Output<ServerEvent>>(&mut self, index: usize, out: &mut O) {
        if self.connected_slot(index).is_some_and(|s| !s.loopback) {
            self.disconnect_slot(index, DisconnectReason::ServerDisconnect, true, out);
        }
    }

    /// Disconnects every network client (loopback slots stay).
    pub fn disconnect_all_clients<O: Output<ServerEvent>>(&mut self, out: &mut O) {
        for index in 0..self.max_clients {
            self.disconnect_client(index, out);
        }
    }

    pub(super) fn disconnect_slot<O: Output<ServerEvent>>(
        &mut self,
        index: usize,
        reason: DisconnectReason,
        send_packets: bool,
        out: &mut O,
    ) {
        let slot = &self.storage.slots()[index];
        let (client_id, address, loopback) = (slot.client_id, slot.address, slot.loopback);
        self.storage.tables().slots[index].disconnect_reason = reason;
        out.event(ServerEvent::ClientDisconnected {
            client_index: index,
            client_id,
            address,
            reason,
        });
        if send_packets && !loopback {
            for _ in 0..NUM_DISCONNECT_PACKETS {
                self.send_to_slot(self.time, index, &Packet::Disconnect, out);
            }
        }
        let hasher = self.hasher;
        let mut tables = self.storage.tables();
        tables.disarm_timer(&mut self.live, index);
        tables.unindex_client_id(&hasher, index);
        if let Some(mapping) = tables.slots[index].mapping {
            tables.remove_mapping(&mut self.live, &hasher, mapping as usize);
        }
        tables.slots[index].clear();
        tables.forget_key(index);
        tables.mark_slot(index, true);
        self.num_connected -= 1;
    }
}

//! Starting and stopping a server (STANDARD.md: *Nonce Reuse and Server
//! Restarts*: the global sequence at 2^63 on every start, and the restart
//! rule's floor on connect token expiry).

use crate::time::Instant;

use rand_core::CryptoRng;

use super::{DisconnectReason, Hasher, Server, ServerError, ServerEvent, ServerStorage};
use crate::constants::SERVER_GLOBAL_SEQUENCE_BASE;
use crate::crypto::Key;
use crate::io::Output;
use crate::timing::restart_floor;

impl<S: ServerStorage> Server<S> {
    /// Opens `max_clients` slots. `now` is the monotonic time and
    /// `unix_seconds` the wall clock (for token expiry and the restart rule);
    /// `rng` supplies a fresh challenge key and hash keys. A running server
    /// is stopped first (its clients get disconnect packets).
    ///
    /// The global sequence starts at 2^63 on every start, and the token
    /// history and encryption mappings start empty. The restart rule
    /// refuses tokens that may have been minted in or before the start
    /// second: those expiring no later than `unix_seconds` plus the maximum
    /// token lifetime (one second stricter than STANDARD.md's wording, see
    /// [`ServerConfig::max_connect_token_lifetime`](super::ServerConfig::max_connect_token_lifetime);
    /// [`start_restored`](Self::start_restored) is the other way to start).
    pub fn start<R: CryptoRng + ?Sized, O: Output<ServerEvent>>(
        &mut self,
        now: Instant,
        unix_seconds: u64,
        max_clients: usize,
        rng: &mut R,
        out: &mut O,
    ) -> Result<(), ServerError> {
        let floor = restart_floor(
            unix_seconds,
            self.config.effective_max_connect_token_lifetime(),
        );
        self.begin(now, unix_seconds, max_clients, floor, rng, out)?;
        self.persisting = false;
        Ok(())
    }

    /// What every start does, with `min_expire_timestamp` the restart
    /// rule's floor.
    pub(super) fn begin<R: CryptoRng + ?Sized, O: Output<ServerEvent>>(
        &mut self,
        now: Instant,
        unix_seconds: u64,
        max_clients: usize,
        min_expire_timestamp: u64,
        rng: &mut R,
        out: &mut O,
    ) -> Result<(), ServerError> {
        if max_clients == 0 || max_clients > self.capacity {
            return Err(ServerError::InvalidMaxClients);
        }
        if self.running {
            self.stop(now, out);
        }
        self.time = now;
        self.unix_time = unix_seconds;
        self.running = true;
        self.run = self.run.wrapping_add(1);
        self.max_clients = max_clients;
        self.num_connected = 0;
        self.challenge_sequence = 0;
        self.challenge_key = Key::generate(rng);
        self.hasher = Hasher::new(rng.next_u64(), rng.next_u64());
        self.min_expire_timestamp = min_expire_timestamp;
        self.global_sequence = SERVER_GLOBAL_SEQUENCE_BASE;
        self.deadline = None;
        let mut tables = self.storage.tables();
        tables.reset(&mut self.live);
        for slot in tables.slots.iter_mut() {
            slot.disconnect_reason = DisconnectReason::None;
        }
        Ok(())
    }

    /// Disconnects every client (network clients get disconnect packets)
    /// and closes the slots. The token history and mappings are forgotten.
    pub fn stop<O: Output<ServerEvent>>(&mut self, now: Instant, out: &mut O) {
        if !self.running {
            return;
        }
        self.time = now;
        for index in 0..self.max_clients {
            if self.storage.slots()[index].connected {
                self.disconnect_slot(index, DisconnectReason::ServerDisconnect, true, out);
            }
        }
        self.running = false;
        self.max_clients = 0;
        self.num_connected = 0;
        self.challenge_sequence = 0;
        self.challenge_key = Key::from_bytes([0; 32]);
        self.global_sequence = SERVER_GLOBAL_SEQUENCE_BASE;
        self.deadline = None;
        self.storage.tables().reset(&mut self.live);
    }
}

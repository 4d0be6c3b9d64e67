//! Copies of a whole server, for tests and fuzzing (feature `sim`):
//! a scenario set up once and restored before each run (STANDARD.md: none;
//! no protocol rule is involved).
//!
//! A copy holds the same challenge key, sequences and connected clients'
//! keys as the original. Letting both send to real peers would seal two
//! different packets under one key and nonce, so cloning stays behind the
//! test feature rather than in every build.

use super::{Server, ServerStorage};

/// With feature `sim`: a snapshot of the server, its tables included.
///
/// [`clone_from`](Clone::clone_from) restores a snapshot in place; over a
/// server whose storage has the same table sizes (for
/// [`HeapStorage`](super::HeapStorage), one cloned from the same server) it
/// copies into the tables it has and allocates nothing.
impl<S: ServerStorage + Clone> Clone for Server<S> {
    fn clone(&self) -> Self {
        Self {
            config: self.config.clone(),
            storage: self.storage.clone(),
            capacity: self.capacity,
            token_history_capacity: self.token_history_capacity,
            running: self.running,
            max_clients: self.max_clients,
            num_connected: self.num_connected,
            challenge_key: self.challenge_key.clone(),
            challenge_sequence: self.challenge_sequence,
            global_sequence: self.global_sequence,
            min_expire_timestamp: self.min_expire_timestamp,
            time: self.time,
            unix_time: self.unix_time,
            hasher: self.hasher,
            live: self.live,
            persisting: self.persisting,
            run: self.run,
            deadline: self.deadline,
            stats: self.stats.clone(),
        }
    }

    fn clone_from(&mut self, source: &Self) {
        // Destructured in full, so a new field cannot be left out.
        let Self {
            config,
            storage,
            capacity,
            token_history_capacity,
            running,
            max_clients,
            num_connected,
            challenge_key,
            challenge_sequence,
            global_sequence,
            min_expire_timestamp,
            time,
            unix_time,
            hasher,
            live,
            persisting,
            run,
            deadline,
            stats,
        } = self;
        config.clone_from(&source.config);
        storage.clone_from(&source.storage);
        *capacity = source.capacity;
        *token_history_capacity = source.token_history_capacity;
        *running = source.running;
        *max_clients = source.max_clients;
        *num_connected = source.num_connected;
        challenge_key.clone_from(&source.challenge_key);
        *challenge_sequence = source.challenge_sequence;
        *global_sequence = source.global_sequence;
        *min_expire_timestamp = source.min_expire_timestamp;
        *time = source.time;
        *unix_time = source.unix_time;
        *hasher = source.hasher;
        *live = source.live;
        *persisting = source.persisting;
        *run = source.run;
        *deadline = source.deadline;
        stats.clone_from(&source.stats);
    }
}

//! The host on `netcode_std::transport::memory`'s in-memory network (the
//! core's seeded network simulator), on virtual time: servers and clients
//! as `test_fixtures::memory` makes them (servers bound exactly, so their
//! socket's address is the public address clients send to, and started
//! without waiting for the wall clock). [`run`] leaves the network's own
//! time alone, which a network without latency (`Net::new`, `Net::lossy`)
//! never needs.
#![allow(dead_code, unreachable_pub, unused_imports)]

use netcode_std::{Client, ClientState, Server};

pub use netcode_std::transport::memory::{MemoryNetwork as Net, MemorySocket, SimConfig};
pub use test_fixtures::AdmittedFrom;
pub use test_fixtures::memory::{memory_client as client, memory_server as server};

/// Virtual time in seconds, stepped by the tests.
#[derive(Debug, Clone, Copy)]
pub struct Clock(pub f64);

impl Clock {
    /// Moves on by `dt` and returns the new time.
    pub fn tick(&mut self, dt: f64) -> f64 {
        self.0 += dt;
        self.0
    }
}

/// Steps `clock` by 0.05 s (at most `ticks` times), updating every client
/// in `clients` and then `server`, until `done`; returns whether it was.
pub fn run(
    clock: &mut Clock,
    ticks: usize,
    server: &mut Server<MemorySocket>,
    clients: &mut [&mut Client<MemorySocket>],
    mut done: impl FnMut(&mut Server<MemorySocket>, &mut [&mut Client<MemorySocket>]) -> bool,
) -> bool {
    for _ in 0..ticks {
        let t = clock.tick(0.05);
        for client in clients.iter_mut() {
            client.update(t);
        }
        server.update(t);
        if done(server, clients) {
            return true;
        }
    }
    false
}

/// Whether every client is connected.
pub fn all_connected(
    _: &mut Server<MemorySocket>,
    clients: &mut [&mut Client<MemorySocket>],
) -> bool {
    clients.iter().all(|c| c.state() == ClientState::Connected)
}

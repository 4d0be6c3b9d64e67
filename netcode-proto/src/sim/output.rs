//! The [`Output`] through which the protocol core sends into the simulator,
//! and [`NetworkSimulator::output`], which makes one.

use crate::time::Instant;
use alloc::vec::Vec;
use core::net::SocketAddr;

use super::network::NetworkSimulator;
use crate::io::Output;

/// An [`Output`] for an endpoint at address `from` that sends into a
/// [`NetworkSimulator`] at time `now` and collects its events into a `Vec`.
///
/// Build it with [`NetworkSimulator::output`] or directly from its fields.
#[derive(Debug)]
pub struct SimOutput<'a, E> {
    /// The network the datagrams go into.
    pub sim: &'a mut NetworkSimulator,
    /// The address the datagrams are sent from.
    pub from: SocketAddr,
    /// The simulated time they are sent at.
    pub now: Instant,
    /// Where the events go.
    pub events: &'a mut Vec<E>,
}

impl<E> Output<E> for SimOutput<'_, E> {
    fn send(&mut self, to: SocketAddr, datagram: &[u8]) {
        self.sim.send(self.now, self.from, to, datagram);
    }

    fn event(&mut self, event: E) {
        self.events.push(event);
    }
}

impl NetworkSimulator {
    /// An [`Output`] through which an endpoint at `from` sends into this
    /// simulator at time `now`, collecting its events into `events`.
    pub fn output<'a, E>(
        &'a mut self,
        now: Instant,
        from: SocketAddr,
        events: &'a mut Vec<E>,
    ) -> SimOutput<'a, E> {
        SimOutput {
            sim: self,
            from,
            now,
            events,
        }
    }
}

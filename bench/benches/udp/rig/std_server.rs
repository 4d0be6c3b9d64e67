//! The ours-std row: netcode-std's own server on its default sockets
//! (`std::net::UdpSocket`, batched with `recvmmsg` / `sendmmsg` on Linux),
//! driven as its documentation's loop: `wait` (one `poll` of its socket,
//! until a datagram or the core's next deadline, here at most 1 ms so the
//! thread notices the end of a run), `update` (which reads the socket),
//! drain `poll_event`, then `receive_any` / `send_packet` / `free_packet`;
//! the whole turn inside one `batch()` scope, as the mio row does.

use std::net::SocketAddr;
use std::time::Duration;

use netcode_mio::netcode_std;

use super::clock::Clock;
use super::echo::{Counters, EchoServer, Totals, config};

pub(super) struct StdServer {
    server: netcode_std::Server,
}

impl StdServer {
    pub(super) fn new(slots: usize) -> Result<Self, String> {
        let mut server = netcode_std::Server::new("127.0.0.1:0", config())
            .map_err(|e| format!("netcode-std server: {e}"))?;
        server
            .start(slots)
            .map_err(|e| format!("netcode-std server: {e}"))?;
        Ok(Self { server })
    }
}

impl EchoServer for StdServer {
    fn address(&self) -> SocketAddr {
        self.server.public_address()
    }

    fn connected(&self) -> Option<usize> {
        Some(self.server.num_connected_clients())
    }

    fn turn(&mut self, clock: Clock, wait: Duration, counters: &Counters) -> Result<(), String> {
        self.server.wait(wait);
        let mut echoed = 0;
        let mut batch = self.server.batch();
        batch.update(clock.now());
        while batch.poll_event().is_some() {}
        while let Some((slot, packet)) = batch.receive_any() {
            let _ = batch.send_packet(slot, packet.data());
            batch.free_packet(packet);
            echoed += 1;
        }
        drop(batch);
        counters.echoed(echoed);
        counters.totals(&Totals::ours(
            self.server.transport_stats(),
            &self.server.stats(),
        ));
        Ok(())
    }
}

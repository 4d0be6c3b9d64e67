//! The netcode-tokio row: our host on tokio UDP sockets, driven by its own
//! driver (`Server::turn`, which sleeps until a socket is readable or the
//! protocol's next deadline) on a current-thread runtime on the server's
//! thread, echoing inside one `batch()` per turn as the mio row does.

use std::net::SocketAddr;
use std::time::Duration;

use super::clock::Clock;
use super::echo::{Counters, EchoServer, Totals, config};

pub(super) struct TokioServer {
    runtime: tokio::runtime::Runtime,
    server: netcode_tokio::Server,
}

impl TokioServer {
    pub(super) fn new(slots: usize) -> Result<Self, String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("tokio runtime: {e}"))?;
        let mut server = runtime
            .block_on(netcode_tokio::Server::new("127.0.0.1:0", config()))
            .map_err(|e| format!("netcode-tokio server: {e}"))?;
        runtime
            .block_on(server.start(slots))
            .map_err(|e| format!("netcode-tokio server: {e}"))?;
        Ok(Self { runtime, server })
    }
}

impl EchoServer for TokioServer {
    fn address(&self) -> SocketAddr {
        self.server.public_address()
    }

    fn connected(&self) -> Option<usize> {
        Some(self.server.num_connected_clients())
    }

    fn turn(&mut self, _clock: Clock, wait: Duration, counters: &Counters) -> Result<(), String> {
        let Self { runtime, server } = self;
        runtime.block_on(async {
            let _ = tokio::time::timeout(wait, server.turn()).await;
        });
        let mut echoed = 0;
        let mut batch = server.batch();
        while batch.poll_event().is_some() {}
        while let Some((slot, packet)) = batch.receive_any() {
            let _ = batch.send_packet(slot, packet.data());
            batch.free_packet(packet);
            echoed += 1;
        }
        drop(batch);
        counters.echoed(echoed);
        counters.totals(&Totals::ours(server.transport_stats(), &server.stats()));
        Ok(())
    }
}

//! The tick-loop UDP servers for `wt-bench connect udp --server KIND`
//! (`wt-bench serve KIND --tick-ms T`): ours on netcode-std, renetcode and
//! netcode-official, each in the loop a game server runs at a fixed tick,
//! on the bench's protocol id and private key, taking every payload and
//! dropping it. Every tick (1 ms unless `--tick-ms` says otherwise):
//!
//! * `netcode-std`: `update` (which reads the socket, in batches), its
//!   events, then every payload.
//! * `renetcode` (sans-IO): a non-blocking 127.0.0.1 socket read until
//!   empty, every datagram handed to `process_packet` and its answer sent at
//!   once; then `update` and `update_client` (keep-alives, timeouts).
//! * `netcode-official` (owns its socket, read only in `update`): `update`,
//!   its events, then every slot's payloads.
//!
//! The C reference's program (`bench/c/netcode_c_server.c`) runs the same
//! loop. Each prints the same `READY` line as `serve netcode` (`url=-`)
//! and answers `stats` with its connected clients.

use std::io::ErrorKind;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use netcode_bench::fixtures::{PRIVATE_KEY, PROTOCOL_ID};
use netcode_bench::peers::renet_outcome;
use netcode_tokio::netcode_std;
use renetcode::{NetcodeServer, ServerAuthentication, ServerConfig};

use crate::announce::ready;
use crate::options::server_config;

/// Says where to connect; `stats` answers with the clients connected.
fn ready_udp(address: SocketAddr) -> Arc<AtomicUsize> {
    let connected = Arc::new(AtomicUsize::new(0));
    let shown = Arc::clone(&connected);
    ready(Some(address), "-", &"0".repeat(64), None, move || {
        format!("connected={}", shown.load(Ordering::Relaxed))
    });
    connected
}

/// Runs `turn` once per `tick`, for ever (the process ends with its
/// input); a turn that overruns its tick starts the next one at once.
fn every_tick(tick: Duration, mut turn: impl FnMut()) -> ! {
    let mut next = Instant::now();
    loop {
        turn();
        next += tick;
        let now = Instant::now();
        match next.checked_duration_since(now) {
            Some(wait) => std::thread::sleep(wait),
            None => next = now,
        }
    }
}

/// Serves `kind` with `slots` slots until stdin ends.
pub(crate) fn serve(kind: &str, slots: usize, tick: Duration) -> Result<(), String> {
    match kind {
        "netcode-std" => serve_std(slots, tick),
        "renetcode" => serve_renetcode(slots, tick),
        _ => serve_official(slots, tick),
    }
}

fn serve_std(slots: usize, tick: Duration) -> Result<(), String> {
    let mut server = netcode_std::Server::new("127.0.0.1:0", server_config())
        .map_err(|e| format!("netcode-std server: {e}"))?;
    server
        .start(slots)
        .map_err(|e| format!("netcode-std server: {e}"))?;
    let connected = ready_udp(server.public_address());
    let started = Instant::now();
    every_tick(tick, || {
        let mut batch = server.batch();
        batch.update(started.elapsed().as_secs_f64());
        while batch.poll_event().is_some() {}
        while let Some((_, packet)) = batch.receive_any() {
            batch.free_packet(packet);
        }
        drop(batch);
        connected.store(server.num_connected_clients(), Ordering::Relaxed);
    })
}

fn serve_renetcode(slots: usize, tick: Duration) -> Result<(), String> {
    let socket = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).map_err(|e| format!("bind: {e}"))?;
    socket
        .set_nonblocking(true)
        .map_err(|e| format!("socket: {e}"))?;
    let address = socket.local_addr().map_err(|e| format!("socket: {e}"))?;
    let unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|e| format!("clock: {e}"))?;
    let mut server = NetcodeServer::new(ServerConfig {
        current_time: unix,
        max_clients: slots,
        protocol_id: PROTOCOL_ID,
        public_addresses: vec![address],
        authentication: ServerAuthentication::Secure {
            private_key: PRIVATE_KEY,
        },
    });
    let connected = ready_udp(address);
    let mut buffer = [0u8; 1500];
    let mut last_update = Instant::now();
    every_tick(tick, || {
        loop {
            let (len, from) = match socket.recv_from(&mut buffer) {
                Ok(received) => received,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            let send = |to, datagram: &[u8]| {
                let _ = socket.send_to(datagram, to);
            };
            renet_outcome(server.process_packet(from, &mut buffer[..len]), send);
        }
        let now = Instant::now();
        server.update(now - last_update);
        last_update = now;
        for client_id in server.clients_id() {
            renet_outcome(server.update_client(client_id), |to, datagram| {
                let _ = socket.send_to(datagram, to);
            });
        }
        connected.store(server.connected_clients(), Ordering::Relaxed);
    })
}

fn serve_official(slots: usize, tick: Duration) -> Result<(), String> {
    let started = Instant::now();
    let mut server = netcode::Server::new(
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        PROTOCOL_ID,
        &PRIVATE_KEY,
        0.0,
    )
    .map_err(|e| format!("netcode-official server: {e}"))?;
    server
        .start(slots)
        .map_err(|e| format!("netcode-official server: {e}"))?;
    let connected = ready_udp(server.address());
    every_tick(tick, || {
        server.update(started.elapsed().as_secs_f64());
        while server.next_event().is_some() {}
        for slot in 0..server.max_clients() {
            while server.receive_packet(slot).is_some() {}
        }
        connected.store(server.num_connected_clients(), Ordering::Relaxed);
    })
}

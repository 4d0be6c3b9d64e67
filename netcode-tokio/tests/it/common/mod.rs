//! What the tokio tests share: the workspace's test key, protocol id and
//! tokens (`support/test-fixtures`), servers on loopback, a bound on every
//! wait, and the payload each test checks.
#![allow(dead_code, unreachable_pub, unused_imports)]

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use netcode_tokio::{Incoming, Server};

pub use test_fixtures::{
    AdmittedFrom, DEADLINE as LIMIT, PRIVATE_KEY as KEY, PROTOCOL_ID, config, ipv6_available,
};

/// A token for `client_id` listing `servers`, issued as of `admitted`,
/// timing out after 2 s of silence.
pub fn token(admitted: AdmittedFrom, client_id: u64, servers: &[SocketAddr]) -> [u8; 2048] {
    admitted.token_timing_out(client_id, servers, 2)
}

/// [`token`] issued now: for a server of another implementation, or for
/// none.
pub fn token_now(client_id: u64, servers: &[SocketAddr]) -> [u8; 2048] {
    test_fixtures::token_timing_out(client_id, servers, 2)
}

/// A server on `address` with `slots` slots, started without waiting for
/// the wall clock (the async `start` sleeps until the restart rule's
/// second is over; `start_nowait` of the server inside does not), and the
/// second its tokens are to be issued at.
pub async fn server(address: &str, slots: usize) -> (Server, AdmittedFrom) {
    let mut server = Server::new(address, config())
        .await
        .expect("bind the server");
    let admitted = start_nowait(&mut server, slots);
    (server, admitted)
}

/// Starts `server` with `slots` slots without waiting for the wall clock;
/// returns the second its tokens are to be issued at.
pub fn start_nowait(server: &mut Server, slots: usize) -> AdmittedFrom {
    test_fixtures::start_nowait(server.get_mut(), slots)
}

/// A server on `address` started by the async `start`, which returns once
/// the restart rule's second is over: for tokens made by another
/// implementation, stamped with its own clock.
pub async fn server_after_the_restart_second(address: &str, slots: usize) -> Server {
    let mut server = Server::new(address, config())
        .await
        .expect("bind the server");
    server.start(slots).await.expect("start the server");
    server
}

/// Awaits `future`, panicking with `what` after [`LIMIT`].
pub async fn within<T>(what: &str, future: impl Future<Output = T>) -> T {
    match tokio::time::timeout(LIMIT, future).await {
        Ok(value) => value,
        Err(_) => panic!("timed out after {LIMIT:?}: {what}"),
    }
}

/// Payload `n` of client `client_id`: its length and bytes depend on both.
pub fn payload(client_id: u64, n: u64) -> Vec<u8> {
    let len = 1 + ((client_id * 7 + n * 13) % 1200) as usize;
    (0..len)
        .map(|i| (i as u64 ^ client_id ^ (n << 3)) as u8)
        .collect()
}

/// Echoes every payload to its sender until the task is aborted; counts
/// nothing, checks nothing (the clients check).
pub async fn echo_forever(mut server: Server) {
    loop {
        if let Incoming::Payload {
            client_index,
            packet,
        } = server.next().await
        {
            let _ = server.send_packet(client_index, packet.data());
            server.free_packet(packet);
        }
    }
}

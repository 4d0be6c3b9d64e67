//! What the tokio tests share: the workspace's test key, protocol id and
//! tokens (`support/test-fixtures`), servers on loopback, a bound on every
//! wait, and the payload each test checks.
#![allow(dead_code, unreachable_pub, unused_imports)]

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use netcode_tokio::{Incoming, Server};

pub use test_fixtures::{
    DEADLINE as LIMIT, PRIVATE_KEY as KEY, PROTOCOL_ID, config, ipv6_available,
};

/// A token for `client_id` listing `servers`, timing out after 2 s of
/// silence.
pub fn token(client_id: u64, servers: &[SocketAddr]) -> [u8; 2048] {
    test_fixtures::token_timing_out(client_id, servers, 2)
}

/// A started server on `address`.
pub async fn server(address: &str, slots: usize) -> Server {
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

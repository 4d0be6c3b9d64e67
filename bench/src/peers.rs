//! Drivers for the peers, on the same inputs as netcode-proto's fixtures.
//!
//! * `renetcode` 2.x is sans-IO like netcode-proto: its packet layer is
//!   private, so packets are written through `NetcodeClient` and read
//!   through `NetcodeServer`, its public path.
//! * `netcode-official` 1.x owns its UDP socket: only token generation has a
//!   public in-memory path; its packets are counted over loopback UDP
//!   (`src/bin/netcode-count/peers.rs`).

use std::net::SocketAddr;
use std::time::Duration;

use crate::fixtures::{
    EXPIRE_SECONDS, PRIVATE_KEY, PROTOCOL_ID, SERVER, TIMEOUT_SECONDS, TickDatagram, UNIX_NOW,
    USER_DATA, client_address,
};
use renetcode::{
    ClientAuthentication, ConnectToken, NetcodeClient, NetcodeServer, ServerAuthentication,
    ServerConfig, ServerResult,
};

/// renetcode's most clients per server.
pub const RENET_MAX_CLIENTS: usize = 1024;

/// The unix time as a duration: renetcode reads token expiry from its clock.
pub fn renet_now() -> Duration {
    Duration::from_secs(UNIX_NOW)
}

/// A renetcode token for `client_id` (its generator draws from the OS).
pub fn renet_token(client_id: u64) -> ConnectToken {
    ConnectToken::generate(
        renet_now(),
        PROTOCOL_ID,
        EXPIRE_SECONDS,
        client_id,
        TIMEOUT_SECONDS,
        vec![SERVER],
        Some(&USER_DATA),
        &PRIVATE_KEY,
    )
    .expect("valid token parameters")
}

/// A renetcode server with `max_clients` slots.
pub fn renet_server(max_clients: usize) -> NetcodeServer {
    NetcodeServer::new(ServerConfig {
        current_time: renet_now(),
        max_clients,
        protocol_id: PROTOCOL_ID,
        public_addresses: vec![SERVER],
        authentication: ServerAuthentication::Secure {
            private_key: PRIVATE_KEY,
        },
    })
}

/// What a renetcode server's result means for its loop: the datagram it
/// asks to send (to `send`), and the payload it carried, if any, with its
/// client.
pub fn renet_outcome<'a>(
    result: ServerResult<'a, '_>,
    mut send: impl FnMut(SocketAddr, &[u8]),
) -> Option<(u64, &'a [u8])> {
    match result {
        ServerResult::Payload { client_id, payload } => Some((client_id, payload)),
        ServerResult::PacketToSend { addr, payload }
        | ServerResult::ClientConnected { addr, payload, .. }
        | ServerResult::ClientDisconnected {
            addr,
            payload: Some(payload),
            ..
        } => {
            send(addr, payload);
            None
        }
        ServerResult::ClientDisconnected { payload: None, .. } | ServerResult::None => None,
    }
}

/// A fresh renetcode client for `token`.
pub fn renet_client(token: ConnectToken) -> NetcodeClient {
    NetcodeClient::new(
        renet_now(),
        ClientAuthentication::Secure {
            connect_token: token,
        },
    )
    .expect("a valid token")
}

/// The first datagram a fresh renetcode client sends: its request.
pub fn renet_request(token: ConnectToken) -> Vec<u8> {
    let mut client = renet_client(token);
    let (packet, _) = client.update(Duration::ZERO).expect("a request is due");
    packet.to_vec()
}

fn copy(bytes: &[u8], into: &mut [u8; 1400]) -> usize {
    into[..bytes.len()].copy_from_slice(bytes);
    bytes.len()
}

/// Drives a renetcode client from its token to connected, in memory.
pub fn renet_connect(
    server: &mut NetcodeServer,
    token: ConnectToken,
    address: SocketAddr,
) -> NetcodeClient {
    let mut a = [0u8; 1400];
    let mut b = [0u8; 1400];
    let mut client = renet_client(token);
    let n = client
        .update(Duration::ZERO)
        .map_or(0, |(packet, _)| copy(packet, &mut a));
    let n = match server.process_packet(address, &mut a[..n]) {
        ServerResult::PacketToSend { payload, .. } => copy(payload, &mut b),
        _ => 0,
    };
    client.process_packet(&mut b[..n]);
    let n = client
        .update(Duration::ZERO)
        .map_or(0, |(packet, _)| copy(packet, &mut a));
    let n = match server.process_packet(address, &mut a[..n]) {
        ServerResult::ClientConnected { payload, .. } => copy(payload, &mut b),
        _ => 0,
    };
    client.process_packet(&mut b[..n]);
    client
}

/// A renetcode server with `n` clients connected in memory, and the clients.
pub fn renet_connected(n: usize) -> (NetcodeServer, Vec<NetcodeClient>) {
    let mut server = renet_server(n);
    let clients: Vec<NetcodeClient> = (0..n)
        .map(|i| {
            let client = renet_connect(&mut server, renet_token(i as u64 + 1), client_address(i));
            assert!(client.is_connected(), "renetcode client {i}");
            client
        })
        .collect();
    assert_eq!(server.connected_clients(), n);
    (server, clients)
}

/// Every renetcode client sends `data`; client `i`'s datagram lands in
/// `datagrams[i]`. Clients are not updated (as ours are not in a tick): a
/// payload needs no update, and their clocks stay inside the timeout.
pub fn renet_send_from_each(
    clients: &mut [NetcodeClient],
    data: &[u8],
    datagrams: &mut [TickDatagram],
) {
    for (client, (bytes, len)) in clients.iter_mut().zip(datagrams) {
        let (_, packet) = client
            .generate_payload_packet(data)
            .expect("a connected client sends");
        bytes[..packet.len()].copy_from_slice(packet);
        *len = packet.len();
    }
}

/// A netcode-official token (its generator reads the clock and the OS
/// generator itself).
pub fn official_token(client_id: u64) -> [u8; 2048] {
    netcode::generate_connect_token(
        &[SERVER],
        &[SERVER],
        EXPIRE_SECONDS as i32,
        TIMEOUT_SECONDS,
        client_id,
        PROTOCOL_ID,
        &PRIVATE_KEY,
        &USER_DATA,
    )
    .expect("valid token parameters")
}

//! The nonce audit of the restart tests: every (key, nonce) pair sealed
//! twice among captured datagrams (STANDARD.md: *Nonce Reuse and Server
//! Restarts*), and the sessions a server reported.
#![allow(dead_code)]

use std::collections::HashMap;
use std::net::SocketAddr;

use netcode_proto::Key;
use netcode_proto::packet::{PacketContext, PacketTypes, read_packet_with};
use netcode_proto::server::ServerEvent;
use netcode_proto::sim::World;
use netcode_proto::sim::fixtures::PROTOCOL_ID;
use netcode_proto::token::ConnectToken;

/// Every (key, nonce) pair sealed twice, for different bytes, among the
/// captured datagrams, given the tokens whose keys may have sealed them,
/// and how many distinct pairs were seen. Requests are not encrypted and
/// are skipped.
pub(crate) fn reused_nonces(w: &World, tokens: &[[u8; 2048]]) -> (Vec<(u64, SocketAddr)>, usize) {
    let keys: Vec<(Key, Key)> = tokens
        .iter()
        .map(|t| {
            let t = ConnectToken::read(t).unwrap();
            (t.client_to_server_key, t.server_to_client_key)
        })
        .collect();
    let servers: Vec<SocketAddr> = w.servers.iter().map(|s| s.address).collect();
    let mut seen: HashMap<(Vec<u8>, u64), Vec<u8>> = HashMap::new();
    let mut reused = Vec::new();
    for (_, to, bytes) in &w.captured {
        if bytes[0] == 0 {
            continue;
        }
        let to_server = servers.contains(to);
        let accepted = if to_server {
            PacketTypes::SERVER
        } else {
            PacketTypes::CLIENT
        };
        let opened = keys.iter().find_map(|(c2s, s2c)| {
            let key = if to_server { c2s } else { s2c };
            let context = PacketContext {
                protocol_id: PROTOCOL_ID,
                read_key: Some(key),
                accepted,
            };
            let mut copy = bytes.clone();
            let read = read_packet_with(&context, None, &mut copy, None).ok()?;
            Some((key.as_bytes().to_vec(), read.sequence))
        });
        let id = opened.expect("every packet opens with one of the tokens' keys");
        if let Some(previous) = seen.insert(id.clone(), bytes.clone())
            && &previous != bytes
        {
            reused.push((id.1, *to));
        }
    }
    (reused, seen.len())
}

/// The client ids of every session server 0 reported, in order.
pub(crate) fn connected_ids(w: &World) -> Vec<u64> {
    w.servers[0]
        .events
        .iter()
        .filter_map(|e| match e {
            ServerEvent::ClientConnected { client_id, .. } => Some(*client_id),
            _ => None,
        })
        .collect()
}

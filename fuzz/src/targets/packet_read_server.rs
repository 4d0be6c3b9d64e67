//! `read_packet` as a server reads: every server packet type accepted, the
//! vectors' private key and packet key, a replay window. Never panics.

use crate::vectors::{PACKET_KEY, PRIVATE_KEY, PROTOCOL_ID};
use netcode_proto::packet::{PacketTypes, ReadContext};
use netcode_proto::{Key, ReplayProtection, read_packet};

/// The `packet_read_server` fuzz target: runs one input, panicking on a failed check.
pub fn packet_read_server(data: &[u8]) {
    let private_key = Key::from_bytes(PRIVATE_KEY);
    let read_key = Key::from_bytes(PACKET_KEY);
    let context = ReadContext {
        protocol_id: PROTOCOL_ID,
        // Before every vector's expiry, so the request vector opens.
        current_timestamp: 1_700_000_000,
        min_expire_timestamp: 0,
        private_key: Some(&private_key),
        read_key: Some(&read_key),
        accepted: PacketTypes::SERVER,
    };
    let mut window = ReplayProtection::new();
    let mut buffer = data.to_vec();
    let _ = read_packet(&context, &mut buffer, Some(&mut window));
    let mut buffer = data.to_vec();
    let _ = read_packet(&context, &mut buffer, None);
}

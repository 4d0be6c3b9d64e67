//! `read_packet` as a client reads: client packet types, no private key,
//! the vectors' packet key, a replay window. Never panics.

use crate::vectors::{PACKET_KEY, PROTOCOL_ID};
use netcode_proto::packet::{PacketTypes, ReadContext};
use netcode_proto::{Key, ReplayProtection, read_packet};

/// The `packet_read_client` fuzz target: runs one input, panicking on a failed check.
pub fn packet_read_client(data: &[u8]) {
    let read_key = Key::from_bytes(PACKET_KEY);
    let context = ReadContext {
        protocol_id: PROTOCOL_ID,
        current_timestamp: 0,
        min_expire_timestamp: 0,
        private_key: None,
        read_key: Some(&read_key),
        accepted: PacketTypes::CLIENT,
    };
    let mut window = ReplayProtection::new();
    let mut buffer = data.to_vec();
    let _ = read_packet(&context, &mut buffer, Some(&mut window));
    let mut buffer = data.to_vec();
    let _ = read_packet(&context, &mut buffer, None);
}

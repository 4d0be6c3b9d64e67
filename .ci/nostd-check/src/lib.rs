//! Links every part of netcode-proto into a no_std, no-alloc artifact.
#![no_std]
#![forbid(unsafe_code)]

use core::panic::PanicInfo;

use netcode_proto::packet::{Packet, PacketTypes, ReadContext};
use netcode_proto::token::ChallengeToken;
use netcode_proto::{ConnectToken, Key, ReplayProtection, read_packet, write_packet};

#[panic_handler]
fn panic(_: &PanicInfo<'_>) -> ! {
    loop {}
}

/// Round-trips a payload packet and reads a token, so the wire layer is
/// really linked in.
pub fn exercise(buffer: &mut [u8; 2048]) -> usize {
    let key = Key::from_bytes([1; 32]);
    let mut window = ReplayProtection::new();
    let _ = ConnectToken::read(&buffer[..]);
    let _ = ChallengeToken::decrypt(&mut [0u8; 300], 0, &key);
    let Ok(n) = write_packet(&Packet::Payload(&[1, 2, 3]), 7, &key, 9, &mut buffer[..]) else {
        return 0;
    };
    let context = ReadContext {
        protocol_id: 9,
        current_timestamp: 0,
        min_expire_timestamp: 0,
        private_key: Some(&key),
        read_key: Some(&key),
        accepted: PacketTypes::ALL,
    };
    match read_packet(&context, &mut buffer[..n], Some(&mut window)) {
        Ok(p) => p.sequence as usize,
        Err(e) => e.index(),
    }
}

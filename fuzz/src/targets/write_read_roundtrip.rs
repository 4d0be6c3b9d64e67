//! `write_packet` then `read_packet` (every type accepted) gives back the
//! packet that was written, with its sequence; a panic here is a real bug.
//!
//! Input: type (byte mod 7), sequence (`u64`), key (32 bytes), protocol id
//! (`u64`), output buffer size (`u16` mod 1301), then the body:
//!
//! * request: expire timestamp (`u64`), nonce (24 bytes), a flag byte, and
//!   1024 bytes of private data, or, when the flag is odd, a private token
//!   plaintext that is read and sealed with the key (as a backend would);
//! * challenge and response: challenge sequence (`u64`), token (300 bytes);
//! * keep-alive: client index and max clients (`u32` each);
//! * payload: length (`u16` mod 1300, so also 0 and over 1200), bytes.

use crate::Cursor;
use netcode_proto::constants::{
    CHALLENGE_TOKEN_BYTES, CONNECT_TOKEN_PRIVATE_BYTES, CONNECTION_REQUEST_BYTES, MAC_BYTES,
    MAX_PAYLOAD_BYTES,
};
use netcode_proto::packet::{
    ChallengePacket, ConnectionRequest, KeepAlivePacket, PacketTypes, ReadContext, RequestPacket,
    WriteError, sequence_bytes,
};
use netcode_proto::{Key, Packet, PacketError, PacketType, PrivateConnectToken, ReplayProtection};
use netcode_proto::{read_packet, write_packet};

/// The `write_read_roundtrip` fuzz target: runs one input, panicking on a failed check.
pub fn write_read_roundtrip(data: &[u8]) {
    let mut input = Cursor::new(data);
    let packet_type = PacketType::ALL[usize::from(input.u8()) % PacketType::COUNT];
    let sequence = input.u64();
    let key = Key::from_bytes(input.array());
    let protocol_id = input.u64();
    let out_len = usize::from(input.u16()) % 1301;

    let mut expire_timestamp = 0;
    let mut nonce = [0u8; 24];
    let mut private_data = [0u8; CONNECT_TOKEN_PRIVATE_BYTES];
    let mut sealed_token = None;
    let challenge;
    let payload: Vec<u8>;
    let packet = match packet_type {
        PacketType::Request => {
            expire_timestamp = input.u64();
            nonce = input.array();
            let seal = input.u8() & 1 == 1;
            private_data = input.array();
            if seal
                && let Ok(token) = PrivateConnectToken::read(&private_data)
                && let Ok(sealed) = token.encrypt(protocol_id, expire_timestamp, &nonce, &key)
            {
                private_data = sealed;
                sealed_token = Some(token);
            }
            Packet::Request(RequestPacket {
                expire_timestamp,
                nonce: &nonce,
                private_data: &private_data,
            })
        }
        PacketType::Denied => Packet::Denied,
        PacketType::Challenge | PacketType::Response => {
            challenge = (input.u64(), input.array::<CHALLENGE_TOKEN_BYTES>());
            let body = ChallengePacket {
                challenge_sequence: challenge.0,
                token: &challenge.1,
            };
            if packet_type == PacketType::Challenge {
                Packet::Challenge(body)
            } else {
                Packet::Response(body)
            }
        }
        PacketType::KeepAlive => Packet::KeepAlive(KeepAlivePacket {
            client_index: input.u32(),
            max_clients: input.u32(),
        }),
        PacketType::Payload => {
            let len = usize::from(input.u16()) % 1300;
            // Exactly `len` bytes: zero padded past the end of the input.
            let mut bytes = input.take(len).to_vec();
            bytes.resize(len, 0);
            payload = bytes;
            Packet::Payload(&payload)
        }
        PacketType::Disconnect => Packet::Disconnect,
    };

    // What write_packet must do, by the format.
    let needed = match &packet {
        Packet::Request(_) => CONNECTION_REQUEST_BYTES,
        _ => {
            let body = match &packet {
                Packet::Challenge(_) | Packet::Response(_) => 8 + CHALLENGE_TOKEN_BYTES,
                Packet::KeepAlive(_) => 8,
                Packet::Payload(p) => p.len(),
                _ => 0,
            };
            1 + sequence_bytes(sequence) + body + MAC_BYTES
        }
    };
    let mut out = vec![0u8; out_len];
    let written = write_packet(&packet, sequence, &key, protocol_id, &mut out);
    if let Packet::Payload(p) = &packet
        && !(1..=MAX_PAYLOAD_BYTES).contains(&p.len())
    {
        assert_eq!(written, Err(WriteError::PayloadSize));
        return;
    }
    if out_len < needed {
        assert_eq!(
            written,
            Err(WriteError::BufferTooSmall),
            "{needed} > {out_len}"
        );
        return;
    }
    assert_eq!(written, Ok(needed), "written size");
    let wire = &out[..needed];

    let context = ReadContext {
        protocol_id,
        current_timestamp: 0,
        min_expire_timestamp: 0,
        private_key: Some(&key),
        read_key: Some(&key),
        accepted: PacketTypes::ALL,
    };
    let mut window = ReplayProtection::new();
    let mut buffer = wire.to_vec();
    let read = read_packet(&context, &mut buffer, Some(&mut window));

    let expected = match packet {
        Packet::Request(_) => {
            match (&read, sealed_token) {
                _ if expire_timestamp == 0 => {
                    assert_eq!(read, Err(PacketError::TokenExpired));
                }
                (read, Some(token)) => {
                    let mut mac = [0u8; MAC_BYTES];
                    mac.copy_from_slice(&private_data[CONNECT_TOKEN_PRIVATE_BYTES - MAC_BYTES..]);
                    let request = ConnectionRequest {
                        expire_timestamp,
                        nonce,
                        token,
                        mac,
                    };
                    let read = read.as_ref().map(|r| (r.sequence, &r.packet));
                    assert_eq!(read, Ok((0, &Packet::Request(request))), "request");
                }
                // Private data nobody sealed.
                (read, None) => assert_eq!(read, &Err(PacketError::DecryptFailed)),
            }
            return;
        }
        Packet::Denied => Packet::<ConnectionRequest>::Denied,
        Packet::Challenge(c) => Packet::Challenge(c),
        Packet::Response(c) => Packet::Response(c),
        Packet::KeepAlive(k) => Packet::KeepAlive(k),
        Packet::Payload(p) => Packet::Payload(p),
        Packet::Disconnect => Packet::Disconnect,
    };
    let read = read.map(|r| (r.sequence, r.packet));
    assert_eq!(read, Ok((sequence, expected)), "packet read back");

    // The same datagram again, through the same window.
    if packet_type.replay_protected() {
        let mut again = wire.to_vec();
        assert_eq!(
            read_packet(&context, &mut again, Some(&mut window)),
            Err(PacketError::Replayed),
            "replayed {packet_type}"
        );
    }
}

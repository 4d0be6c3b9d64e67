//! Round trips: whatever valid value is written reads back the same.

use core::net::SocketAddr;

use crate::common::*;
use netcode_proto::address::{
    read_address, read_address_list, wire_size, write_address, write_address_list,
};
use netcode_proto::bytes::{Reader, Writer};
use netcode_proto::constants::{
    CHALLENGE_TOKEN_BYTES, CONNECT_TOKEN_BYTES, CONNECT_TOKEN_PRIVATE_BYTES,
    CONNECTION_REQUEST_BYTES, MAC_BYTES, USER_DATA_BYTES, VERSION_INFO,
};
use netcode_proto::packet::{
    ConnectionRequest, PacketTypes, ReadContext, RequestPacket, sequence_bytes,
};
use netcode_proto::seeded::SeededRng;
use netcode_proto::token::{ChallengeToken, ConnectTokenParams};
use netcode_proto::{
    ConnectToken, Packet, PrivateConnectToken, ReplayProtection, generate_connect_token,
    read_packet, write_packet,
};
use proptest::prelude::*;

proptest! {
    #[test]
    fn one_address_round_trips(
        address in prop_oneof![ipv4(), ipv6_with_flow_and_scope()],
        trailing in prop::collection::vec(any::<u8>(), 0..8),
    ) {
        let mut buf = [0u8; 19 + 8];
        let mut w = Writer::new(&mut buf);
        write_address(&mut w, &address).unwrap();
        let n = w.position();
        prop_assert_eq!(n, wire_size(&address));
        buf[n..n + trailing.len()].copy_from_slice(&trailing);

        let mut r = Reader::new(&buf[..n + trailing.len()]);
        let back = read_address(&mut r).unwrap();
        prop_assert_eq!(back, on_the_wire(address));
        prop_assert_eq!(r.position(), n, "the reader must stop at the address's end");
    }

    #[test]
    fn address_lists_round_trip(list in prop::collection::vec(
        prop_oneof![ipv4(), ipv6_with_flow_and_scope()],
        1..=32,
    )) {
        let mut buf = [0u8; 4 + 32 * 19];
        let mut w = Writer::new(&mut buf);
        write_address_list(&mut w, &list).unwrap();
        let n = w.position();
        prop_assert_eq!(n, 4 + list.iter().map(wire_size).sum::<usize>());
        prop_assert_eq!(u32::from_le_bytes(buf[..4].try_into().unwrap()) as usize, list.len());

        let mut r = Reader::new(&buf);
        let back = read_address_list(&mut r).unwrap();
        let expected: Vec<SocketAddr> = list.iter().copied().map(on_the_wire).collect();
        prop_assert_eq!(&back[..], &expected[..]);
        prop_assert_eq!(r.position(), n);
    }

    #[test]
    fn private_token_write_read(token in private_token()) {
        let plain = token.write().unwrap();
        prop_assert_eq!(&plain[CONNECT_TOKEN_PRIVATE_BYTES - MAC_BYTES..], &[0u8; MAC_BYTES][..]);
        let back = PrivateConnectToken::read(&plain).unwrap();
        prop_assert_eq!(back, token);
    }

    #[test]
    fn connect_token_write_read(token in connect_token()) {
        let bytes = token.write().unwrap();
        prop_assert_eq!(bytes.len(), CONNECT_TOKEN_BYTES);
        prop_assert_eq!(&bytes[..VERSION_INFO.len()], &VERSION_INFO[..]);
        let back = ConnectToken::read(&bytes).unwrap();
        prop_assert_eq!(back.lifetime_seconds(), token.expire_timestamp - token.create_timestamp);
        prop_assert_eq!(back, token);
    }

    #[test]
    fn challenge_token_write_read(client_id in any::<u64>(), user_data in user_data()) {
        let token = ChallengeToken { client_id, user_data };
        let plain = token.write();
        prop_assert_eq!(&plain[..8], &client_id.to_le_bytes()[..]);
        prop_assert!(plain[8 + USER_DATA_BYTES..].iter().all(|&b| b == 0), "zero padding");
        prop_assert_eq!(ChallengeToken::read(&plain), token);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn private_token_encrypt_decrypt(
        token in private_token(),
        protocol_id in any::<u64>(),
        expire in any::<u64>(),
        nonce in nonce(),
        private_key in key(),
    ) {
        let plain = token.write().unwrap();
        let mut sealed = token.encrypt(protocol_id, expire, &nonce, &private_key).unwrap();
        prop_assert_ne!(&sealed[..], &plain[..], "the sealed form must not be the plaintext");
        let tag: [u8; MAC_BYTES] = sealed[CONNECT_TOKEN_PRIVATE_BYTES - MAC_BYTES..].try_into().unwrap();

        let back = PrivateConnectToken::decrypt(&mut sealed, protocol_id, expire, &nonce, &private_key)
            .unwrap();
        prop_assert_eq!(back, token);
        // Decrypted in place: plaintext in front, the tag kept behind it.
        prop_assert_eq!(
            &sealed[..CONNECT_TOKEN_PRIVATE_BYTES - MAC_BYTES],
            &plain[..CONNECT_TOKEN_PRIVATE_BYTES - MAC_BYTES]
        );
        prop_assert_eq!(&sealed[CONNECT_TOKEN_PRIVATE_BYTES - MAC_BYTES..], &tag[..]);
    }

    #[test]
    fn challenge_token_encrypt_decrypt(
        client_id in any::<u64>(),
        user_data in user_data(),
        sequence in any::<u64>(),
        challenge_key in key(),
    ) {
        let token = ChallengeToken { client_id, user_data };
        let mut sealed = token.encrypt(sequence, &challenge_key);
        prop_assert_ne!(&sealed[..], &token.write()[..]);
        let back = ChallengeToken::decrypt(&mut sealed, sequence, &challenge_key).unwrap();
        prop_assert_eq!(
            &sealed[..CHALLENGE_TOKEN_BYTES - MAC_BYTES],
            &token.write()[..CHALLENGE_TOKEN_BYTES - MAC_BYTES]
        );
        prop_assert_eq!(back, token);
    }

    #[test]
    fn generated_connect_tokens_read_back(
        seed in any::<u64>(),
        protocol_id in any::<u64>(),
        private_key in key(),
        client_id in any::<u64>(),
        (public, internal) in addresses().prop_flat_map(|public| {
            let n = public.len();
            (Just(public), prop::option::of(prop::collection::vec(address(), n)))
        }),
        create_timestamp in any::<u64>(),
        expire_seconds in any::<i64>(),
        timeout_seconds in any::<i32>(),
        user_data in user_data(),
    ) {
        let params = ConnectTokenParams {
            protocol_id,
            private_key: &private_key,
            client_id,
            public_addresses: &public,
            internal_addresses: internal.as_deref(),
            create_timestamp,
            expire_seconds,
            timeout_seconds,
            user_data: &user_data,
        };
        let token = generate_connect_token(&params, &mut SeededRng::new(seed)).unwrap();
        let again = generate_connect_token(&params, &mut SeededRng::new(seed)).unwrap();
        prop_assert_eq!(&again, &token, "same seed, same token");
        let other = generate_connect_token(&params, &mut SeededRng::new(seed ^ 1)).unwrap();
        prop_assert_ne!(other.nonce, token.nonce, "another seed, another nonce");
        prop_assert_ne!(&token.client_to_server_key, &token.server_to_client_key);

        let expected_expire = if expire_seconds < 0 {
            u64::MAX
        } else {
            create_timestamp.saturating_add(expire_seconds as u64)
        };

        let bytes = token.write().unwrap();
        let public_token = ConnectToken::read(&bytes).unwrap();
        prop_assert_eq!(&public_token, &token);
        prop_assert_eq!(public_token.protocol_id, protocol_id);
        prop_assert_eq!(public_token.create_timestamp, create_timestamp);
        prop_assert_eq!(public_token.expire_timestamp, expected_expire);
        prop_assert_eq!(public_token.timeout_seconds, timeout_seconds);
        prop_assert_eq!(&public_token.server_addresses[..], &public[..]);

        let mut private_data = public_token.private_data;
        let private = PrivateConnectToken::decrypt(
            &mut private_data,
            protocol_id,
            public_token.expire_timestamp,
            &public_token.nonce,
            &private_key,
        )
        .unwrap();
        prop_assert_eq!(private.client_id, client_id);
        prop_assert_eq!(private.timeout_seconds, timeout_seconds);
        prop_assert_eq!(&private.server_addresses[..], internal.as_deref().unwrap_or(&public[..]));
        prop_assert_eq!(&private.client_to_server_key, &public_token.client_to_server_key);
        prop_assert_eq!(&private.server_to_client_key, &public_token.server_to_client_key);
        prop_assert_eq!(private.user_data, user_data);
    }

    #[test]
    fn connection_requests_round_trip(
        token in private_token(),
        protocol_id in any::<u64>(),
        (expire_timestamp, current_timestamp) in (1..=u64::MAX).prop_flat_map(|e| (Just(e), 0..e)),
        use_min_expire in any::<bool>(),
        nonce in nonce(),
        private_key in key(),
        packet_key in key(),
        sequence in any::<u64>(),
    ) {
        let sealed = token.encrypt(protocol_id, expire_timestamp, &nonce, &private_key).unwrap();
        let packet = Packet::Request(RequestPacket {
            expire_timestamp,
            nonce: &nonce,
            private_data: &sealed,
        });
        let mut out = [0u8; CONNECTION_REQUEST_BYTES + 10];
        // The sequence and key play no part in a connection request.
        let n = write_packet(&packet, sequence, &packet_key, protocol_id, &mut out).unwrap();
        prop_assert_eq!(n, CONNECTION_REQUEST_BYTES);
        prop_assert_eq!(out[0], 0);

        let context = ReadContext {
            protocol_id,
            current_timestamp,
            min_expire_timestamp: if use_min_expire { expire_timestamp } else { 0 },
            private_key: Some(&private_key),
            read_key: None,
            accepted: PacketTypes::SERVER,
        };
        let mut window = ReplayProtection::new();
        let read = read_packet(&context, &mut out[..n], Some(&mut window)).unwrap();
        prop_assert_eq!(read.sequence, 0);
        let expected = ConnectionRequest {
            expire_timestamp,
            nonce,
            token,
            mac: sealed[CONNECT_TOKEN_PRIVATE_BYTES - MAC_BYTES..].try_into().unwrap(),
        };
        prop_assert_eq!(read.packet, Packet::Request(expected));
        prop_assert_eq!(window, ReplayProtection::new(), "requests leave the replay window alone");
    }
}

proptest! {
    #[test]
    fn encrypted_packets_round_trip(
        packet in encrypted_packet(),
        sequence in sequence(),
        protocol_id in any::<u64>(),
        packet_key in key(),
    ) {
        let mut out = vec![0u8; 1300];
        let n = write_packet(&packet.packet(), sequence, &packet_key, protocol_id, &mut out).unwrap();
        let header = 1 + sequence_bytes(sequence);
        prop_assert_eq!(n, header + packet.body_len() + MAC_BYTES);
        prop_assert_eq!(out[0], ((sequence_bytes(sequence) as u8) << 4) | packet.packet_type() as u8);
        prop_assert_eq!(&out[1..header], &sequence.to_le_bytes()[..header - 1]);

        let context = ReadContext {
            protocol_id,
            current_timestamp: 0,
            min_expire_timestamp: 0,
            private_key: None,
            read_key: Some(&packet_key),
            accepted: PacketTypes::ALL,
        };
        let mut window = ReplayProtection::new();
        let read = read_packet(&context, &mut out[..n], Some(&mut window)).unwrap();
        prop_assert_eq!(read.sequence, sequence);
        prop_assert_eq!(read.packet, packet.expected());
        // Only keep-alive, payload and disconnect go through the window.
        prop_assert_eq!(
            window.already_received(sequence),
            packet.packet_type().replay_protected()
        );
    }

    #[test]
    fn encrypted_packets_round_trip_without_a_window(
        packet in encrypted_packet(),
        sequence in sequence(),
    ) {
        let bytes = write(&packet, sequence);
        let context = any_context(None, Some(&PACKET_KEY));
        // The same bytes read twice: with no window there is no replay check.
        for _ in 0..2 {
            let mut copy = bytes.clone();
            let read = read_packet(&context, &mut copy, None).unwrap();
            prop_assert_eq!(read.sequence, sequence);
            prop_assert_eq!(read.packet, packet.expected());
        }
    }
}

#[test]
fn every_fixture_packet_reads_back_on_its_side() {
    for packet in fixture_packets() {
        for sequence in FIXTURE_SEQUENCES {
            let bytes = write(&packet, sequence);
            let packet_type = packet.packet_type();
            for accepted in [PacketTypes::CLIENT, PacketTypes::SERVER] {
                let context = ReadContext {
                    accepted,
                    ..any_context(None, Some(&PACKET_KEY))
                };
                let mut copy = bytes.clone();
                let result = read_packet(&context, &mut copy, None);
                if accepted.contains(packet_type) {
                    let read = result.unwrap();
                    assert_eq!(read.sequence, sequence);
                    assert_eq!(read.packet, packet.expected());
                } else {
                    assert_eq!(
                        result,
                        Err(netcode_proto::PacketError::TypeNotAccepted),
                        "{packet_type} on {accepted:?}"
                    );
                }
            }
        }
    }
}

/// Outputs hand the writer buffers that still hold an earlier datagram
/// (`Output::send_with`): a packet written over any bytes is the packet
/// written over zeros, every byte of it written.
#[test]
fn a_packet_written_over_old_bytes_is_the_packet_written_over_zeros() {
    for packet in fixture_packets() {
        for sequence in FIXTURE_SEQUENCES {
            let over_zeros = write(&packet, sequence);
            for old in [0x00u8, 0xa5, 0xff] {
                let mut buffer = vec![old; 2048];
                let n = write_packet(
                    &packet.packet(),
                    sequence,
                    &PACKET_KEY,
                    PROTOCOL_ID,
                    &mut buffer,
                )
                .unwrap();
                assert_eq!(
                    buffer[..n],
                    over_zeros[..],
                    "{:?} over {old:#x}",
                    packet.packet_type()
                );
            }
        }
    }
    let request = fixture_request();
    let sealed = &request[request.len() - CONNECT_TOKEN_PRIVATE_BYTES..];
    let packet = Packet::Request(RequestPacket {
        expire_timestamp: REQUEST_EXPIRE,
        nonce: &REQUEST_NONCE,
        private_data: sealed.try_into().unwrap(),
    });
    let mut buffer = vec![0xa5u8; 2048];
    let n = write_packet(&packet, 0, &OTHER_KEY, PROTOCOL_ID, &mut buffer).unwrap();
    assert_eq!(buffer[..n], request[..]);
}

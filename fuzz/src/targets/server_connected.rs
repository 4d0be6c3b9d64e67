//! A server with one real client connected, fed datagrams from the input.
//!
//! The input is a list of operations. Each starts with a byte `op`: the low
//! two bits pick the sender among `PEERS` (the real client's address
//! first), the next two the kind of operation, and the high four advance
//! the clock by 0 to 300 ms first.
//!
//! * 0: a raw datagram: a `u16` length (mod 1400), then that many bytes.
//! * 1: a sealed packet: a byte whose low four bits pick the token whose
//!   client-to-server key seals it (and whose private data a request
//!   carries) and whose high four pick a peer, counted from the sender, whose
//!   last challenge from the server a response may echo (so handshakes can
//!   complete); then what [`crate::sealed_packet`] reads.
//! * 2: `update`, after advancing the clock a further 0 to 25.5 s.
//! * 3: a server call: send a payload, disconnect a slot or all, stop, or
//!   start again with 1 to 4 slots.
//!
//! The server must never panic, and its slot bookkeeping must stay sound.

use std::collections::HashSet;
use std::time::Duration;

use crate::{
    Cursor, MAX_CLIENTS, Mailbox, NUM_TOKENS, PEERS, Session, open_challenge, sealed_packet,
    tokens, unix_at,
};
use netcode_proto::constants::{CHALLENGE_TOKEN_BYTES, MAX_PAYLOAD_BYTES};
use netcode_proto::seeded::SeededRng;
use netcode_proto::server::{HeapStorage, Server};

/// The `server_connected` fuzz target: runs one input, panicking on a failed check.
pub fn server_connected(data: &[u8]) {
    let Session {
        mut server,
        mut now,
        ..
    } = Session::connect();
    let mut input = Cursor::new(data);
    let mut out = Mailbox::default();
    let mut rng = SeededRng::new(3);
    let mut challenges: [Option<(u64, [u8; CHALLENGE_TOKEN_BYTES])>; PEERS.len()] =
        [None; PEERS.len()];
    let mut next_sequence = 1000u64;

    while !input.is_empty() {
        let op = input.u8();
        now += Duration::from_millis(u64::from(op >> 4) * 20);
        let peer = usize::from(op & 3);
        let from = PEERS[peer];
        match (op >> 2) & 3 {
            0 => {
                let len = usize::from(input.u16()) % 1400;
                let mut datagram = input.take(len).to_vec();
                check_payload(server.handle(now, from, &mut datagram, &mut out));
            }
            1 => {
                let pick = input.u8();
                let token = &tokens()[usize::from(pick & 0x0f) % NUM_TOKENS];
                let echoed = (peer + usize::from(pick >> 4)) % PEERS.len();
                let mut datagram = sealed_packet(
                    &mut input,
                    &token.client_to_server_key,
                    token,
                    challenges[echoed].as_ref(),
                    &mut next_sequence,
                );
                check_payload(server.handle(now, from, &mut datagram, &mut out));
            }
            2 => {
                now += Duration::from_millis(u64::from(input.u8()) * 100);
                server.update(now, unix_at(now), &mut out);
            }
            _ => {
                let call = input.u8();
                let index = usize::from(call >> 4) % (MAX_CLIENTS + 2);
                match call % 6 {
                    0 => {
                        let len = usize::from(input.u16()) % (MAX_PAYLOAD_BYTES + 2);
                        let payload = input.take(len);
                        let _ = server.send_payload(now, index, payload, &mut out);
                    }
                    1 => server.disconnect_client(index, &mut out),
                    2 => server.disconnect_all_clients(&mut out),
                    3 => {
                        let _ = server.next_deadline();
                        let _ = server.client_id(index);
                        let _ = server.client_address(index);
                        let _ = server.next_packet_sequence(index);
                        let _ = server.disconnect_reason(index);
                    }
                    4 => server.stop(now, &mut out),
                    _ => {
                        let max_clients = 1 + index % MAX_CLIENTS;
                        let _ = server.start(now, unix_at(now), max_clients, &mut rng, &mut out);
                    }
                }
            }
        }
        for (to, datagram) in out.datagrams.drain(..) {
            if let Some(peer) = PEERS.iter().position(|p| *p == to)
                && let Some(challenge) = open_challenge(&datagram)
            {
                challenges[peer] = Some(challenge);
            }
        }
        check_slots(&server);
    }
}

/// A payload the server hands up is 1 to 1200 bytes.
fn check_payload(received: Option<(usize, netcode_proto::session::Payload<'_>)>) {
    if let Some((index, payload)) = received {
        assert!(index < MAX_CLIENTS, "payload from slot {index}");
        assert!(
            (1..=MAX_PAYLOAD_BYTES).contains(&payload.data.len()),
            "payload of {} bytes",
            payload.data.len()
        );
    }
}

/// At most `max_clients` (at most 4) slots are taken, the count matches the
/// slots, and no two slots share an address or a client id.
fn check_slots(server: &Server<HeapStorage>) {
    let connected = server.num_connected_clients();
    assert!(connected <= MAX_CLIENTS, "{connected} clients on 4 slots");
    assert!(connected <= server.max_clients());
    let slots: Vec<usize> = (0..MAX_CLIENTS)
        .filter(|&i| server.client_connected(i))
        .collect();
    assert_eq!(slots.len(), connected, "connected count vs slots");
    let addresses: HashSet<_> = slots.iter().map(|&i| server.client_address(i)).collect();
    assert_eq!(addresses.len(), connected, "two slots share an address");
    let ids: HashSet<_> = slots.iter().map(|&i| server.client_id(i)).collect();
    assert_eq!(ids.len(), connected, "two slots share a client id");
}

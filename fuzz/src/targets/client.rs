//! A client fed datagrams, calls and times from the input, starting from a
//! copy of the session's real client as it was in one state of its
//! handshake (see [`crate::session`]): sending requests, sending responses,
//! or connected (the first input byte picks, mod 3). Nothing is allocated
//! per input or per operation.
//!
//! The rest is a list of operations. Each starts with a byte `op`: the low
//! two bits pick the sender among `SERVER_LOOKALIKES` (the real server
//! first), the next two the kind of operation, and the high four advance
//! the clock by 0 to 300 ms first.
//!
//! * 0: a raw datagram: a `u16` length (mod 1400), then that many bytes.
//! * 1: a sealed packet: a byte whose bit 0 picks the key of the token the
//!   client holds (0: its server-to-client key, 1: its client-to-server
//!   key, which must fail), then what [`crate::seal::sealed_packet`] reads.
//! * 2: time: the clock moves as [`Clock::jump`] reads (sane, huge, zero
//!   or backward steps, `Duration::MAX`), then `update`.
//! * 3: a client call: a byte whose low three bits pick the call and the
//!   rest a token or a variant: send a payload (`u16` length), disconnect,
//!   connect with a session token, read every accessor, become a loopback
//!   client (slot and slot count: two bytes), leave loopback, receive a
//!   loopback payload (`u16` length, `u64` sequence), or connect with a
//!   session token damaged at one byte (`u16` offset mod 2048, then the
//!   byte).
//!
//! The client must never panic. At the end, if time never went back and
//! the client is not a loopback client, one update past its token's
//! timeout and lifetime must leave it idle, unless it is connected with a
//! token that disables timeouts (no server says anything more).

use std::net::SocketAddr;
use std::time::Duration;

use netcode_proto::ConnectToken;
use netcode_proto::client::ClientState;
use netcode_proto::constants::{CONNECT_TOKEN_BYTES, MAX_PACKET_BYTES, MAX_PAYLOAD_BYTES};
use netcode_proto::io::SendFn;
use netcode_proto::session::Payload;

use crate::Cursor;
use crate::clock::Clock;
use crate::seal::{MAX_DATAGRAM_BYTES, sealed_packet};
use crate::session::{NUM_TOKENS, SERVER_LOOKALIKES, session};

/// The `client` fuzz target: runs one input, panicking on a failed check.
pub fn client(data: &[u8]) {
    let session = session();
    let mut input = Cursor::new(data);
    let snapshot = &session.clients[usize::from(input.u8()) % session.clients.len()];
    let mut client = snapshot.client.clone();
    let mut clock = Clock::new(snapshot.now, session.unix);
    let mut out = SendFn(|_: SocketAddr, _: &[u8]| {});
    // The token the client last connected with, as it read it.
    let mut token: ConnectToken = session.tokens[0].token.clone();
    let mut next_sequence = 1000u64;
    let mut datagram = [0u8; MAX_DATAGRAM_BYTES];
    let mut sealed = [0u8; MAX_PACKET_BYTES];
    let mut damaged = [0u8; CONNECT_TOKEN_BYTES];

    while !input.is_empty() {
        let op = input.u8();
        clock.step(Duration::from_millis(u64::from(op >> 4) * 20));
        let from = SERVER_LOOKALIKES[usize::from(op & 3)];
        match (op >> 2) & 3 {
            0 => {
                let bytes = input.sized(MAX_DATAGRAM_BYTES);
                let datagram = &mut datagram[..bytes.len()];
                datagram.copy_from_slice(bytes);
                check_payload(client.handle(clock.now, from, datagram, &mut out));
            }
            1 => {
                let key = if input.u8() & 1 == 0 {
                    &token.server_to_client_key
                } else {
                    &token.client_to_server_key
                };
                let datagram = sealed_packet(
                    &mut input,
                    key,
                    &token,
                    None,
                    &mut next_sequence,
                    &mut sealed,
                );
                check_payload(client.handle(clock.now, from, datagram, &mut out));
            }
            2 => {
                clock.jump(&mut input);
                client.update(clock.now, &mut out);
            }
            _ => {
                let call = input.u8();
                let pick = usize::from(call >> 3) % NUM_TOKENS;
                match call & 7 {
                    0 => {
                        let payload = input.sized(MAX_PAYLOAD_BYTES + 2);
                        let _ = client.send_payload(clock.now, payload, &mut out);
                    }
                    1 => client.disconnect(clock.now, &mut out),
                    2 => {
                        let chosen = &session.tokens[pick];
                        if client.connect(clock.now, &chosen.bytes, &mut out).is_ok() {
                            token.clone_from(&chosen.token);
                        }
                    }
                    3 => {
                        let _ = client.next_deadline();
                        let _ = client.state();
                        let _ = client.server_address();
                        let _ = client.token_server_addresses();
                        let _ = client.client_index();
                        let _ = client.max_clients();
                        let _ = client.next_packet_sequence();
                        let _ = client.stats();
                    }
                    4 => {
                        let (index, max) = (input.u8(), input.u8());
                        let _ = client.connect_loopback(index.into(), max.into(), &mut out);
                    }
                    5 => client.disconnect_loopback(&mut out),
                    6 => {
                        let payload = input.sized(MAX_PAYLOAD_BYTES + 2);
                        if let Ok(payload) = client.receive_loopback_payload(payload, input.u64()) {
                            check_payload(Some(payload));
                        }
                    }
                    _ => {
                        damaged.copy_from_slice(&session.tokens[pick].bytes);
                        let at = usize::from(input.u16()) % CONNECT_TOKEN_BYTES;
                        damaged[at] = input.u8();
                        if client.connect(clock.now, &damaged, &mut out).is_ok()
                            && let Ok(read) = ConnectToken::read(&damaged)
                        {
                            token = read;
                        }
                    }
                }
            }
        }
    }

    if !clock.went_back && !client.is_loopback() {
        let timeout = u64::try_from(token.timeout_seconds).unwrap_or(0);
        let wait = Duration::from_secs(timeout.max(token.lifetime_seconds()).saturating_add(1));
        if let Some(later) = clock.now.checked_add(wait) {
            client.update(later, &mut out);
            let state = client.state();
            let may_stay = state == ClientState::Connected && token.timeout_seconds <= 0;
            assert!(
                !state.is_active() || may_stay,
                "a client in state {state:?} after {wait:?} of silence"
            );
        }
    }
}

/// A payload the client hands up is 1 to 1200 bytes.
fn check_payload(received: Option<Payload<'_>>) {
    if let Some(payload) = received {
        assert!(
            (1..=MAX_PAYLOAD_BYTES).contains(&payload.data.len()),
            "payload of {} bytes",
            payload.data.len()
        );
    }
}

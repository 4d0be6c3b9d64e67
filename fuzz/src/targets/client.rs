//! A client fed datagrams from the input, starting from a snapshot of a
//! real handshake with an in-memory server: sending requests, sending
//! responses, or connected (the first input byte picks, mod 3).
//!
//! The rest is a list of operations. Each starts with a byte `op`: the low
//! two bits pick the sender among `SERVER_LOOKALIKES` (the real server
//! first), the next two the kind of operation, and the high four advance
//! the clock by 0 to 300 ms first.
//!
//! * 0: a raw datagram: a `u16` length (mod 1400), then that many bytes.
//! * 1: a sealed packet: a byte whose bit 0 picks the key (0: the token's
//!   server-to-client key, 1: the client-to-server key, which must fail),
//!   then what [`crate::sealed_packet`] reads.
//! * 2: `update`, after advancing the clock a further 0 to 25.5 s.
//! * 3: a client call: send a payload, disconnect, connect again with one
//!   of the session tokens, or read the deadline.
//!
//! The client must never panic.

use std::sync::OnceLock;
use std::time::Duration;

use crate::{
    Cursor, Mailbox, NUM_TOKENS, SERVER_LOOKALIKES, Session, Snapshot, sealed_packet, tokens,
};
use netcode_proto::constants::MAX_PAYLOAD_BYTES;

/// The client's handshake snapshots, taken once: `Client` is `Clone`.
fn snapshots() -> &'static [Snapshot] {
    static SNAPSHOTS: OnceLock<Vec<Snapshot>> = OnceLock::new();
    SNAPSHOTS.get_or_init(|| {
        let snapshots = Session::connect().snapshots;
        assert_eq!(snapshots.len(), 3, "harness: three handshake states");
        snapshots
    })
}

/// The `client` fuzz target: runs one input, panicking on a failed check.
pub fn client(data: &[u8]) {
    let mut input = Cursor::new(data);
    let snapshots = snapshots();
    let Snapshot {
        mut client,
        mut now,
        ..
    } = snapshots[usize::from(input.u8()) % snapshots.len()].clone();
    let mut out = Mailbox::default();
    // The token the client is connecting or connected with.
    let mut token = &tokens()[0];
    let mut next_sequence = 1000u64;

    while !input.is_empty() {
        let op = input.u8();
        now += Duration::from_millis(u64::from(op >> 4) * 20);
        let from = SERVER_LOOKALIKES[usize::from(op & 3)];
        match (op >> 2) & 3 {
            0 => {
                let len = usize::from(input.u16()) % 1400;
                let mut datagram = input.take(len).to_vec();
                check_payload(client.handle(now, from, &mut datagram, &mut out));
            }
            1 => {
                let key = if input.u8() & 1 == 0 {
                    &token.server_to_client_key
                } else {
                    &token.client_to_server_key
                };
                let mut datagram = sealed_packet(&mut input, key, token, None, &mut next_sequence);
                check_payload(client.handle(now, from, &mut datagram, &mut out));
            }
            2 => {
                now += Duration::from_millis(u64::from(input.u8()) * 100);
                client.update(now, &mut out);
            }
            _ => {
                let call = input.u8();
                match call % 4 {
                    0 => {
                        let len = usize::from(input.u16()) % (MAX_PAYLOAD_BYTES + 2);
                        let _ = client.send_payload(now, input.take(len), &mut out);
                    }
                    1 => client.disconnect(now, &mut out),
                    2 => {
                        token = &tokens()[usize::from(call >> 2) % NUM_TOKENS];
                        if let Ok(bytes) = token.write() {
                            let _ = client.connect(now, &bytes, &mut out);
                        }
                    }
                    _ => {
                        let _ = client.next_deadline();
                        let _ = client.state();
                        let _ = client.server_address();
                    }
                }
            }
        }
        out.datagrams.clear();
    }
}

/// A payload the client hands up is 1 to 1200 bytes.
fn check_payload(received: Option<netcode_proto::session::Payload<'_>>) {
    if let Some(payload) = received {
        assert!(
            (1..=MAX_PAYLOAD_BYTES).contains(&payload.data.len()),
            "payload of {} bytes",
            payload.data.len()
        );
    }
}

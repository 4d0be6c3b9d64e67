//! The session's server (4 slots, small tables, the real client in slot 0;
//! see [`crate::session`]) fed datagrams, calls and times from the input.
//! Each input starts from a copy of the session's server restored in place
//! (`clone_from`): nothing is allocated per input or per operation.
//!
//! The input is a list of operations. Each starts with a byte `op`: the low
//! three bits pick the sender among `PEERS` (the real client's address
//! first), the next two the kind of operation, and the high three advance
//! the clock by 0 to 350 ms first.
//!
//! * 0: a raw datagram: a `u16` length (mod 1400), then that many bytes.
//! * 1: a sealed packet: a byte whose low three bits pick the token whose
//!   client-to-server key seals it (and whose private data a request
//!   carries) and whose next three pick a peer, counted from the sender,
//!   whose last challenge from the server a response may echo (so
//!   handshakes can complete); then what [`crate::seal::sealed_packet`]
//!   reads.
//! * 2: time: the clocks move as [`Clock::jump`] reads (sane, huge, zero
//!   or backward steps, `Duration::MAX`, any wall clock), then `update`.
//! * 3: a server call: a byte whose low three bits pick the call, the next
//!   three a slot (mod 6, so two past the last) and the high two a variant:
//!   send a payload (`u16` length), disconnect a slot, disconnect all, read
//!   every accessor and export the token history, then hand back every
//!   request held for `persist_used_token` (the variant's bit 0: durable,
//!   or failed), stop, start with 1
//!   to 4 slots, start with a restored history (the variant picks: empty,
//!   one real token, more than the history holds, or recorded from now,
//!   with the latest second the storage saw 0 or a minute on), or
//!   a loopback call (the variant picks: connect with a token's client id,
//!   disconnect, receive a `u16`-length payload).
//!
//! The server must never panic, and its slot bookkeeping must stay sound
//! after every operation. At the end, if time never went back, one update
//! past the longest token timeout must have timed out every network client
//! (none of them says anything more), except one at an address that sent a
//! request with a token that disables timeouts: as in the reference, a
//! client gets the timeout of its address's encryption mapping, which the
//! last request from there set, whatever token its challenge came from.

use std::cell::RefCell;
use std::net::SocketAddr;
use std::time::Duration;

use netcode_proto::address::same_endpoint;
use netcode_proto::constants::{MAX_PACKET_BYTES, MAX_PAYLOAD_BYTES, USER_DATA_BYTES};
use netcode_proto::io::Output;
use netcode_proto::seeded::SeededRng;
use netcode_proto::server::{
    HeapStorage, PersistOutcome, PersistRequest, RestoredHistory, Server, ServerEvent, UsedToken,
};
use netcode_proto::session::Payload;

use crate::Cursor;
use crate::clock::Clock;
use crate::seal::{Challenge, MAX_DATAGRAM_BYTES, open_challenge, request_token, sealed_packet};
use crate::session::{NUM_TOKENS, PEERS, SLOTS, Session, SessionToken, session};

/// The server's output: it sends nothing anywhere, but reads the challenge
/// out of an answer to a request from a session token, for a later
/// response to echo, and holds what `persist_used_token` hands it until
/// the input hands it back.
struct Peers<'s> {
    tokens: &'s [SessionToken],
    /// The session token of the request being handled, if it is one.
    answering: Option<usize>,
    /// The last challenge each peer was sent.
    challenges: [Option<Challenge>; PEERS.len()],
    /// The requests `persist_used_token` was handed and the input has not
    /// handed back yet (the oldest is forgotten when full: a host that
    /// never answers is survived too).
    held: [Option<PersistRequest>; HELD],
    /// Which peers sent a request with a token that disables timeouts (0
    /// or negative): the last request from an address sets its mapping's
    /// timeout, which is what the client connected from there gets.
    timeless: [bool; PEERS.len()],
}

impl Output<ServerEvent> for Peers<'_> {
    fn send(&mut self, to: SocketAddr, datagram: &[u8]) {
        if let Some(token) = self.answering
            && let Some(peer) = PEERS.iter().position(|p| *p == to)
            && let Some(challenge) =
                open_challenge(datagram, &self.tokens[token].token.server_to_client_key)
        {
            self.challenges[peer] = Some(challenge);
        }
    }

    fn event(&mut self, _event: ServerEvent) {}

    fn persist_used_token(&mut self, request: PersistRequest) {
        self.held.rotate_left(1);
        self.held[HELD - 1] = Some(request);
    }
}

/// Requests held for `persist_used_token` at most.
const HELD: usize = 8;

thread_local! {
    /// The server each input runs on, restored from the session's first.
    static SERVER: RefCell<Option<Server<HeapStorage>>> = const { RefCell::new(None) };
}

/// The `server_connected` fuzz target: runs one input, panicking on a failed check.
pub fn server_connected(data: &[u8]) {
    let session = session();
    SERVER.with_borrow_mut(|server| {
        let server = match server {
            Some(server) => {
                server.clone_from(&session.server);
                server
            }
            None => server.insert(session.server.clone()),
        };
        run(session, server, data);
    });
}

/// Runs the operations of `data` on `server`, a fresh copy of the session's.
fn run(session: &Session, server: &mut Server<HeapStorage>, data: &[u8]) {
    let mut input = Cursor::new(data);
    let mut clock = Clock::new(session.now, session.unix);
    let mut out = Peers {
        tokens: &session.tokens,
        answering: None,
        challenges: [None; PEERS.len()],
        held: [const { None }; HELD],
        timeless: [false; PEERS.len()],
    };
    let mut rng = SeededRng::new(3);
    let mut next_sequence = 1000u64;
    let mut datagram = [0u8; MAX_DATAGRAM_BYTES];
    let mut sealed = [0u8; MAX_PACKET_BYTES];

    while !input.is_empty() {
        let op = input.u8();
        clock.step(Duration::from_millis(u64::from(op >> 5) * 50));
        let peer = usize::from(op & 7);
        match (op >> 3) & 3 {
            0 => {
                let bytes = input.sized(MAX_DATAGRAM_BYTES);
                let datagram = &mut datagram[..bytes.len()];
                datagram.copy_from_slice(bytes);
                handle(server, &clock, peer, datagram, &mut out);
            }
            1 => {
                let pick = input.u8();
                let token = &session.tokens[usize::from(pick & 7) % NUM_TOKENS].token;
                let echoed = (peer + usize::from(pick >> 3)) % PEERS.len();
                let datagram = sealed_packet(
                    &mut input,
                    &token.client_to_server_key,
                    token,
                    out.challenges[echoed].as_ref(),
                    &mut next_sequence,
                    &mut sealed,
                );
                handle(server, &clock, peer, datagram, &mut out);
            }
            2 => {
                clock.jump(&mut input);
                server.update(clock.now, clock.unix, &mut out);
            }
            _ => call(session, server, &mut input, &clock, &mut rng, &mut out),
        }
        check_slots(server);
    }

    if !clock.went_back {
        let longest = session
            .tokens
            .iter()
            .map(|t| t.token.timeout_seconds.max(0).unsigned_abs())
            .max()
            .unwrap_or(0);
        clock.step(Duration::from_secs(u64::from(longest) + 1));
        server.update(clock.now, clock.unix, &mut out);
        for index in 0..SLOTS {
            if let (Some(client_id), Some(address)) =
                (server.client_id(index), server.client_address(index))
            {
                let may_stay = PEERS
                    .iter()
                    .zip(out.timeless)
                    .any(|(peer, timeless)| timeless && same_endpoint(peer, &address));
                assert!(
                    may_stay,
                    "client {client_id} in slot {index} silent past its timeout"
                );
            }
        }
    }
}

/// Hands one datagram from `PEERS[peer]` to the server, noting first which
/// session token's keys will seal the answer if it is a request.
fn handle(
    server: &mut Server<HeapStorage>,
    clock: &Clock,
    peer: usize,
    datagram: &mut [u8],
    out: &mut Peers<'_>,
) {
    out.answering = request_token(datagram, out.tokens);
    if let Some(token) = out.answering
        && out.tokens[token].token.timeout_seconds <= 0
    {
        out.timeless[peer] = true;
    }
    check_payload(server.handle(clock.now, PEERS[peer], datagram, out));
    out.answering = None;
}

/// One of the server's own calls, as the module documentation lists them.
fn call(
    session: &Session,
    server: &mut Server<HeapStorage>,
    input: &mut Cursor<'_>,
    clock: &Clock,
    rng: &mut SeededRng,
    out: &mut Peers<'_>,
) {
    let call = input.u8();
    let index = usize::from((call >> 3) & 7) % (SLOTS + 2);
    let variant = call >> 6;
    let (now, unix) = (clock.now, clock.unix);
    match call & 7 {
        0 => {
            let _ = server.send_payload(now, index, input.sized(MAX_PAYLOAD_BYTES + 2), out);
        }
        1 => server.disconnect_client(index, out),
        2 => server.disconnect_all_clients(out),
        3 => {
            let _ = server.next_deadline();
            let _ = server.client_id(index);
            let _ = server.client_address(index);
            let _ = server.client_user_data(index);
            let _ = server.next_packet_sequence(index);
            let _ = server.disconnect_reason(index);
            let _ = server.global_sequence();
            let in_use = server.token_history_in_use();
            assert_eq!(server.token_history().count(), in_use, "history export");
            let outcome = match variant & 1 {
                1 => PersistOutcome::Durable,
                _ => PersistOutcome::Failed,
            };
            let held = std::mem::replace(&mut out.held, [const { None }; HELD]);
            for request in held.into_iter().flatten() {
                server.token_persisted(now, request, outcome, out);
            }
        }
        4 => server.stop(now, out),
        5 => {
            let _ = server.start(now, unix, 1 + index % SLOTS, rng, out);
        }
        6 => {
            let (recorded_since, tokens): (u64, &[UsedToken]) = match variant {
                0 => (session.unix.saturating_sub(60), &[]),
                1 => (session.unix.saturating_sub(60), &session.restorable[..1]),
                2 => (session.unix.saturating_sub(60), &session.restorable),
                _ => (unix, &[]),
            };
            let history = RestoredHistory {
                recorded_since,
                latest_unix_seconds: match index & 1 {
                    0 => 0,
                    _ => unix.saturating_add(60),
                },
                tokens,
            };
            let _ = server.start_restored(now, unix, 1 + index % SLOTS, rng, &history, out);
        }
        _ => match variant {
            0 | 1 => {
                let token = &session.tokens[(index + usize::from(variant)) % NUM_TOKENS];
                let user_data = [variant; USER_DATA_BYTES];
                let user_data = (variant == 1).then_some(&user_data);
                let _ = server.connect_loopback_client(index, token.client_id, user_data, out);
            }
            2 => {
                let _ = server.disconnect_loopback_client(index, out);
            }
            _ => {
                let payload = input.sized(MAX_PAYLOAD_BYTES + 2);
                if let Ok(payload) =
                    server.receive_loopback_payload(now, index, payload, input.u64())
                {
                    check_payload(Some((index, payload)));
                }
            }
        },
    }
}

/// A payload the server hands up is 1 to 1200 bytes, from a slot.
fn check_payload(received: Option<(usize, Payload<'_>)>) {
    if let Some((index, payload)) = received {
        assert!(index < SLOTS, "payload from slot {index}");
        assert!(
            (1..=MAX_PAYLOAD_BYTES).contains(&payload.data.len()),
            "payload of {} bytes",
            payload.data.len()
        );
    }
}

/// At most `max_clients` (at most 4) slots are taken, the count matches the
/// slots, no two slots share an address (as netcode compares them) or a
/// client id, loopback slots and only they have no address, and the token
/// history holds no more than its capacity.
fn check_slots(server: &Server<HeapStorage>) {
    let connected = server.num_connected_clients();
    assert!(connected <= server.max_clients(), "{connected} clients");
    assert!(server.max_clients() <= SLOTS);
    let mut seen = [(0u64, None::<SocketAddr>); SLOTS];
    let mut count = 0;
    for index in 0..SLOTS {
        let Some(client_id) = server.client_id(index) else {
            continue;
        };
        let address = server.client_address(index);
        assert_eq!(address.is_none(), server.client_loopback(index));
        for &(other_id, other_address) in &seen[..count] {
            assert_ne!(other_id, client_id, "two slots share a client id");
            if let (Some(a), Some(b)) = (address, other_address) {
                assert!(!same_endpoint(&a, &b), "two slots share an address");
            }
        }
        seen[count] = (client_id, address);
        count += 1;
    }
    assert_eq!(count, connected, "connected count vs slots");
    assert!(server.token_history_in_use() <= server.token_history_capacity());
}

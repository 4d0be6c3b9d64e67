//! Server restarts and nonce reuse (STANDARD.md, "Nonce Reuse and Server
//! Restarts"): the restart rule, a restored token history, and the nonce
//! audit, extended to crashes at every step of a connection.

use std::net::SocketAddr;

use crate::audit::{connected_ids, reused_nonces};
use netcode_proto::PacketType;
use netcode_proto::client::ClientState;
use netcode_proto::io::SendFn;
use netcode_proto::packet::PacketError;
use netcode_proto::server::{ServerError, UsedToken};
use netcode_proto::sim::fixtures::*;
use netcode_proto::sim::{SimStore, World};
use netcode_proto::stats::DropReason;

/// A one-server world whose server keeps its token history in a store
/// begun an hour before (older than any token), started restored.
fn persisted_world(seed: u64) -> World {
    let mut w = World::new(perfect(), seed, 4, 4);
    w.servers[0].store = Some(SimStore::new(w.unix - 3600));
    w.start_server_restored(0, 4).unwrap();
    w
}

#[test]
fn a_restored_history_admits_fresh_tokens_at_once_and_refuses_used_ones() {
    let mut w = persisted_world(60);
    let a = w.add_client("10.0.0.1:5000");
    let used = w.token(1);
    w.connect(a, &used);
    assert!(w.run_until(20, |w| w.state(a) == ClientState::Connected));
    let store = w.servers[0].store.as_ref().unwrap();
    assert_eq!(store.tokens.len(), 1, "the token was made durable");
    // Issued two seconds before the restart, never used.
    let fresh = w.token(2);
    w.run_until(20, |_| false);

    w.crash_server(0);
    w.start_server_restored(0, 4).unwrap();
    let b = w.add_client("10.0.0.2:5000");
    w.connect(b, &fresh);
    assert!(
        w.run_until(10, |w| w.state(b) == ClientState::Connected),
        "no waiting window with a restored history"
    );
    // The used token, from its own address and from another one.
    let again = w.add_client("10.0.0.3:5000");
    w.connect(again, &used);
    let from_a = w.add_client("10.0.0.1:5001");
    w.connect(from_a, &used);
    w.run_until(400, |w| {
        !w.state(again).is_active() && !w.state(from_a).is_active()
    });
    assert_eq!(w.state(again), ClientState::ConnectionRequestTimedOut);
    assert_eq!(w.state(from_a), ClientState::ConnectionRequestTimedOut);
    let server = &w.server(0);
    assert!(server.stats().dropped(DropReason::TokenAlreadyUsed) > 0);
    assert_eq!(connected_ids(&w), [1, 2]);
}

#[test]
fn without_a_restored_history_the_restart_rule_refuses_older_tokens() {
    let mut w = World::new(perfect(), 61, 4, 4);
    let a = w.add_client("10.0.0.1:5000");
    let used = w.token(1);
    w.connect(a, &used);
    assert!(w.run_until(20, |w| w.state(a) == ClientState::Connected));
    let fresh = w.token(2);
    w.run_until(20, |_| false);

    w.crash_server(0);
    w.start_server(0, 4);
    let b = w.add_client("10.0.0.2:5000");
    w.connect(b, &fresh);
    let again = w.add_client("10.0.0.3:5000");
    w.connect(again, &used);
    w.run_until(400, |w| {
        !w.state(b).is_active() && !w.state(again).is_active()
    });
    assert_eq!(w.state(b), ClientState::ConnectionRequestTimedOut);
    assert_eq!(w.state(again), ClientState::ConnectionRequestTimedOut);
    let predates = DropReason::Packet(PacketError::TokenPredatesStart);
    assert!(w.server(0).stats().dropped(predates) > 0);
    // A token issued after the restart connects.
    let c = w.add_client("10.0.0.4:5000");
    let new = w.token(3);
    w.connect(c, &new);
    assert!(w.run_until(10, |w| w.state(c) == ClientState::Connected));
}

#[test]
fn a_store_that_cannot_write_admits_nothing_and_a_host_that_never_persists_neither() {
    let mut w = persisted_world(62);
    w.servers[0].store.as_mut().unwrap().writable = false;
    let a = w.add_client("10.0.0.1:5000");
    let token = w.token(1);
    w.connect(a, &token);
    w.run_until(30, |w| w.state(a) == ClientState::Connected);
    let stats = w.server(0).stats();
    assert_ne!(w.state(a), ClientState::Connected);
    assert!(
        stats.dropped(DropReason::TokenNotDurable) >= 10,
        "every retry asked"
    );
    assert_eq!(
        stats.sent(PacketType::Challenge) + stats.sent(PacketType::Denied),
        0
    );
    // Writable again: the next retry is admitted, pending from its address.
    w.servers[0].store.as_mut().unwrap().writable = true;
    assert!(w.run_until(20, |w| w.state(a) == ClientState::Connected));

    // A restored start with no storage behind the output says no by default.
    let address: SocketAddr = "127.0.0.1:40000".parse().unwrap();
    let mut server = netcode_proto::server::Server::new(
        World::server_config(address),
        netcode_proto::server::HeapStorage::new(1),
    )
    .unwrap();
    let history = SimStore::new(0);
    let mut rng = netcode_proto::seeded::SeededRng::new(1);
    let mut sent = Vec::new();
    server
        .start_restored(
            w.now,
            w.unix,
            1,
            &mut rng,
            &history.restored(),
            &mut SendFn(|_, _: &[u8]| {}),
        )
        .unwrap();
    assert!(server.persists_token_history());
    let token = w.token_for(9, &[address], 30, 15);
    let mut client = netcode_proto::client::Client::new();
    let mut to_server = SendFn(|_, d: &[u8]| sent.push(d.to_vec()));
    client.connect(w.now, &token, &mut to_server).unwrap();
    client.update(w.now, &mut to_server);
    let mut request = sent.pop().unwrap();
    let mut answers = 0;
    let from = "10.0.0.9:5000".parse().unwrap();
    server.handle(
        w.now,
        from,
        &mut request,
        &mut SendFn(|_, _: &[u8]| answers += 1),
    );
    assert_eq!(answers, 0);
    assert_eq!(server.stats().dropped(DropReason::TokenNotDurable), 1);
}

#[test]
fn a_restored_history_too_large_for_the_server_is_refused() {
    let mut w = World::new(perfect(), 63, 1, 1);
    let unix = w.unix;
    let tokens: Vec<UsedToken> = (0..3000u32)
        .map(|i| UsedToken {
            mac: [
                i as u8,
                (i >> 8) as u8,
                1,
                2,
                3,
                4,
                5,
                6,
                7,
                8,
                9,
                10,
                11,
                12,
                13,
                14,
            ],
            address: "10.0.0.1:5000".parse().unwrap(),
            // Half of them expired already: those are skipped.
            expire_timestamp: if i % 2 == 0 { unix } else { unix + 30 },
        })
        .collect();
    let mut store = SimStore::new(unix);
    store.tokens = tokens.clone();
    w.servers[0].store = Some(store.clone());
    assert_eq!(
        w.start_server_restored(0, 1),
        Ok(()),
        "1500 unexpired fit in 2048"
    );
    assert_eq!(w.server(0).token_history_in_use(), 1500);
    let exported: Vec<_> = w.server_mut(0).token_history().collect();
    assert_eq!(exported.len(), 1500);
    assert!(
        exported
            .iter()
            .all(|e| e.consumed && e.token.expire_timestamp == unix + 30)
    );

    store.tokens.extend(tokens.iter().map(|t| UsedToken {
        mac: [t.mac[0], t.mac[1], 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9],
        expire_timestamp: unix + 30,
        ..*t
    }));
    w.servers[0].store = Some(store);
    assert_eq!(
        w.start_server_restored(0, 1),
        Err(ServerError::HistoryTooLarge)
    );
    assert!(!w.server(0).running());
}

/// Where a connection is when the server crashes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Crash {
    /// The client's first request is still in flight.
    RequestInFlight,
    /// The request arrived but the store could not make the token durable.
    BeforeDurable,
    /// The token is durable; its challenge was lost.
    DurableChallengeLost,
    /// The challenge reached the client.
    ChallengeReceived,
    /// The client is connected.
    Connected,
    /// Both sides exchanged payloads.
    AfterPayloads,
}

const CRASHES: [Crash; 6] = [
    Crash::RequestInFlight,
    Crash::BeforeDurable,
    Crash::DurableChallengeLost,
    Crash::ChallengeReceived,
    Crash::Connected,
    Crash::AfterPayloads,
];

/// Connects a client with one token until `crash`, crashes the server,
/// restarts it (restored from its store, or from an empty store as if it
/// were lost), and has the same token presented again from the same
/// address and another one. Returns the world and the token.
fn crash_and_replay(seed: u64, crash: Crash, lose_the_store: bool) -> (World, [u8; 2048]) {
    let mut w = persisted_world(seed);
    w.capture = true;
    let c = w.add_client("10.0.0.1:5000");
    let token = w.token(1);
    if crash == Crash::BeforeDurable {
        w.servers[0].store.as_mut().unwrap().writable = false;
    }
    match crash {
        // Nothing reaches the server: as if the crash came first.
        Crash::RequestInFlight => w.filter = Some(Box::new(|_, _, _| false)),
        Crash::DurableChallengeLost => {
            w.filter = Some(Box::new(|_, _, bytes| bytes[0] & 0x0f != 2));
        }
        _ => {}
    }
    w.connect(c, &token);
    match crash {
        Crash::RequestInFlight | Crash::BeforeDurable | Crash::DurableChallengeLost => {
            w.run_until(5, |_| false);
        }
        Crash::ChallengeReceived => {
            assert!(w.run_until(5, |w| w.state(c) == ClientState::SendingConnectionResponse));
        }
        Crash::Connected | Crash::AfterPayloads => {
            assert!(w.run_until(10, |w| w.state(c) == ClientState::Connected));
            if crash == Crash::AfterPayloads {
                for i in 0..20 {
                    w.client_send(c, &pattern(64, i));
                    w.server_send(0, 0, &pattern(64, i));
                    w.step(FRAME);
                }
            }
        }
    }
    w.crash_server(0);
    w.filter = None;
    w.sim.reset();
    if lose_the_store {
        w.servers[0].store = Some(SimStore::new(w.unix - 3600));
    } else {
        w.servers[0].store.as_mut().unwrap().writable = true;
    }
    w.start_server_restored(0, 4).unwrap();
    // The same token again: a new client from the same address (its
    // sequence starts again at 0), and one from elsewhere.
    w.clear_clients();
    let same = w.add_client("10.0.0.1:5000");
    let other = w.add_client("10.0.0.2:5000");
    w.connect(same, &token);
    w.connect(other, &token);
    w.run_until(60, |w| w.state(same) == ClientState::Connected);
    // Payloads unlike those before the crash, so a repeated nonce shows.
    for i in 100..120 {
        if w.state(same) == ClientState::Connected {
            w.client_send(same, &pattern(64, i));
        }
        if w.server(0).client_connected(0) {
            w.server_send(0, 0, &pattern(64, i));
        }
        w.step(FRAME);
    }
    (w, token)
}

/// The reference's nonce audit, across crashes: wherever a connection is
/// when the server crashes, a restarted server with its restored history
/// never lets the token establish a second session, and no (key, nonce)
/// pair is used for two different packets. A token whose record was not
/// yet durable never had a packet sent under its keys, so it may connect
/// after the restart: its first use of them.
#[test]
fn a_crash_at_any_step_never_reuses_a_key_and_nonce_pair() {
    for (i, crash) in CRASHES.into_iter().enumerate() {
        let (w, token) = crash_and_replay(70 + i as u64, crash, false);
        let (reused, audited) = reused_nonces(&w, &[token]);
        assert_eq!(reused, [], "{crash:?}");
        // The challenge was dropped before capture in one case.
        assert!(
            audited > 0 || crash == Crash::DurableChallengeLost,
            "{crash:?}"
        );
        // Before the record was durable, nothing went out under the token's
        // keys: after the restart it connects, for the first time. After,
        // it had at most the session it had before the crash.
        let first_use_after_restart =
            matches!(crash, Crash::RequestInFlight | Crash::BeforeDurable);
        let sessions = match crash {
            Crash::DurableChallengeLost | Crash::ChallengeReceived => 0,
            _ => 1,
        };
        assert_eq!(connected_ids(&w).len(), sessions, "{crash:?}: sessions");
        if !first_use_after_restart {
            let stats = w.server(0).stats();
            assert!(stats.dropped(DropReason::TokenAlreadyUsed) > 0, "{crash:?}");
        }
    }
}

/// The audit can fail: with the store lost (and so the rule relaxed with no
/// record of the token), the token connects a second time and its packets
/// repeat nonces under its keys.
#[test]
fn without_the_record_a_second_session_repeats_nonces() {
    let (w, token) = crash_and_replay(80, Crash::AfterPayloads, true);
    assert_eq!(connected_ids(&w), [1, 1], "a second session");
    assert!(!reused_nonces(&w, &[token]).0.is_empty());
}

/// The original audit: across connects, server-side kicks, reconnects with
/// fresh tokens and an orderly restart, no (key, nonce) pair is ever used
/// for two different packets.
#[test]
fn no_key_and_nonce_pair_is_ever_reused() {
    let mut w = World::new(perfect(), 33, 2, 2);
    let c = w.add_client("[::]:50000");
    w.capture = true;
    let mut tokens = Vec::new();
    for round in 0..3 {
        if round == 2 {
            for _ in 0..20 {
                w.step(FRAME);
            }
            w.start_server(0, 2);
            // Tokens minted in the start second are refused.
            w.step(std::time::Duration::from_secs(1));
        }
        let token = w.token(1);
        tokens.push(token);
        w.connect(c, &token);
        assert!(
            w.run_until(100, |w| w.state(c) == ClientState::Connected),
            "round {round}"
        );
        for i in 0..20 {
            w.client_send(c, &pattern(64, i));
            w.server_send(0, 0, &pattern(64, i));
            w.step(FRAME);
        }
        w.server_disconnect(0, 0);
        assert!(w.run_until(20, |w| !w.state(c).is_active()));
    }
    let (reused, audited) = reused_nonces(&w, &tokens);
    assert_eq!(reused, []);
    assert!(audited > 200, "audited {audited} packets");
}

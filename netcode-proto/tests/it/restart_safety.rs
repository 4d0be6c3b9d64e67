//! Restart safety without holes (STANDARD.md: *Nonce Reuse and Server
//! Restarts*): a token used before a restart is never admitted after it,
//! for a restart within the same second, for a wall clock stepped back
//! across a restart or within a run, and while its record is still being
//! written; and a record being written holds only its own request.

use std::time::Duration;

use crate::audit::{connected_ids, reused_nonces};
use netcode_proto::PacketType;
use netcode_proto::client::ClientState;
use netcode_proto::packet::PacketError;
use netcode_proto::sim::fixtures::*;
use netcode_proto::sim::{SimStore, World};
use netcode_proto::stats::DropReason;

/// A one-server world (4 slots, started a second before the world's
/// clock) with client 0 connected by a token minted now, and that token.
/// Checks the connection took less than a second of wall clock, so the
/// token's mint second is the world's second still.
fn used_in_this_second(seed: u64) -> (World, [u8; 2048], u64) {
    let mut w = World::new(perfect(), seed, 4, 4);
    w.capture = true;
    let minted = w.unix;
    let c = w.add_client("10.0.0.1:5000");
    let token = w.token(1);
    w.connect(c, &token);
    assert!(w.run_until(5, |w| w.state(c) == ClientState::Connected));
    for i in 0..3 {
        w.client_send(c, &pattern(64, i));
        w.server_send(0, 0, &pattern(64, i));
        w.step(FRAME);
    }
    assert_eq!(w.unix, minted, "still the second the token was minted in");
    (w, token, minted)
}

/// The token presented again (see [`replay`]) makes no second session, is
/// refused for `reason`, and no nonce repeats.
fn replay_is_refused(w: &mut World, token: &[u8; 2048], reason: PacketError) {
    replay(w, token);
    assert_eq!(connected_ids(w), [1], "one session only");
    assert!(w.server(0).stats().dropped(DropReason::Packet(reason)) > 0);
    assert_eq!(reused_nonces(w, &[*token]).0, []);
}

/// The used token presented again after the restart, from its own address
/// and another; the world runs until both attempts end.
fn replay(w: &mut World, token: &[u8; 2048]) {
    w.clear_clients();
    w.sim.reset();
    let same = w.add_client("10.0.0.1:5000");
    let other = w.add_client("10.0.0.2:5000");
    w.connect(same, token);
    w.connect(other, token);
    w.run_until(400, |w| {
        !w.state(same).is_active() && !w.state(other).is_active()
    });
}

#[test]
fn a_restart_within_the_second_a_token_was_used_refuses_it() {
    // Without any store, and with a store lost (a new one begun now).
    for lose_a_store in [false, true] {
        let (mut w, token, minted) = used_in_this_second(90 + u64::from(lose_a_store));
        w.crash_server(0);
        if lose_a_store {
            w.servers[0].store = Some(SimStore::new(w.unix));
            w.start_server_restored(0, 4).unwrap();
        } else {
            w.start_server(0, 4);
        }
        assert_eq!(w.unix, minted, "restarted within the same second");
        replay_is_refused(&mut w, &token, PacketError::TokenPredatesStart);
        // A token minted a second later is admitted.
        w.step(Duration::from_secs(1));
        let fresh = w.token(2);
        let c = w.add_client("10.0.0.3:5000");
        w.connect(c, &fresh);
        assert!(w.run_until(10, |w| w.state(c) == ClientState::Connected));
    }
}

/// A world whose server keeps its history in a store begun an hour ago,
/// with client 0 connected by a token, the token, and its expiry; then 40
/// s pass (the token expired), the store is compacted then (dropping the
/// token's record), and the server crashes.
fn used_expired_and_forgotten(seed: u64) -> (World, [u8; 2048], u64) {
    let mut w = World::new(perfect(), seed, 4, 4);
    w.servers[0].store = Some(SimStore::new(w.unix - 3600));
    w.start_server_restored(0, 4).unwrap();
    w.capture = true;
    let c = w.add_client("10.0.0.1:5000");
    let token = w.token(1);
    let expiry = w.unix + 30;
    w.connect(c, &token);
    assert!(w.run_until(10, |w| w.state(c) == ClientState::Connected));
    w.client_disconnect(c);
    w.step(Duration::from_secs(40));
    assert!(w.unix > expiry);
    let unix = w.unix;
    let store = w.servers[0].store.as_mut().unwrap();
    assert_eq!(store.tokens.len(), 1);
    store.tokens.retain(|t| t.expire_timestamp > unix);
    store.latest_unix_seconds = unix;
    w.crash_server(0);
    (w, token, expiry)
}

#[test]
fn a_clock_stepped_back_across_a_restart_cannot_revive_a_forgotten_token() {
    let (mut w, token, expiry) = used_expired_and_forgotten(93);
    w.step_wall_clock(-40);
    assert!(w.unix < expiry, "the clock reads before the token's expiry");
    w.start_server_restored(0, 4).unwrap();
    replay_is_refused(&mut w, &token, PacketError::TokenExpired);
}

/// The audit can fail: a store that does not say the latest second it saw
/// lets the same token start a second session once the clock steps back.
#[test]
fn without_the_latest_second_the_forgotten_token_connects_again() {
    let (mut w, token, _) = used_expired_and_forgotten(94);
    let store = w.servers[0].store.as_mut().unwrap();
    store.latest_unix_seconds = 0;
    w.step_wall_clock(-40);
    w.start_server_restored(0, 4).unwrap();
    replay(&mut w, &token);
    assert_eq!(connected_ids(&w), [1, 1], "a second session");
    assert!(!reused_nonces(&w, &[token]).0.is_empty());
}

#[test]
fn within_a_run_the_server_wall_clock_never_steps_back() {
    let mut w = World::new(perfect(), 95, 4, 4);
    w.capture = true;
    let c = w.add_client("10.0.0.1:5000");
    let token = w.token(1);
    w.connect(c, &token);
    assert!(w.run_until(10, |w| w.state(c) == ClientState::Connected));
    w.client_disconnect(c);
    // The token expires and its history entry is freed; then the clock
    // steps back to before its expiry.
    w.step(Duration::from_secs(40));
    assert_eq!(w.server(0).token_history_in_use(), 0);
    w.step_wall_clock(-40);
    replay_is_refused(&mut w, &token, PacketError::TokenExpired);
}

#[test]
fn a_record_being_written_holds_its_request_and_nothing_else() {
    let mut w = World::new(perfect(), 96, 4, 4);
    w.servers[0].store = Some(SimStore::new(w.unix - 3600));
    w.start_server_restored(0, 4).unwrap();
    let a = w.add_client("10.0.0.1:5000");
    let token = w.token(1);
    w.connect(a, &token);
    assert!(w.run_until(10, |w| w.state(a) == ClientState::Connected));

    // Writes now take 700 ms: client b's record is in flight meanwhile.
    let delay = Duration::from_millis(700);
    w.servers[0].store.as_mut().unwrap().write_delay = delay;
    let challenges = w.server(0).stats().sent(PacketType::Challenge);
    let b = w.add_client("10.0.0.2:5000");
    let token = w.token(2);
    w.connect(b, &token);
    let in_flight = |w: &World| w.servers[0].store.as_ref().unwrap().in_flight();
    assert!(w.run_until(3, |w| in_flight(w) == 1));
    let asked_at = w.now;
    let mut exchanged = 0;
    while w.now < asked_at + delay - FRAME {
        w.client_send(a, &pattern(32, exchanged));
        w.server_send(0, 0, &pattern(32, exchanged));
        exchanged += 1;
        w.step(FRAME);
        assert_eq!(in_flight(&w), 1, "asked once");
        assert_ne!(w.state(b), ClientState::Connected);
    }
    assert_eq!(
        w.server(0).stats().sent(PacketType::Challenge),
        challenges,
        "no challenge before the record is durable"
    );
    assert!(w.server(0).stats().dropped(DropReason::TokenNotDurable) >= 5);
    // Client a went on meanwhile: every payload arrived both ways.
    assert_eq!(w.servers[0].received.len(), exchanged);
    assert_eq!(w.clients[a].received.len(), exchanged);
    // Once durable, the held request is answered at once, not at the
    // client's next retry.
    assert!(
        w.run_until(3, |w| w.server(0).stats().sent(PacketType::Challenge)
            > challenges)
    );
    assert!(w.now <= asked_at + delay + FRAME);
    assert!(w.run_until(5, |w| w.state(b) == ClientState::Connected));
    assert_eq!(connected_ids(&w), [1, 2]);
}

#[test]
fn a_record_lost_in_a_crash_leaves_its_token_unused_and_an_old_run_s_record_is_ignored() {
    let mut w = World::new(perfect(), 97, 4, 4);
    w.capture = true;
    w.servers[0].store = Some(SimStore::new(w.unix - 3600));
    w.start_server_restored(0, 4).unwrap();
    w.servers[0].store.as_mut().unwrap().write_delay = Duration::from_millis(500);
    let c = w.add_client("10.0.0.1:5000");
    let token = w.token(1);
    w.connect(c, &token);
    w.run_until(2, |_| false);
    assert_eq!(w.servers[0].store.as_ref().unwrap().in_flight(), 1);

    // A restart (not a crash) while the record is written: the record
    // still lands, for the earlier run, which no longer exists. The new
    // run's own record of the token (the client retries) takes long.
    w.start_server_restored(0, 4).unwrap();
    w.servers[0].store.as_mut().unwrap().write_delay = Duration::from_secs(10);
    let challenges = |w: &World| w.server(0).stats().sent(PacketType::Challenge);
    w.run_until(8, |_| false);
    assert_eq!(w.servers[0].store.as_ref().unwrap().tokens.len(), 1);
    assert_eq!(w.servers[0].store.as_ref().unwrap().in_flight(), 1);
    assert_eq!(challenges(&w), 0, "an earlier run's record answers nothing");

    // A crash while the new run's record is written: it is lost, and no
    // packet ever went out under the token's keys.
    w.crash_server(0);
    w.servers[0].store.as_mut().unwrap().write_delay = Duration::ZERO;
    w.start_server_restored(0, 4).unwrap();
    assert_eq!(w.servers[0].store.as_ref().unwrap().tokens.len(), 1);
    // That record refuses the token now, from every address: the cost of
    // a record written for a request never answered.
    replay(&mut w, &token);
    assert_eq!(connected_ids(&w), Vec::<u64>::new());
    assert!(w.server(0).stats().dropped(DropReason::TokenAlreadyUsed) > 0);
    assert_eq!(reused_nonces(&w, &[token]).0, []);
}

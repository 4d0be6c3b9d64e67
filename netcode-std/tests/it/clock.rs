//! The host's clock survives any time a caller passes: after `update` with
//! infinity, 1e300, NaN or a 10^6 s jump, servers still send keep-alives
//! and time out silent clients, freed slots take new clients, and clients
//! still connect and time out. Run on the in-memory network, on virtual
//! time, so every step is exact.

use crate::common::{config, key};
use crate::memory::*;
use netcode_std::{ClientState, DisconnectReason, MAX_TIME_STEP, ServerEvent};
use proptest::prelude::*;

/// Seconds of silence before a peer times out, in these tests' tokens.
const TIMEOUT: i32 = 2;

fn token(admitted: AdmittedFrom, client_id: u64, server: std::net::SocketAddr) -> [u8; 2048] {
    admitted
        .builder(&key(), client_id)
        .server_addresses([server])
        .timeout_seconds(TIMEOUT)
        .generate()
        .unwrap()
}

/// The times no caller should pass.
const POISON: [f64; 8] = [
    f64::INFINITY,
    1e300,
    f64::NAN,
    f64::NEG_INFINITY,
    -1e300,
    f64::MAX,
    f64::MIN_POSITIVE,
    0.0,
];

/// Ticks within which a silent peer must be timed out: its timeout, plus
/// the one step a bogus time may cost, plus a margin for keep-alives.
fn timeout_ticks() -> usize {
    let seconds = f64::from(TIMEOUT) + MAX_TIME_STEP.as_secs_f64() + 1.0;
    (seconds / 0.05) as usize
}

#[test]
fn a_poisoned_server_clock_still_times_out_frees_the_slot_and_admits_anew() {
    let net = Net::new();
    let (mut server, admitted) = server(&net, config(), 1);
    let mut clock = Clock(1000.0);
    let mut a = client(&net);
    a.connect(&token(admitted, 1, server.public_address()))
        .unwrap();
    assert!(run(
        &mut clock,
        100,
        &mut server,
        &mut [&mut a],
        all_connected
    ));

    for bad in POISON {
        server.update(bad);
    }
    server.update(clock.0 + 1e6);
    let stats = server.transport_stats();
    assert!(stats.times_not_finite >= 3 && stats.time_jumps >= 1);

    // `a` goes silent: the server must time it out and free the slot.
    net.mute(a.local_addr());
    let timed_out = run(
        &mut clock,
        timeout_ticks(),
        &mut server,
        &mut [],
        |server, _| server.num_connected_clients() == 0,
    );
    assert!(timed_out, "the silent client kept its slot");
    assert_eq!(server.disconnect_reason(0), DisconnectReason::TimedOut);
    let events: Vec<_> = std::iter::from_fn(|| server.poll_event()).collect();
    assert!(events.iter().any(|e| matches!(
        e,
        ServerEvent::ClientDisconnected {
            reason: DisconnectReason::TimedOut,
            client_id: 1,
            ..
        }
    )));

    // A new client takes the slot and stays, exchanging payloads, for
    // several timeouts.
    let mut b = client(&net);
    b.connect(&token(admitted, 2, server.public_address()))
        .unwrap();
    assert!(run(
        &mut clock,
        100,
        &mut server,
        &mut [&mut b],
        all_connected
    ));
    let (mut to_server, mut to_client) = (0, 0);
    run(
        &mut clock,
        200,
        &mut server,
        &mut [&mut b],
        |server, clients| {
            let b = &mut clients[0];
            b.send_packet(b"ping").unwrap();
            server.send_packet(0, b"pong").unwrap();
            while let Some(p) = server.receive_packet(0) {
                to_server += 1;
                server.free_packet(p);
            }
            while let Some(p) = b.receive_packet() {
                to_client += 1;
                b.free_packet(p);
            }
            false
        },
    );
    assert_eq!(b.state(), ClientState::Connected);
    assert_eq!(server.client_id(0), Some(2));
    assert!(
        to_server > 150 && to_client > 150,
        "{to_server} {to_client}"
    );
}

#[test]
fn a_poisoned_client_clock_still_connects_and_times_out() {
    let net = Net::new();
    let (mut server, admitted) = server(&net, config(), 2);
    let mut clock = Clock(50.0);
    let mut c = client(&net);
    for bad in POISON {
        c.update(bad);
    }
    c.update(clock.0 + 1e6);
    c.connect(&token(admitted, 3, server.public_address()))
        .unwrap();
    assert!(
        run(&mut clock, 100, &mut server, &mut [&mut c], all_connected),
        "stuck in {}",
        c.state()
    );

    // Poisoned again while connected; then the server goes silent.
    c.update(f64::INFINITY);
    c.update(clock.0 + 1e6);
    net.mute(server.public_address());
    let timed_out = run(
        &mut clock,
        timeout_ticks(),
        &mut server,
        &mut [&mut c],
        |_, c| c[0].state() == ClientState::ConnectionTimedOut,
    );
    assert!(timed_out, "still {}", c.state());
}

/// One time handed to a host: a sane step of the test's clock, or any
/// value at all.
#[derive(Debug, Clone)]
enum Time {
    Step(f64),
    Any(f64),
}

fn times() -> impl Strategy<Value = Vec<Time>> {
    let any = prop_oneof![
        prop::sample::select(POISON.to_vec()),
        any::<f64>(),
        (-1e7f64..1e7),
    ];
    let time = prop_oneof![(0.0f64..0.2).prop_map(Time::Step), any.prop_map(Time::Any),];
    prop::collection::vec(time, 1..40)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Whatever times a server and client are given while connected, once
    /// the caller's clock is sane again a peer that goes silent is timed
    /// out on both sides within the timeout and one bounded step.
    #[test]
    fn arbitrary_times_never_panic_nor_stop_a_session_from_timing_out(
        server_times in times(),
        client_times in times(),
        silent_side in any::<bool>(),
    ) {
        let net = Net::new();
        let (mut server, admitted) = server(&net, config(), 1);
        let mut clock = Clock(10.0);
        let mut c = client(&net);
        c.connect(&token(admitted, 9, server.public_address())).unwrap();
        prop_assert!(run(&mut clock, 100, &mut server, &mut [&mut c], all_connected));

        for (s, k) in server_times.iter().zip(client_times.iter().cycle()) {
            for (time, host) in [(s, 0), (k, 1)] {
                let t = match time {
                    Time::Step(dt) => clock.tick(*dt),
                    Time::Any(t) => *t,
                };
                if host == 0 { server.update(t) } else { c.update(t) }
            }
        }

        let silent = if silent_side { c.local_addr() } else { server.public_address() };
        net.mute(silent);
        let done = run(&mut clock, timeout_ticks(), &mut server, &mut [&mut c], |server, c| {
            let client_gone = c[0].state() != ClientState::Connected;
            let server_gone = server.num_connected_clients() == 0;
            if silent_side { server_gone } else { client_gone }
        });
        prop_assert!(done, "no timeout: client {}, server {} clients",
            c.state(), server.num_connected_clients());
    }
}

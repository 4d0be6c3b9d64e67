//! What the host logs, captured: lifecycle at info, refusals with their
//! reason once per sender per second, failed connects with the addresses
//! tried, drops at debug within their rate limit, bad times at warn.

use std::net::SocketAddr;

use log::Level;
use netcode_std::proto::Key;
use netcode_std::{ClientState, ConnectError, Family};

use crate::common::{config, key};
use crate::log_capture::{capture, lines};
use crate::memory::*;

/// A token for `client_id` listing `servers`, sealed with `key`, issued
/// as of `admitted`, expiring `expire` seconds later.
fn token_with(
    admitted: AdmittedFrom,
    key: &Key,
    client_id: u64,
    servers: &[SocketAddr],
    expire: i64,
) -> [u8; 2048] {
    admitted
        .builder(key, client_id)
        .server_addresses(servers)
        .expire_seconds(expire)
        .timeout_seconds(2)
        .generate()
        .unwrap()
}

#[test]
fn starts_connections_disconnections_and_state_changes_are_info() {
    capture();
    let net = Net::new();
    let (mut server, admitted) = server(&net, config(), 4);
    let address = server.public_address();
    assert_eq!(
        lines(
            Level::Info,
            &format!("server {address} started with 4 slots")
        )
        .len(),
        1
    );
    let mut clock = Clock(0.0);
    let mut c = client(&net);
    c.connect(&token_with(admitted, &key(), 0x77, &[address], 30))
        .unwrap();
    assert!(run(
        &mut clock,
        100,
        &mut server,
        &mut [&mut c],
        all_connected
    ));
    let from = c.local_addr();
    assert_eq!(
        lines(
            Level::Info,
            &format!("client 0x77 connected from {from} in slot 0")
        )
        .len(),
        1
    );
    for change in [
        "disconnected -> sending connection request",
        "sending connection request -> sending connection response",
        "sending connection response -> connected",
    ] {
        assert_eq!(lines(Level::Info, change).len(), 1, "{change}");
    }
    c.disconnect();
    server.update(clock.tick(0.05));
    assert_eq!(
        lines(
            Level::Info,
            "client 0x77 in slot 0 disconnected: client disconnected"
        )
        .len(),
        1
    );
    server.stop();
    server.stop();
    assert_eq!(
        lines(Level::Info, &format!("server {address} stopped")).len(),
        1
    );
}

#[test]
fn a_wrong_key_is_logged_once_per_second_and_the_client_says_what_it_tried() {
    capture();
    let net = Net::new();
    let (mut server, admitted) = server(&net, config(), 4);
    let address = server.public_address();
    let mut clock = Clock(0.0);
    let mut c = client(&net);
    let wrong = Key::from_bytes([9; 32]);
    c.connect(&token_with(admitted, &wrong, 1, &[address], 30))
        .unwrap();
    let failed = run(&mut clock, 200, &mut server, &mut [&mut c], |_, c| {
        c[0].state() == ClientState::ConnectionRequestTimedOut
    });
    assert!(failed);
    // Twenty-odd requests arrived in far less than a second of real time.
    let from = c.local_addr();
    let refusals = lines(Level::Info, &format!("refused connection from {from}"));
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    assert!(refusals[0].contains("does not decrypt"), "{}", refusals[0]);
    let warnings = lines(Level::Warn, "connection request timed out");
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].contains(&format!("tried {address}")),
        "{}",
        warnings[0]
    );
}

#[test]
fn the_restart_rule_says_so() {
    capture();
    let net = Net::new();
    let (mut server, admitted) = server(&net, config(), 4);
    let address = server.public_address();
    let mut clock = Clock(0.0);
    let mut c = client(&net);
    // Expiring sooner than the server's max token lifetime after its
    // start: the token may predate the start.
    c.connect(&token_with(admitted, &key(), 1, &[address], 10))
        .unwrap();
    run(&mut clock, 20, &mut server, &mut [&mut c], |_, _| false);
    let refusals = lines(Level::Info, "restart rule");
    assert_eq!(refusals.len(), 1, "{refusals:?}");
}

#[test]
fn drops_are_debug_and_a_flood_is_held_to_the_rate_limit() {
    capture();
    let net = Net::new();
    let (mut server, _) = server(&net, config(), 4);
    let stranger: SocketAddr = "10.9.8.7:6543".parse().unwrap();
    let mut keep_alive = [0u8; 40];
    keep_alive[0] = 0x14; // a keep-alive with one sequence byte
    for _ in 0..1000 {
        net.inject(stranger, server.public_address(), &keep_alive);
    }
    server.update(1.0);
    let drops = lines(Level::Debug, &format!("dropped keep-alive from {stranger}"));
    assert!((1..=4).contains(&drops.len()), "{drops:?}");
    assert!(drops[0].contains("no_key"), "{}", drops[0]);
    assert_eq!(server.stats().dropped_total(), 1000);
    assert!(
        lines(Level::Info, "refused").is_empty(),
        "a stray keep-alive is no refusal"
    );
}

#[test]
fn bad_times_are_warned_about_once_a_second() {
    capture();
    let net = Net::new();
    let (mut server, _) = server(&net, config(), 1);
    server.update(1.0);
    for _ in 0..100 {
        server.update(f64::NAN);
    }
    let warnings = lines(Level::Warn, "update time NaN is not finite");
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(server.transport_stats().times_not_finite, 100);
}

#[test]
fn a_token_this_client_cannot_reach_is_refused_with_a_typed_error() {
    capture();
    let net = Net::new();
    let mut c = client(&net);
    let issued_now = AdmittedFrom::new(netcode_std::unix_time());
    let v6_only = ["[::1]:40000".parse().unwrap()];
    let token = token_with(issued_now, &key(), 1, &v6_only, 30);
    assert_eq!(
        c.connect(&token),
        Err(ConnectError::Unreachable { client: Family::V4 })
    );
    assert_eq!(c.state(), ClientState::Disconnected, "nothing changed");
    assert_eq!(lines(Level::Warn, "no IPv4 server address").len(), 1);
    // A token with one reachable address is taken, with a warning.
    let mixed = [
        "[::1]:40000".parse().unwrap(),
        "127.0.0.1:40000".parse().unwrap(),
    ];
    c.connect(&token_with(issued_now, &key(), 1, &mixed, 30))
        .unwrap();
    assert_eq!(c.state(), ClientState::SendingConnectionRequest);
    assert_eq!(lines(Level::Warn, "will time out").len(), 1);
}

//! The sidecar missing or going away: a server whose sidecar never answers
//! exits 1 with a clear error once its `--sdk-timeout` has passed; one
//! that appears late is picked up; one that goes away mid-match leaves the
//! players playing, and the health stream and the players list come back
//! when it returns.
#![cfg(unix)]

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::fake_sdk::FakeSdk;
use crate::harness::{DEADLINE, Player, ServerProcess, free_tcp_port, free_udp_port, wait_metric};

#[test]
fn no_sidecar_means_a_clear_error_after_the_timeout() {
    let sdk_port = free_tcp_port();
    let start = Instant::now();
    let mut server = ServerProcess::start(free_udp_port(), sdk_port, &["--sdk-timeout", "1"]);
    let status = server.wait_exit(DEADLINE);
    let waited = start.elapsed();
    assert_eq!(status.code(), Some(1), "it said:\n{}", server.output());
    assert!(waited >= Duration::from_secs(1), "gave up after {waited:?}");
    let expected = format!("did not answer on localhost:{sdk_port} within");
    assert!(server.said(&expected), "{}", server.output());
    assert!(!server.said("Ready"), "{}", server.output());
}

#[test]
fn a_sidecar_that_starts_late_is_picked_up() {
    let sdk_port = free_tcp_port();
    let port = free_udp_port();
    let mut server = ServerProcess::start(port, sdk_port, &["--sdk-timeout", "20"]);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(server.running(), "it said:\n{}", server.output());

    let fake = FakeSdk::start_on(sdk_port, "127.0.0.1", port);
    fake.wait_until("Ready", DEADLINE, |r| r.state() == "Ready");
    let mut player = Player::connect(([127, 0, 0, 1], port).into(), 5);
    player.echo();

    server.sigterm();
    let status = server.wait_exit(DEADLINE);
    assert!(status.success(), "{status}; it said:\n{}", server.output());
}

#[test]
fn the_match_goes_on_while_the_sidecar_is_away() {
    let port = free_udp_port();
    let mut fake = FakeSdk::start("127.0.0.1", port);
    let metrics_port = free_tcp_port();
    let metrics = format!("127.0.0.1:{metrics_port}");
    let mut server = ServerProcess::start(
        port,
        fake.port(),
        &["--shutdown-when-empty", "--metrics", &metrics],
    );
    let public: SocketAddr = ([127, 0, 0, 1], port).into();
    fake.wait_until("Ready", DEADLINE, |r| r.state() == "Ready");
    wait_metric(metrics_port, "netcode_agones_sidecar_up 1");
    let mut first = Player::connect(public, 11);
    fake.set_state("Allocated");
    fake.wait_until("player 11 tracked", DEADLINE, |r| {
        r.list("players") == ["11"]
    });

    fake.stop();
    let pings_before = fake.record().health_pings;
    // The players play on, and one more joins, while the sidecar is away.
    assert!(first.echo_for(Duration::from_millis(800)) > 0);
    let mut second = Player::connect(public, 12);
    second.echo();
    assert!(first.echo_for(Duration::from_millis(400)) > 0);
    assert!(server.running(), "it said:\n{}", server.output());
    assert_eq!(fake.record().health_pings, pings_before);
    // The metrics say so.
    wait_metric(metrics_port, "netcode_agones_sidecar_up 0");
    wait_metric(metrics_port, "netcode_agones_health_streams_lost_total 1");
    wait_metric(metrics_port, "netcode_clients_connected 2");

    fake.restart();
    // A new health stream, and pings on it; the player who joined meanwhile
    // is added to the list.
    fake.wait_until("health on a new stream", DEADLINE, |r| {
        r.health_streams >= 2 && r.health_pings >= pings_before + 5
    });
    fake.wait_until("both players tracked", DEADLINE, |r| {
        r.list("players") == ["11", "12"]
    });
    first.echo();
    second.echo();
    wait_metric(metrics_port, "netcode_agones_sidecar_up 1");
    wait_metric(metrics_port, "netcode_agones_players_tracked 2");
    assert!(
        server.said("lost the Agones sidecar"),
        "{}",
        server.output()
    );
    assert!(
        server.said("health stream open again"),
        "{}",
        server.output()
    );

    // The match still ends by its rule once the sidecar is back.
    first.client.disconnect();
    second.client.disconnect();
    let status = server.wait_exit(DEADLINE);
    assert!(status.success(), "{status}; it said:\n{}", server.output());
    assert_eq!(fake.record().count("Shutdown"), 1);
}

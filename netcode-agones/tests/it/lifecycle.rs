//! The server binary's life on a fake sidecar: Ready only after its
//! socket is bound and its server started, with the labels and annotations
//! set first; health pings while the loop runs; a player connecting with a
//! token for the address the GameServer status names, tracked in the
//! players list; Allocated; and the match ending by its rules (the last
//! player gone, or the time limit), with Shutdown called and exit 0.

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use crate::fake_sdk::FakeSdk;
use crate::harness::{DEADLINE, PROTOCOL_ID_ARG, Player, ServerProcess, free_udp_port};
use netcode_agones::netcode_std::ClientState;
use netcode_agones::{ADDRESS_ANNOTATION, PROTOCOL_ID_LABEL};

#[test]
fn ready_health_players_allocation_and_shutdown_when_empty() {
    let port = free_udp_port();
    let fake = FakeSdk::start("127.0.0.1", port);
    let public: SocketAddr = ([127, 0, 0, 1], port).into();
    fake.probe_at_ready(move || UdpSocket::bind(public).is_err());
    let mut server = ServerProcess::start(port, fake.port(), &["--shutdown-when-empty"]);

    let ready = fake.wait_until("Ready", DEADLINE, |r| r.state() == "Ready");
    // Ready came once the socket was bound: at that moment something held
    // the port.
    assert_eq!(ready.probed_at_ready, Some(true), "Ready before the bind");
    assert_eq!(ready.count("Ready"), 1);
    // Everything a client's backend needs was published before Ready.
    let position = |call: &str| {
        let at = ready.calls.iter().position(|c| c == call);
        at.unwrap_or_else(|| panic!("no {call} call: {:?}", ready.calls))
    };
    assert!(
        position("SetLabel") < position("Ready"),
        "{:?}",
        ready.calls
    );
    assert!(
        position("SetAnnotation") < position("Ready"),
        "{:?}",
        ready.calls
    );
    assert_eq!(ready.label(PROTOCOL_ID_LABEL), Some(PROTOCOL_ID_ARG));
    assert_eq!(
        ready.annotation(ADDRESS_ANNOTATION),
        Some(public.to_string().as_str())
    );

    // The loop pings while it runs (every 0.1 s here).
    let pinged = fake.wait_until("health pings", DEADLINE, |r| r.health_pings >= 5);
    assert_eq!(pinged.health_streams, 1);

    // A player with a token for the address the status names.
    let mut player = Player::connect(public, 1001);
    fake.wait_until("the player in the list", DEADLINE, |r| {
        r.list("players") == ["1001"]
    });
    player.echo();

    // Connected players do not end a match that has not begun.
    assert!(server.running());
    fake.set_state("Allocated");
    player.echo();
    player.idle(Duration::from_millis(300));
    assert!(
        server.running(),
        "the server left a match with a player in it"
    );
    assert_eq!(fake.record().count("Shutdown"), 0);

    // The last player leaves: Shutdown, and a clean exit.
    player.client.disconnect();
    let status = server.wait_exit(DEADLINE);
    assert!(status.success(), "{status}; it said:\n{}", server.output());
    assert_eq!(fake.record().count("Shutdown"), 1);
    // The sidecar answered Shutdown once queued; the GameServer shows it
    // after the sidecar's delay.
    fake.wait_until("Shutdown applied", DEADLINE, |r| r.state() == "Shutdown");
    assert!(
        server.said("match over: the last player left"),
        "{}",
        server.output()
    );
}

#[test]
fn the_match_time_limit_runs_from_allocation() {
    let port = free_udp_port();
    let fake = FakeSdk::start("127.0.0.1", port);
    let mut server = ServerProcess::start(port, fake.port(), &["--match-seconds", "1"]);
    let public: SocketAddr = ([127, 0, 0, 1], port).into();
    fake.wait_until("Ready", DEADLINE, |r| r.state() == "Ready");

    // A player who comes and goes before allocation is tracked, then
    // untracked, and ends nothing.
    let mut early = Player::connect(public, 7);
    fake.wait_until("player 7 in the list", DEADLINE, |r| {
        r.list("players") == ["7"]
    });
    early.client.disconnect();
    fake.wait_until("player 7 out of the list", DEADLINE, |r| {
        r.list("players").is_empty() && r.count("RemoveListValue") == 1
    });

    let mut player = Player::connect(public, 8);
    player.echo();
    // Not allocated: a second passes and the server stays.
    player.idle(Duration::from_millis(1200));
    assert!(server.running());
    assert_eq!(fake.record().count("Shutdown"), 0);

    // Taken before the server can know of the allocation.
    let allocated = Instant::now();
    fake.set_state("Allocated");
    // The player is disconnected cleanly when the time is up.
    player.run_until("the end of the match", |c| {
        c.state() != ClientState::Connected
    });
    assert_eq!(player.client.state(), ClientState::Disconnected);
    assert!(
        allocated.elapsed() >= Duration::from_secs(1),
        "the match ended {:?} after allocation, before its second",
        allocated.elapsed()
    );
    let status = server.wait_exit(DEADLINE);
    assert!(status.success(), "{status}; it said:\n{}", server.output());
    assert_eq!(fake.record().count("Shutdown"), 1);
    assert!(
        server.said("match over: the match time is up"),
        "{}",
        server.output()
    );
}

/// Agones puts the node's DNS name in `status.address` when the node has
/// one (EKS nodes do): the server resolves it, calls itself by the
/// address it resolves to, and a player with a token for that address
/// plays.
#[test]
fn a_dns_name_in_the_status_is_resolved() {
    use std::net::ToSocketAddrs;

    let port = free_udp_port();
    let fake = FakeSdk::start("localhost", port);
    let resolved = ("localhost", port)
        .to_socket_addrs()
        .expect("localhost resolves");
    let public = netcode_agones::pick_resolved(resolved).expect("an address for localhost");
    let mut server = ServerProcess::start(port, fake.port(), &[]);

    let ready = fake.wait_until("Ready", DEADLINE, |r| r.state() == "Ready");
    assert_eq!(
        ready.annotation(ADDRESS_ANNOTATION),
        Some(public.to_string().as_str()),
        "{}",
        server.output()
    );
    let mut player = Player::connect(public, 1002);
    player.echo();
    assert!(server.running(), "{}", server.output());
}

//! SIGTERM, as Kubernetes stops a pod: the connected player sees a clean
//! disconnect (disconnect packets, not a timeout), Shutdown is called and
//! the server exits 0, in the middle of an allocated match.
#![cfg(unix)]

use std::net::SocketAddr;

use crate::fake_sdk::FakeSdk;
use crate::harness::{DEADLINE, Player, ServerProcess, free_udp_port};
use netcode_agones::netcode_std::ClientState;

#[test]
fn sigterm_disconnects_the_players_cleanly_and_shuts_down() {
    let port = free_udp_port();
    let fake = FakeSdk::start("127.0.0.1", port);
    let mut server = ServerProcess::start(port, fake.port(), &["--shutdown-when-empty"]);
    let public: SocketAddr = ([127, 0, 0, 1], port).into();
    fake.wait_until("Ready", DEADLINE, |r| r.state() == "Ready");

    let mut player = Player::connect(public, 42);
    fake.set_state("Allocated");
    player.echo();

    server.sigterm();
    player.run_until("the server to go", |c| c.state() != ClientState::Connected);
    // Disconnected, not ConnectionTimedOut: the server said goodbye.
    assert_eq!(player.client.state(), ClientState::Disconnected);

    let status = server.wait_exit(DEADLINE);
    assert!(status.success(), "{status}; it said:\n{}", server.output());
    assert_eq!(fake.record().count("Shutdown"), 1);
    assert!(server.said("stop requested"), "{}", server.output());
}

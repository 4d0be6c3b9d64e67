//! The drivers sleep between what the protocol needs: a quiet connection
//! wakes each side about ten times a second (its keep-alive deadlines and
//! the peer's keep-alives), never in a spin, and a drained socket does not
//! wake its driver again until new datagrams arrive.

use std::future::Future;
use std::time::Duration;

use crate::common::*;
use netcode_tokio::{Client, Server};

/// How long each side is watched idle.
const IDLE: Duration = Duration::from_secs(2);

/// Most turns allowed in [`IDLE`]: 20 keep-alive deadlines and 20
/// datagrams from the peer, with room to spare; a spinning driver turns
/// thousands of times.
const MAX_TURNS: u64 = 120;

/// A server or a client, for counting its turns.
trait Turns {
    fn turn(&mut self) -> impl Future<Output = ()> + Send;
}

impl Turns for Server {
    fn turn(&mut self) -> impl Future<Output = ()> + Send {
        Server::turn(self)
    }
}

impl Turns for Client {
    fn turn(&mut self) -> impl Future<Output = ()> + Send {
        Client::turn(self)
    }
}

/// Turns of `side` completed within [`IDLE`].
async fn turns_in_idle(side: &mut impl Turns) -> u64 {
    let mut turns = 0;
    let _ = tokio::time::timeout(IDLE, async {
        loop {
            side.turn().await;
            turns += 1;
        }
    })
    .await;
    turns
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quiet_connection_wakes_each_side_for_keep_alives_only() {
    let (mut server, admitted) = server("127.0.0.1:0", 4).await;
    let mut client = Client::new("127.0.0.1:0").await.unwrap();
    client
        .connect(&token(admitted, 1, &[server.public_address()]))
        .unwrap();
    let (connected, _) = tokio::join!(client.connected(), async {
        let _ = tokio::time::timeout(LIMIT, server.next_event()).await;
    });
    connected.unwrap();

    let server_side = tokio::spawn(async move {
        let turns = turns_in_idle(&mut server).await;
        (turns, server)
    });
    let client_turns = turns_in_idle(&mut client).await;
    let (server_turns, server) = server_side.await.unwrap();
    for (side, turns) in [("server", server_turns), ("client", client_turns)] {
        assert!(
            (10..=MAX_TURNS).contains(&turns),
            "{side}: {turns} turns in {IDLE:?}"
        );
    }
    // Both kept the connection up the whole time.
    assert!(server.client_connected(0));
    assert_eq!(client.state(), netcode_tokio::ClientState::Connected);
}

#[tokio::test]
async fn a_drained_socket_does_not_wake_the_driver_again() {
    let (mut server, _) = server("127.0.0.1:0", 4).await;
    let target = server.public_address();
    let target = std::net::SocketAddr::from(([127, 0, 0, 1], target.port()));
    let junk = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    // Fewer than one batch, all waiting before the driver looks.
    for i in 0..10u8 {
        junk.send_to(&[i; 40], target).unwrap();
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    let before = server.transport_stats();
    within("the junk is read", server.turn()).await;
    let after = server.transport_stats();
    assert_eq!(after.datagrams_received - before.datagrams_received, 10);
    assert_eq!(server.stats().dropped_total(), 10, "junk is dropped");
    #[cfg(any(target_os = "linux", target_os = "android"))]
    assert_eq!(
        after.receive_calls - before.receive_calls,
        1,
        "one recvmmsg read the whole burst"
    );
    // The short batch cleared the reactor's readable flag: nothing wakes
    // the driver until a datagram arrives.
    let quiet = tokio::time::timeout(Duration::from_millis(300), server.turn()).await;
    assert!(quiet.is_err(), "the driver woke with nothing to read");
    junk.send_to(&[0xff; 40], target).unwrap();
    within("a new datagram wakes it", server.turn()).await;
    assert_eq!(
        server.transport_stats().datagrams_received,
        after.datagrams_received + 1
    );
}

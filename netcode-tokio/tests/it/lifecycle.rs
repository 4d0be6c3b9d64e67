//! How a tokio server's and client's lives begin and end: construction
//! outside a runtime is an error, a failed connect and a lost server end
//! the async methods with the state that says why, a datagram sent before
//! the reactor has first looked at the socket still leaves, and both types
//! (and their futures) can be sent to spawned tasks.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use crate::common::*;
use netcode_tokio::{Client, ClientState, CreateError, Server};

fn assert_send<T: Send>(_: &T) {}

#[tokio::test]
async fn servers_clients_and_their_futures_are_send() {
    let (mut server, _) = server("127.0.0.1:0", 2).await;
    let mut client = Client::new("127.0.0.1:0").await.unwrap();
    assert_send(&server.recv());
    assert_send(&server.next_event());
    assert_send(&server.next());
    assert_send(&server.turn());
    assert_send(&client.connected());
    assert_send(&client.recv());
    assert_send(&client.next_event());
    assert_send(&client.turn());
    assert_send(&server);
    assert_send(&client);
    assert_send(&Server::new("127.0.0.1:0", config()));
    assert_send(&Client::new("127.0.0.1:0"));
}

/// Polls `future` once, outside any runtime.
fn poll_once<F: Future>(future: F) -> Poll<F::Output> {
    let future = pin!(future);
    future.poll(&mut Context::from_waker(Waker::noop()))
}

#[test]
fn construction_outside_a_runtime_is_a_typed_error() {
    let server = poll_once(Server::new("127.0.0.1:0", config()));
    assert!(
        matches!(server, Poll::Ready(Err(CreateError::Register { .. }))),
        "{server:?}"
    );
    let client = poll_once(Client::new("127.0.0.1:0"));
    assert!(
        matches!(client, Poll::Ready(Err(CreateError::Register { .. }))),
        "{client:?}"
    );
}

#[tokio::test]
async fn connected_reports_the_state_a_failed_attempt_ends_in() {
    // A port with nothing behind it.
    let nobody = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let address = nobody.local_addr().unwrap();
    drop(nobody);
    let mut client = Client::new("127.0.0.1:0").await.unwrap();
    client.connect(&token_now(1, &[address])).unwrap();
    let ended = within("the attempt times out", client.connected()).await;
    assert_eq!(ended, Err(ClientState::ConnectionRequestTimedOut));
    // Idle now: the queues say so instead of waiting forever.
    assert!(
        within("recv on an idle client", client.recv())
            .await
            .is_none()
    );
    let mut events = Vec::new();
    while let Some(event) = within("events", client.next_event()).await {
        events.push(event);
    }
    assert!(!events.is_empty(), "the state changes were reported");
}

#[tokio::test]
async fn a_dropped_server_ends_its_clients_sessions() {
    let (server, admitted) = server("127.0.0.1:0", 4).await;
    let address = server.public_address();
    let echo = tokio::spawn(echo_forever(server));
    let mut client = Client::new("127.0.0.1:0").await.unwrap();
    client.connect(&token(admitted, 3, &[address])).unwrap();
    within("connect", client.connected()).await.unwrap();
    client.send_packet(b"ping").unwrap();
    let echo_packet = within("echo", client.recv()).await.unwrap();
    assert_eq!(echo_packet.data(), b"ping");

    // Aborting the task drops the server, which sends disconnect packets.
    echo.abort();
    assert!(echo.await.unwrap_err().is_cancelled());
    assert!(
        within("the disconnect arrives", client.recv())
            .await
            .is_none()
    );
    // Told by the server's disconnect packets, not timed out.
    assert_eq!(client.state(), ClientState::Disconnected);
}

#[tokio::test]
async fn an_idle_server_and_client_have_nothing_to_turn_for() {
    let (mut server, _) = server("127.0.0.1:0", 4).await;
    let mut client = Client::new("127.0.0.1:0").await.unwrap();
    let quiet = Duration::from_millis(300);
    assert!(tokio::time::timeout(quiet, server.turn()).await.is_err());
    assert!(tokio::time::timeout(quiet, client.turn()).await.is_err());
    assert_eq!(server.poll_timeout(), None);
    assert_eq!(client.poll_timeout(), None);
}

#[tokio::test]
async fn a_datagram_sent_before_the_reactor_has_looked_still_leaves() {
    let (mut server, admitted) = server("127.0.0.1:0", 4).await;
    let mut client = Client::new("127.0.0.1:0").await.unwrap();
    client
        .connect(&token(admitted, 9, &[server.public_address()]))
        .unwrap();
    // No await since the sockets were made: the reactor has not reported
    // them writable yet, and the connection request goes out all the same.
    client.update();
    let stats = client.transport_stats();
    assert_eq!(
        (stats.datagrams_sent, stats.send_errors),
        (1, 0),
        "{stats:?}"
    );
    let (connected, _) = tokio::join!(client.connected(), async {
        let _ = tokio::time::timeout(LIMIT, server.next_event()).await;
    });
    connected.unwrap();
}

//! Creation failures and caller mistakes come back as typed errors;
//! registration is the caller's to undo.

use std::net::UdpSocket;
use std::time::Duration;

use crate::common::{self, *};
use mio::{Events, Poll, Token};
use netcode_mio::{
    Client, ClientConfig, ClientState, CreateError, Family, MAX_CLIENTS, Registered, SendError,
    Server, ServerError,
};

#[test]
fn creation_errors() {
    let poll = Poll::new().unwrap();
    let registry = poll.registry();
    let config = || ClientConfig::default();
    assert!(matches!(
        Server::new("127.0.0.1:40k", common::config(), registry, Token(0)),
        Err(CreateError::ParseAddress(_))
    ));
    assert!(matches!(
        Server::new_dual(
            "127.0.0.1:0",
            "nowhere",
            common::config(),
            registry,
            Token(0),
            Token(1)
        ),
        Err(CreateError::ParseAddress2(_))
    ));
    assert!(matches!(
        Client::new_dual(
            "127.0.0.1:0",
            "127.0.0.1:0",
            config(),
            registry,
            Token(0),
            Token(1)
        ),
        Err(CreateError::SameFamily(Family::V4))
    ));
    let taken = UdpSocket::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap();
    assert!(matches!(
        Server::new(address, common::config(), registry, Token(0)),
        Err(CreateError::AddrInUse { .. })
    ));
    assert!(matches!(
        Client::new(address, config(), registry, Token(0)),
        Err(CreateError::AddrInUse { .. })
    ));
}

/// The mistakes themselves are netcode-std's (tested there); they come
/// through the mio types unchanged.
#[test]
fn caller_mistakes_come_through() {
    let poll = Poll::new().unwrap();
    let registry = poll.registry();
    let mut server = Server::new("127.0.0.1:0", config(), registry, Token(0)).unwrap();
    assert_eq!(server.send_packet(0, b"x"), Err(SendError::NotRunning));
    assert_eq!(
        server.start(MAX_CLIENTS + 1),
        Err(ServerError::InvalidMaxClients)
    );
    let mut client =
        Client::new("127.0.0.1:0", ClientConfig::default(), registry, Token(1)).unwrap();
    assert_eq!(client.send_packet(b"x"), Err(SendError::NotConnected));
    assert!(client.connect(&[0u8; 100]).is_err());
    assert_eq!(client.state(), ClientState::InvalidConnectToken);
}

/// After `deregister` the poll reports nothing for the sockets, while
/// `update` still reads them.
#[test]
fn deregistered_sockets_raise_no_events() {
    let mut poll = Poll::new().unwrap();
    let mut events = Events::with_capacity(8);
    let mut server = Server::new("127.0.0.1:0", config(), poll.registry(), Token(0)).unwrap();
    start_nowait(&mut server, 1);
    let noise = UdpSocket::bind("127.0.0.1:0").unwrap();

    noise.send_to(&[1; 40], server.public_address()).unwrap();
    poll.poll(&mut events, Some(Duration::from_secs(5)))
        .unwrap();
    assert_eq!(
        events.iter().map(|e| e.token()).collect::<Vec<_>>(),
        [Token(0)]
    );
    assert!(server.handle_readable(Token(0), 0.0));
    assert_eq!(server.transport_stats().datagrams_received, 1);

    server.deregister(poll.registry()).unwrap();
    noise.send_to(&[2; 40], server.public_address()).unwrap();
    poll.poll(&mut events, Some(Duration::from_millis(100)))
        .unwrap();
    assert!(events.is_empty(), "no events once deregistered");
    let epoch = std::time::Instant::now();
    run_until("update reads the socket", epoch, |now| {
        server.update(now);
        server.transport_stats().datagrams_received == 2
    });
    assert_eq!(server.stats().dropped_total(), 2, "noise is dropped");
}

#[test]
fn server_and_client_can_move_to_another_thread() {
    fn assert_send<T: Send>() {}
    assert_send::<Server>();
    assert_send::<Client>();
}

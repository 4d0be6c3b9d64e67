//! Creation failures and caller mistakes come back as typed errors with a
//! message; nothing panics.

use std::net::UdpSocket;

use crate::common::*;
use netcode_std::{
    AddressParseError, Client, ClientState, CreateError, Family, LoopbackError, MAX_CLIENTS,
    SendError, Server, ServerError,
};

#[test]
fn binding_a_port_in_use_is_addr_in_use() {
    let taken = UdpSocket::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap();
    match Server::new(address, config()) {
        Err(CreateError::AddrInUse { address: a }) => assert_eq!(a.port(), address.port()),
        other => panic!("expected AddrInUse, got {other:?}"),
    }
    match Client::new(format!("127.0.0.1:{}", address.port())) {
        Err(e @ CreateError::AddrInUse { .. }) => {
            assert!(e.to_string().contains("already in use"), "{e}");
        }
        other => panic!("expected AddrInUse, got {other:?}"),
    }
    if ipv6_available(module_path!()) {
        let taken6 = UdpSocket::bind("[::1]:0").unwrap();
        let port = taken6.local_addr().unwrap().port();
        let result = Server::new_dual("127.0.0.1:0", format!("[::1]:{port}"), config());
        assert!(matches!(result, Err(CreateError::AddrInUse { address }) if address.is_ipv6()));
    }
}

#[test]
fn bad_addresses_are_parse_errors() {
    assert!(matches!(
        Server::new("127.0.0.1:40k", config()),
        Err(CreateError::ParseAddress(AddressParseError::InvalidPort))
    ));
    assert!(matches!(
        Server::new_dual("127.0.0.1:0", "nowhere", config()),
        Err(CreateError::ParseAddress2(
            AddressParseError::InvalidAddress
        ))
    ));
    assert!(matches!(
        Client::new("localhost"),
        Err(CreateError::ParseAddress(_))
    ));
    assert!(matches!(
        Client::new_dual("127.0.0.1:0", "127.0.0.1:0"),
        Err(CreateError::SameFamily(Family::V4))
    ));
    let e = Server::new_dual("[::1]:0", "[::1]:0", config()).unwrap_err();
    assert!(matches!(e, CreateError::SameFamily(Family::V6)));
    assert!(!e.to_string().is_empty());
}

#[test]
fn an_unspecified_public_address_is_refused_with_what_to_pass() {
    for address in ["0.0.0.0:40000", "[::]:40000", "0.0.0.0:0"] {
        match Server::new(address, config()) {
            Err(e @ CreateError::UnspecifiedPublicAddress { .. }) => {
                let text = e.to_string();
                assert!(
                    text.contains("public address") && text.contains("127.0.0.1"),
                    "{text}"
                );
            }
            other => panic!("{address}: expected UnspecifiedPublicAddress, got {other:?}"),
        }
    }
    assert!(matches!(
        Server::new_dual("127.0.0.1:0", "[::]:0", config()),
        Err(CreateError::UnspecifiedPublicAddress { address }) if address.is_ipv6()
    ));
}

#[test]
fn caller_mistakes_on_the_server() {
    let mut server = Server::new("127.0.0.1:0", config()).unwrap();
    assert_eq!(server.send_packet(0, b"x"), Err(SendError::NotRunning));
    assert_eq!(server.start(0), Err(ServerError::InvalidMaxClients));
    assert_eq!(
        server.start(MAX_CLIENTS + 1),
        Err(ServerError::InvalidMaxClients)
    );
    assert!(!server.running());
    start_nowait(&mut server, 2);
    assert_eq!(server.send_packet(0, b""), Err(SendError::PayloadSize));
    assert_eq!(
        server.send_packet(0, &[0; 1201]),
        Err(SendError::PayloadSize)
    );
    assert_eq!(server.send_packet(0, b"x"), Err(SendError::NotConnected));
    assert_eq!(
        server.send_packet(2, b"x"),
        Err(SendError::InvalidClientIndex)
    );
    assert!(server.receive_packet(usize::MAX).is_none());
    assert_eq!(server.client_id(5), None);
    assert_eq!(
        server.disconnect_loopback_client(0),
        Err(ServerError::NotLoopback)
    );
    server.disconnect_client(99);
    // A bigger start grows the server's tables.
    start_nowait(&mut server, 300);
    assert_eq!(server.max_clients(), 300);
    assert_eq!(server.send_packet(299, b"x"), Err(SendError::NotConnected));
    for e in [SendError::NotRunning, SendError::PayloadSize] {
        assert!(!e.to_string().is_empty());
    }
}

#[test]
fn caller_mistakes_on_the_client() {
    let mut client = Client::new("127.0.0.1:0").unwrap();
    assert_eq!(client.send_packet(b"x"), Err(SendError::NotConnected));
    assert!(client.connect(&[0u8; 100]).is_err());
    assert_eq!(client.state(), ClientState::InvalidConnectToken);
    assert!(client.connect(&[0u8; 2048]).is_err());
    assert_eq!(
        client.connect_loopback(3, 2),
        Err(LoopbackError::InvalidClientIndex)
    );
    client
        .connect(&token(1, &["127.0.0.1:1".parse().unwrap()]))
        .unwrap();
    assert_eq!(client.connect_loopback(0, 2), Err(LoopbackError::Busy));
    assert_eq!(client.send_packet(b"x"), Err(SendError::NotConnected));
    client.disconnect();
    assert_eq!(client.state(), ClientState::Disconnected);
    assert_ne!(client.port(), 0);
}

/// Garbage from the network is dropped and counted, never a panic.
#[test]
fn garbage_datagrams_are_counted_not_fatal() {
    let mut server = Server::new("127.0.0.1:0", config()).unwrap();
    start_nowait(&mut server, 1);
    let noise = UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = server.public_address();
    for size in [0usize, 1, 2, 17, 18, 100, 1078, 1300, 1500, 4000] {
        noise.send_to(&vec![0x55; size], to).unwrap();
    }
    noise.send_to(&[0u8; 1078], to).unwrap();
    let mut raw = vec![0u8; 300];
    server.process_packet(noise.local_addr().unwrap(), &mut raw);
    let epoch = std::time::Instant::now();
    run_until("the noise read", epoch, |now| {
        server.update(now);
        server.transport_stats().datagrams_received >= 12
    });
    assert!(server.stats().dropped_total() >= 12);
    assert_eq!(server.num_connected_clients(), 0);
}

//! Loopback clients through the std layer: a listen server's own client in
//! slot 0 beside a regular client over UDP in slot 1, as in the
//! reference's loopback test.

use std::time::Instant;

use crate::common::*;
use netcode_std::{
    Client, ClientEvent, ClientState, DisconnectReason, SendError, Server, ServerError,
    ServerEvent, transfer_loopback,
};

#[test]
fn loopback_client_beside_a_network_client() {
    let epoch = Instant::now();
    let mut server = Server::new("127.0.0.1:0", config()).unwrap();
    let admitted = start_nowait(&mut server, 2);

    server
        .connect_loopback_client(0, 100, Some(&user_data(100)))
        .unwrap();
    assert!(server.client_loopback(0));
    assert_eq!(server.client_id(0), Some(100));
    assert_eq!(server.client_address(0), None);
    assert_eq!(
        server.connect_loopback_client(0, 101, None),
        Err(ServerError::SlotTaken)
    );
    let mut local = Client::new("127.0.0.1:0").unwrap();
    local.connect_loopback(0, 2).unwrap();
    assert!(local.loopback());
    assert_eq!(local.state(), ClientState::Connected);
    assert_eq!((local.client_index(), local.max_clients()), (0, 2));

    let mut remote = Client::new("127.0.0.1:0").unwrap();
    remote
        .connect(&admitted.token(1, &[server.public_address()]))
        .unwrap();
    connect_all(epoch, &mut server, &mut [&mut remote]);
    assert_eq!(remote.client_index(), 1, "slot 0 is the loopback client's");

    // Ten payloads each way through the loopback, with their sequences.
    for i in 0..10u64 {
        local.send_packet(&pattern(1200, i)).unwrap();
        server.send_packet(0, &pattern(100, i)).unwrap();
    }
    assert_eq!(transfer_loopback(&mut server, &mut local), 20);
    for i in 0..10u64 {
        let packet = server.receive_packet(0).unwrap();
        assert_eq!(
            (packet.data(), packet.sequence()),
            (&pattern(1200, i)[..], i)
        );
        server.free_packet(packet);
        let packet = local.receive_packet().unwrap();
        assert_eq!(
            (packet.data(), packet.sequence()),
            (&pattern(100, i)[..], i)
        );
        local.free_packet(packet);
    }
    assert!(server.receive_packet(0).is_none());
    assert_eq!(local.next_packet_sequence(), 10);
    assert_eq!(server.next_packet_sequence(0), Some(10));

    // The network client still works, and never sees loopback payloads.
    server.send_packet(1, &pattern(50, 9)).unwrap();
    run_until("the network payload", epoch, |now| {
        remote.update(now);
        server.update(now);
        remote.receive_packet().is_some()
    });

    // The manual route works too.
    server.send_packet(0, b"manual").unwrap();
    assert!(
        server.poll_loopback_packet(1).is_none(),
        "held for slot 0 only"
    );
    let held = server.poll_loopback_packet(0).unwrap();
    local
        .process_loopback_packet(held.data(), held.sequence())
        .unwrap();
    server.free_packet(held);
    assert_eq!(local.receive_packet().unwrap().data(), b"manual");

    // disconnect_all leaves the loopback slot alone.
    server.disconnect_all_clients();
    assert_eq!(server.num_connected_clients(), 1);
    assert!(server.client_loopback(0));

    // Loopback disconnect on both sides.
    server.disconnect_loopback_client(0).unwrap();
    local.disconnect_loopback();
    assert_eq!(server.num_connected_clients(), 0);
    assert_eq!(
        server.disconnect_reason(0),
        DisconnectReason::ServerDisconnect
    );
    assert_eq!(local.state(), ClientState::Disconnected);
    assert!(!local.loopback());
    assert_eq!(
        server.process_loopback_packet(0, b"late", 99),
        Err(SendError::NotConnected)
    );
    assert_eq!(
        local.process_loopback_packet(b"late", 99),
        Err(SendError::NotConnected)
    );

    let events: Vec<ServerEvent> = std::iter::from_fn(|| server.poll_event()).collect();
    assert!(matches!(
        events.first(),
        Some(ServerEvent::ClientConnected {
            client_index: 0,
            client_id: 100,
            address: None
        })
    ));
    assert!(matches!(
        events.last(),
        Some(ServerEvent::ClientDisconnected {
            client_index: 0,
            reason: DisconnectReason::ServerDisconnect,
            ..
        })
    ));
    let states: Vec<ClientEvent> = std::iter::from_fn(|| local.poll_event()).collect();
    assert_eq!(
        states,
        [
            ClientEvent::StateChanged {
                from: ClientState::Disconnected,
                to: ClientState::Connected
            },
            ClientEvent::StateChanged {
                from: ClientState::Connected,
                to: ClientState::Disconnected
            },
        ]
    );
}

/// Payloads the server holds for one loopback client are not handed to
/// another.
#[test]
fn transfer_routes_by_slot() {
    let mut server = Server::new("127.0.0.1:0", config()).unwrap();
    start_nowait(&mut server, 3);
    let mut a = Client::new("127.0.0.1:0").unwrap();
    let mut b = Client::new("127.0.0.1:0").unwrap();
    server.connect_loopback_client(0, 1, None).unwrap();
    server.connect_loopback_client(2, 2, None).unwrap();
    a.connect_loopback(0, 3).unwrap();
    b.connect_loopback(2, 3).unwrap();
    server.send_packet(2, b"for b").unwrap();
    server.send_packet(0, b"for a").unwrap();
    assert_eq!(transfer_loopback(&mut server, &mut a), 1);
    assert_eq!(a.receive_packet().unwrap().data(), b"for a");
    assert!(a.receive_packet().is_none());
    assert_eq!(transfer_loopback(&mut server, &mut b), 1);
    assert_eq!(b.receive_packet().unwrap().data(), b"for b");
    assert!(server.poll_loopback_packet(0).is_none());
    assert!(server.poll_loopback_packet(2).is_none());
}

//! renet over the adapter on a lossless simulated network: several clients
//! on one server, each message reaching the renet connection of the
//! client that sent it, and a split packet sent before the client has
//! confirmed its slot (when the server puts a keep-alive before each
//! payload, so the halves are two sequences apart).

use std::time::Duration;

use crate::common::net::{self, Net};
use crate::common::{check, message};
use netcode_renet::{NetcodeClientTransport, NetcodeServerTransport};
use renet::{ConnectionConfig, DefaultChannel, RenetClient, RenetServer};

const TICK: Duration = Duration::from_micros(16_667);

#[test]
fn each_clients_messages_reach_its_own_connection() {
    let net = Net::new();
    let (mut server_transport, target) = net::server_transport(&net, 8);
    let mut server = RenetServer::new(ConnectionConfig::default());
    let ids = [1000_u64, 2000, 3000];
    let mut clients: Vec<(RenetClient, NetcodeClientTransport<_>)> = ids
        .iter()
        .map(|&id| {
            let transport = net::client_transport(&net, id, target);
            (RenetClient::new(ConnectionConfig::default()), transport)
        })
        .collect();
    let reliable = u8::from(DefaultChannel::ReliableOrdered);
    let mut echoed = vec![Vec::new(); ids.len()];
    for tick in 0..600 {
        for (i, (client, transport)) in clients.iter_mut().enumerate() {
            client.update(TICK);
            transport.update(TICK, client).unwrap();
            if client.is_connected() && tick % 10 == 0 {
                // Message index: the client's position, then its count.
                let index = (i as u32) << 16 | tick;
                client.send_message(reliable, message(index, 1500 + i));
            }
            while let Some(m) = client.receive_message(reliable) {
                echoed[i].push(check(&m));
            }
            transport.send_packets(client).unwrap();
        }
        server.update(TICK);
        server_transport.update(TICK, &mut server).unwrap();
        for &id in &ids {
            while let Some(m) = server.receive_message(id, reliable) {
                let index = check(&m);
                let sender = ids[(index >> 16) as usize];
                assert_eq!(sender, id, "message {index:#x} reached the wrong client");
                server.send_message(id, reliable, m);
            }
        }
        server_transport.send_packets(&mut server);
    }
    for (i, &id) in ids.iter().enumerate() {
        let slot = server_transport.client_slot(id).unwrap();
        assert_eq!(server_transport.slot_client_id(slot), Some(id));
        assert_eq!(slot, clients[i].1.client_index());
        assert!(
            echoed[i].len() > 50,
            "client {id} got {} echoes",
            echoed[i].len()
        );
        assert!(echoed[i].iter().all(|&index| (index >> 16) as usize == i));
    }
    let slots: std::collections::HashSet<_> = ids
        .iter()
        .map(|&id| server_transport.client_slot(id))
        .collect();
    assert_eq!(slots.len(), ids.len(), "one slot each");
}

#[test]
fn a_split_packet_to_a_client_that_has_not_confirmed_its_slot_arrives() {
    let net = Net::new();
    let (mut server_transport, target) = net::server_transport(&net, 2);
    let mut server = RenetServer::new(ConnectionConfig::default());
    let mut client_transport = net::client_transport(&net, 1, target);
    let mut client = RenetClient::new(ConnectionConfig::default());
    let reliable = u8::from(DefaultChannel::ReliableOrdered);

    // Until the server has the client, without the client hearing back.
    for _ in 0..100 {
        client.update(TICK);
        client_transport.update(TICK, &mut client).unwrap();
        server_transport.update(TICK, &mut server).unwrap();
        if server.is_connected(1) {
            break;
        }
    }
    assert!(server.is_connected(1));
    let slot = server_transport.client_slot(1).unwrap();
    let before = server_transport.host().next_packet_sequence(slot).unwrap();
    // One renet packet of about 1210 bytes.
    server.send_message(1, reliable, message(42, 1200));
    server_transport.send_packets(&mut server);
    let after = server_transport.host().next_packet_sequence(slot).unwrap();
    let stats = server_transport.stats();
    assert_eq!(stats.packets_split, 1);
    let payloads = stats.packets_sent + stats.packets_split;
    assert_eq!(
        after - before,
        2 * payloads,
        "a keep-alive before each payload"
    );

    let mut received = None;
    for _ in 0..100 {
        client.update(TICK);
        client_transport.update(TICK, &mut client).unwrap();
        if let Some(m) = client.receive_message(reliable) {
            received = Some(check(&m));
            break;
        }
        client_transport.send_packets(&mut client).unwrap();
    }
    assert_eq!(received, Some(42));
    assert_eq!(client_transport.stats().packets_reassembled, 1);
}

#[test]
fn the_transports_can_be_bevy_resources() {
    // A bevy `Resource` must be `Send + Sync + 'static`.
    fn resource<T: Send + Sync + 'static>() {}
    resource::<NetcodeServerTransport>();
    resource::<NetcodeClientTransport>();
}

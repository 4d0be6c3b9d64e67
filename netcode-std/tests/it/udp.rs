//! Real UDP on the loopback interface: many clients, IPv6, dual stack.
//! Every server and client binds port 0, so these tests run in parallel.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::time::Instant;

use crate::common::*;
use netcode_std::{
    Client, ClientConfig, ClientState, DisconnectReason, PacketTagging, Server, ServerEvent,
};

/// 64 clients connect to one server and payloads flow both ways, each
/// checked byte for byte; then they all disconnect.
#[test]
fn sixty_four_clients_connect_and_exchange_payloads() {
    const CLIENTS: usize = 64;
    let epoch = Instant::now();
    let mut server = Server::new("127.0.0.1:0", config()).unwrap();
    let admitted = start_nowait(&mut server, CLIENTS);
    let address = server.public_address();
    assert_eq!(address.ip().to_string(), "127.0.0.1");
    assert_ne!(address.port(), 0, "port 0 becomes the bound port");
    assert_eq!(server.port(), address.port());

    let mut clients: Vec<Client> = (0..CLIENTS)
        .map(|_| Client::new("127.0.0.1:0").unwrap())
        .collect();
    for (i, client) in clients.iter_mut().enumerate() {
        client
            .connect(&admitted.token(i as u64 + 1, &[address]))
            .unwrap();
        assert_eq!(client.state(), ClientState::SendingConnectionRequest);
    }

    let mut client_got = [0usize; CLIENTS];
    let mut server_got = [0usize; CLIENTS];
    run_until("64 connections and payloads both ways", epoch, |now| {
        for (i, client) in clients.iter_mut().enumerate() {
            client.update(now);
            if client.state() == ClientState::Connected {
                client.send_packet(&pattern(300, i as u64 + 1)).unwrap();
            }
            while let Some(packet) = client.receive_packet() {
                assert_eq!(packet.data(), &pattern(200, i as u64 + 1)[..]);
                client_got[i] += 1;
                client.free_packet(packet);
            }
        }
        server.update(now);
        for slot in 0..server.max_clients() {
            let Some(id) = server.client_id(slot) else {
                continue;
            };
            server.send_packet(slot, &pattern(200, id)).unwrap();
            while let Some(packet) = server.receive_packet(slot) {
                assert_eq!(packet.data(), &pattern(300, id)[..]);
                server_got[id as usize - 1] += 1;
                server.free_packet(packet);
            }
        }
        client_got.iter().all(|n| *n > 0) && server_got.iter().all(|n| *n > 0)
    });

    assert_eq!(server.num_connected_clients(), CLIENTS);
    let ids: HashSet<u64> = (0..CLIENTS).filter_map(|s| server.client_id(s)).collect();
    assert_eq!(ids, (1..=CLIENTS as u64).collect());
    let indices: HashSet<usize> = clients.iter().map(|c| c.client_index()).collect();
    assert_eq!(indices.len(), CLIENTS, "every client has its own slot");
    for slot in 0..CLIENTS {
        let id = server.client_id(slot).unwrap();
        assert_eq!(server.client_user_data(slot), Some(&user_data(id)));
        let from = server.client_address(slot).unwrap();
        assert_eq!(from.ip().to_string(), "127.0.0.1");
    }
    let mut connects = 0;
    while let Some(event) = server.poll_event() {
        assert!(matches!(event, ServerEvent::ClientConnected { .. }));
        connects += 1;
    }
    assert_eq!(connects, CLIENTS);
    for client in &clients {
        assert_eq!(client.max_clients(), CLIENTS);
        assert_eq!(client.transport_stats().queue_full, 0);
    }

    for client in &mut clients {
        client.disconnect();
        assert_eq!(client.state(), ClientState::Disconnected);
    }
    run_until("every slot freed", epoch, |now| {
        server.update(now);
        server.num_connected_clients() == 0
    });
    for slot in 0..CLIENTS {
        assert_eq!(
            server.disconnect_reason(slot),
            DisconnectReason::ClientDisconnect
        );
    }
}

/// Connects `client` to `server` with a token listing `servers`, issued
/// as of `admitted`, then exchanges payloads until each side has one.
fn connect_and_exchange(
    epoch: Instant,
    (server, admitted): (&mut Server, AdmittedFrom),
    client: &mut Client,
    client_id: u64,
    servers: &[SocketAddr],
) {
    client.connect(&admitted.token(client_id, servers)).unwrap();
    let (mut to_client, mut to_server) = (false, false);
    run_until("connection and a payload each way", epoch, |now| {
        client.update(now);
        server.update(now);
        if client.state() == ClientState::Connected {
            client.send_packet(&pattern(1200, 0)).unwrap();
        }
        let slot = client.client_index();
        if server.client_id(slot) == Some(client_id) {
            server.send_packet(slot, &pattern(1200, 1)).unwrap();
            while let Some(packet) = server.receive_packet(slot) {
                assert_eq!(packet.data(), &pattern(1200, 0)[..]);
                to_server = true;
                server.free_packet(packet);
            }
        }
        while let Some(packet) = client.receive_packet() {
            assert_eq!(packet.data(), &pattern(1200, 1)[..]);
            to_client = true;
            client.free_packet(packet);
        }
        to_client && to_server
    });
}

#[test]
fn ipv6_loopback() {
    if !ipv6_available(module_path!()) {
        return;
    }
    let epoch = Instant::now();
    let mut server = Server::new("[::1]:0", config()).unwrap();
    let admitted = start_nowait(&mut server, 4);
    assert!(server.local_addr().is_ipv6());
    let mut client = Client::new("[::1]:0").unwrap();
    let address = server.public_address();
    connect_and_exchange(epoch, (&mut server, admitted), &mut client, 7, &[address]);
    let slot = client.client_index();
    assert!(server.client_address(slot).unwrap().is_ipv6());
    assert_eq!(client.server_address(), Some(address));
}

/// One dual-stack server, reached by an IPv4 client, an IPv6 client, and a
/// dual client whose token lists the server's IPv6 address.
#[test]
fn dual_stack_server_over_both_families() {
    if !ipv6_available(module_path!()) {
        return;
    }
    let epoch = Instant::now();
    let mut server = Server::new_dual("127.0.0.1:0", "[::1]:0", config()).unwrap();
    let admitted = start_nowait(&mut server, 8);
    let v4 = server.public_address();
    let v6 = server.secondary_address().unwrap();
    assert!(v4.is_ipv4() && v6.is_ipv6());
    assert_ne!(v6.port(), 0);

    let mut client4 = Client::new("127.0.0.1:0").unwrap();
    connect_and_exchange(epoch, (&mut server, admitted), &mut client4, 1, &[v4]);
    let mut client6 = Client::new("[::1]:0").unwrap();
    connect_and_exchange(epoch, (&mut server, admitted), &mut client6, 2, &[v6]);
    let mut dual = Client::new_dual("127.0.0.1:0", "[::1]:0").unwrap();
    connect_and_exchange(epoch, (&mut server, admitted), &mut dual, 3, &[v6, v4]);

    assert_eq!(server.num_connected_clients(), 3);
    let family = |c: &Client| server.client_address(c.client_index()).unwrap().is_ipv6();
    assert!(!family(&client4));
    assert!(family(&client6));
    assert!(
        family(&dual),
        "the dual client used the token's first address"
    );
}

/// A token whose first address is a dead port on the loopback: the client
/// times out there (the token's 1 s timeout) and moves on to the real one.
#[test]
fn client_falls_back_to_the_next_server_address() {
    let epoch = Instant::now();
    let mut server = Server::new("127.0.0.1:0", config()).unwrap();
    let admitted = start_nowait(&mut server, 2);
    let dead = {
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        socket.local_addr().unwrap()
    };
    let token = admitted
        .builder(&key(), 9)
        .server_addresses([dead, server.public_address()])
        .timeout_seconds(1)
        .generate()
        .unwrap();
    let mut client = Client::new("127.0.0.1:0").unwrap();
    client.connect(&token).unwrap();
    assert_eq!(client.server_address(), Some(dead));
    connect_all(epoch, &mut server, &mut [&mut client]);
    assert_eq!(client.server_address(), Some(server.public_address()));
    // The ICMP "port unreachable" answers from the dead port were skipped.
    assert_eq!(server.num_connected_clients(), 1);
}

/// Dropping a client tells the server at once; stopping a server tells its
/// clients at once.
#[test]
fn drop_and_stop_send_disconnect_packets() {
    let epoch = Instant::now();
    let mut server = Server::new("127.0.0.1:0", config()).unwrap();
    let admitted = start_nowait(&mut server, 2);
    let address = server.public_address();
    let mut a = Client::new("127.0.0.1:0").unwrap();
    let mut b = Client::new("127.0.0.1:0").unwrap();
    a.connect(&admitted.token(1, &[address])).unwrap();
    b.connect(&admitted.token(2, &[address])).unwrap();
    connect_all(epoch, &mut server, &mut [&mut a, &mut b]);
    let slot_a = a.client_index();
    drop(a);
    run_until("the dropped client's slot freed", epoch, |now| {
        server.update(now);
        b.update(now);
        !server.client_connected(slot_a)
    });
    assert_eq!(
        server.disconnect_reason(slot_a),
        DisconnectReason::ClientDisconnect
    );
    server.stop();
    assert!(!server.running());
    run_until("the client told of the stop", epoch, |now| {
        b.update(now);
        b.state() == ClientState::Disconnected
    });
}

/// A full one-slot server denies every other client at once, as the
/// reference does: its token history is as large as the reference's even
/// for one slot, so fresh tokens are answered rather than ignored.
#[test]
fn a_full_small_server_denies_the_others() {
    const OTHERS: usize = 40;
    let epoch = Instant::now();
    let mut server = Server::new("127.0.0.1:0", config()).unwrap();
    let admitted = start_nowait(&mut server, 1);
    let address = server.public_address();
    let mut first = Client::new("127.0.0.1:0").unwrap();
    first.connect(&admitted.token(1, &[address])).unwrap();
    connect_all(epoch, &mut server, &mut [&mut first]);

    let mut others: Vec<Client> = (0..OTHERS)
        .map(|_| Client::new("127.0.0.1:0").unwrap())
        .collect();
    for (i, client) in others.iter_mut().enumerate() {
        client
            .connect(&admitted.token(i as u64 + 2, &[address]))
            .unwrap();
    }
    run_until("every other client denied", epoch, |now| {
        first.update(now);
        for client in others.iter_mut() {
            client.update(now);
        }
        server.update(now);
        others
            .iter()
            .all(|c| c.state() == ClientState::ConnectionDenied)
    });
    assert_eq!(first.state(), ClientState::Connected);
    assert_eq!(server.num_connected_clients(), 1);
}

/// With packet tagging on, servers and clients of both families are made
/// and connect (the reference's packet_tagging test).
#[test]
fn packet_tagging_sockets_connect() {
    let epoch = Instant::now();
    let mut hosts = vec!["127.0.0.1:0"];
    if ipv6_available(module_path!()) {
        hosts.push("[::1]:0");
    }
    for (i, host) in hosts.into_iter().enumerate() {
        let mut server_config = config();
        server_config.packet_tagging = PacketTagging::ExpeditedForwarding;
        let mut server = Server::new(host, server_config).unwrap();
        let admitted = start_nowait(&mut server, 1);
        let mut client_config = ClientConfig::default();
        client_config.packet_tagging = PacketTagging::Reference;
        let mut client = Client::with_config(host, client_config).unwrap();
        let address = server.public_address();
        connect_and_exchange(
            epoch,
            (&mut server, admitted),
            &mut client,
            i as u64 + 1,
            &[address],
        );
    }
}

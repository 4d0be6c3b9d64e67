//! Real UDP on the loopback interface through mio: many mio clients on a
//! mio server in one poll, a mio client on a std server, IPv6, dual stack.
//! Every socket binds port 0, so these tests run in parallel.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::time::Duration;

use crate::common::*;
use mio::Token;
use netcode_mio::{
    Client, ClientConfig, ClientState, DisconnectReason, Registered, Server, ServerEvent,
};

const SERVER: Token = Token(0);

fn mio_client(event_loop: &EventLoop, host: &str, token: Token) -> Client {
    Client::new(host, ClientConfig::default(), event_loop.registry(), token).unwrap()
}

/// 64 mio clients connect to a mio server, all in one poll. Every 20 ms
/// each connected client sends a payload, which the server checks byte for
/// byte and answers; each client checks the answers. Then they all leave.
#[test]
fn sixty_four_mio_clients_on_a_mio_server() {
    const CLIENTS: usize = 64;
    const SEND_EVERY: Duration = Duration::from_millis(20);
    let mut event_loop = EventLoop::new();
    let mut server = Server::new("127.0.0.1:0", config(), event_loop.registry(), SERVER).unwrap();
    let admitted = start_nowait(&mut server, CLIENTS);
    let address = server.public_address();
    assert_eq!(address.ip().to_string(), "127.0.0.1");
    assert_ne!(address.port(), 0, "port 0 becomes the bound port");

    let mut clients: Vec<Client> = (0..CLIENTS)
        .map(|i| mio_client(&event_loop, "127.0.0.1:0", Token(i + 1)))
        .collect();
    for (i, client) in clients.iter_mut().enumerate() {
        client
            .connect(&admitted.token(i as u64 + 1, &[address]))
            .unwrap();
    }

    let mut client_got = [0usize; CLIENTS];
    let mut server_got = [0usize; CLIENTS];
    let mut next_send = 0.0;
    event_loop.run_until("64 connections and payloads both ways", |event_loop| {
        let mut peers: Vec<&mut dyn Peer> = vec![&mut server];
        peers.extend(clients.iter_mut().map(|c| c as &mut dyn Peer));
        let now = event_loop.turn(&mut peers, Some(SEND_EVERY));
        let send = now >= next_send;
        if send {
            next_send = now + SEND_EVERY.as_secs_f64();
        }
        for (i, client) in clients.iter_mut().enumerate() {
            let id = i as u64 + 1;
            if send && client.state() == ClientState::Connected {
                client.send_packet(&pattern(300, id)).unwrap();
            }
            client_got[i] += take_payloads(client, &pattern(200, id));
        }
        for slot in 0..server.max_clients() {
            let Some(id) = server.client_id(slot) else {
                continue;
            };
            // Every payload from a client is answered.
            for _ in 0..take_server_payloads(&mut server, slot, &pattern(300, id)) {
                server.send_packet(slot, &pattern(200, id)).unwrap();
                server_got[id as usize - 1] += 1;
            }
        }
        client_got.iter().all(|n| *n >= 3) && server_got.iter().all(|n| *n >= 3)
    });

    assert_eq!(server.num_connected_clients(), CLIENTS);
    let ids: HashSet<u64> = (0..CLIENTS).filter_map(|s| server.client_id(s)).collect();
    assert_eq!(ids, (1..=CLIENTS as u64).collect());
    for slot in 0..CLIENTS {
        let id = server.client_id(slot).unwrap();
        assert_eq!(server.client_user_data(slot), Some(&user_data(id)));
    }
    let indices: HashSet<usize> = clients.iter().map(|c| c.client_index()).collect();
    assert_eq!(indices.len(), CLIENTS, "every client has its own slot");
    let mut connects = 0;
    while let Some(event) = server.poll_event() {
        assert!(matches!(event, ServerEvent::ClientConnected { .. }));
        connects += 1;
    }
    assert_eq!(connects, CLIENTS);
    assert_eq!(server.transport_stats().queue_full, 0);

    for client in &mut clients {
        client.disconnect();
    }
    event_loop.run_until("every slot freed", |event_loop| {
        event_loop.turn(&mut [&mut server], None);
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
/// as of `admitted`, and exchanges 1200-byte payloads until each side has
/// one, in `event_loop`. Returns the client's slot.
fn connect_and_exchange<S: netcode_std::transport::Socket>(
    event_loop: &mut EventLoop,
    (server, admitted): (&mut netcode_std::Server<S>, AdmittedFrom),
    client: &mut Client,
    client_id: u64,
    servers: &[SocketAddr],
) -> usize
where
    netcode_std::Server<S>: Peer,
{
    client.connect(&admitted.token(client_id, servers)).unwrap();
    let (mut to_client, mut to_server) = (0, 0);
    event_loop.run_until("connection and a payload each way", |event_loop| {
        event_loop.turn(&mut [&mut *server, &mut *client], None);
        if client.state() == ClientState::Connected {
            client.send_packet(&pattern(1200, 0)).unwrap();
        }
        let slot = client.client_index();
        if server.client_id(slot) == Some(client_id) {
            server.send_packet(slot, &pattern(1200, 1)).unwrap();
            to_server += take_server_payloads(server, slot, &pattern(1200, 0));
        }
        to_client += take_payloads(client, &pattern(1200, 1));
        to_client > 0 && to_server > 0
    });
    client.client_index()
}

/// A mio client talks to a std server (not in the poll), which then kicks
/// it: the client reaches Disconnected.
#[test]
fn mio_client_on_a_std_server() {
    let mut event_loop = EventLoop::new();
    let mut server = netcode_std::Server::new("127.0.0.1:0", config()).unwrap();
    let admitted = start_nowait(&mut server, 4);
    let mut client = mio_client(&event_loop, "127.0.0.1:0", Token(1));
    let address = server.public_address();
    let slot = connect_and_exchange(
        &mut event_loop,
        (&mut server, admitted),
        &mut client,
        5,
        &[address],
    );
    assert_eq!(client.server_address(), Some(address));
    assert_eq!(server.client_id(slot), Some(5));
    server.disconnect_client(slot);
    event_loop.run_until("the client told of the kick", |event_loop| {
        event_loop.turn(&mut [&mut server, &mut client], None);
        client.state() == ClientState::Disconnected
    });
    assert_eq!(client.poll_timeout(event_loop.now()), None, "idle");
}

/// A mio client and a mio server in one poll; the client leaves and the
/// server reports why.
#[test]
fn mio_client_on_a_mio_server_then_leaves() {
    let mut event_loop = EventLoop::new();
    let mut server = Server::new("127.0.0.1:0", config(), event_loop.registry(), SERVER).unwrap();
    let admitted = start_nowait(&mut server, 4);
    let mut client = mio_client(&event_loop, "127.0.0.1:0", Token(1));
    let address = server.public_address();
    let slot = connect_and_exchange(
        &mut event_loop,
        (&mut server, admitted),
        &mut client,
        6,
        &[address],
    );
    while server.poll_event().is_some() {}
    client.disconnect();
    event_loop.run_until("the server sees the client leave", |event_loop| {
        event_loop.turn(&mut [&mut server], None);
        !server.client_connected(slot)
    });
    match server.poll_event() {
        Some(ServerEvent::ClientDisconnected {
            client_index,
            client_id,
            reason,
            ..
        }) => assert_eq!(
            (client_index, client_id, reason),
            (slot, 6, DisconnectReason::ClientDisconnect)
        ),
        other => panic!("expected the client's disconnect, got {other:?}"),
    }
}

#[test]
fn ipv6_loopback() {
    if !ipv6_available(module_path!()) {
        return;
    }
    let mut event_loop = EventLoop::new();
    let mut server = Server::new("[::1]:0", config(), event_loop.registry(), SERVER).unwrap();
    let admitted = start_nowait(&mut server, 4);
    assert!(server.local_addr().is_ipv6());
    let mut client = mio_client(&event_loop, "[::1]:0", Token(1));
    let address = server.public_address();
    let slot = connect_and_exchange(
        &mut event_loop,
        (&mut server, admitted),
        &mut client,
        7,
        &[address],
    );
    assert!(server.client_address(slot).unwrap().is_ipv6());
    assert_eq!(client.server_address(), Some(address));
}

/// One dual-stack mio server with a token per family, reached by an IPv4
/// mio client, and by a dual-stack mio client whose token lists the
/// server's IPv6 address first.
#[test]
fn dual_stack_mio_server_over_both_families() {
    if !ipv6_available(module_path!()) {
        return;
    }
    let mut event_loop = EventLoop::new();
    let registry = event_loop.registry();
    let mut server = Server::new_dual(
        "127.0.0.1:0",
        "[::1]:0",
        config(),
        registry,
        SERVER,
        Token(1),
    )
    .unwrap();
    let admitted = start_nowait(&mut server, 8);
    let v4 = server.public_address();
    let v6 = server.secondary_address().unwrap();
    assert!(v4.is_ipv4() && v6.is_ipv6());
    assert_ne!(v6.port(), 0);
    let tokens = |family| server.socket(family).map(|s| s.token());
    assert_eq!(tokens(netcode_mio::Family::V4), Some(SERVER));
    assert_eq!(tokens(netcode_mio::Family::V6), Some(Token(1)));

    let mut client4 = mio_client(&event_loop, "127.0.0.1:0", Token(2));
    let slot4 = connect_and_exchange(
        &mut event_loop,
        (&mut server, admitted),
        &mut client4,
        1,
        &[v4],
    );
    let registry = event_loop.registry();
    let config = ClientConfig::default();
    let mut dual = Client::new_dual(
        "127.0.0.1:0",
        "[::1]:0",
        config,
        registry,
        Token(3),
        Token(4),
    )
    .unwrap();
    let slot6 = connect_and_exchange(
        &mut event_loop,
        (&mut server, admitted),
        &mut dual,
        2,
        &[v6, v4],
    );

    assert_eq!(server.num_connected_clients(), 2);
    assert!(server.client_address(slot4).unwrap().is_ipv4());
    assert!(
        server.client_address(slot6).unwrap().is_ipv6(),
        "the dual client used the token's first address"
    );
}

/// Tokens that are not the server's or client's are left alone.
#[test]
fn foreign_tokens_are_not_ours() {
    let event_loop = EventLoop::new();
    let registry = event_loop.registry();
    let mut server = Server::new("127.0.0.1:0", config(), registry, SERVER).unwrap();
    let mut client = mio_client(&event_loop, "127.0.0.1:0", Token(1));
    assert!(server.handle_readable(SERVER, 0.0));
    assert!(!server.handle_readable(Token(1), 0.0));
    assert!(client.handle_readable(Token(1), 0.0));
    assert!(!client.handle_readable(SERVER, 0.0));
    assert_eq!(server.poll_timeout(0.0), None, "stopped: nothing to do");
    assert_eq!(client.poll_timeout(0.0), None, "disconnected: idle");
}

//! A server made through the C API, on real loopback UDP, with netcode-std
//! clients: the connect and disconnect callbacks with their arguments (and
//! what the slot reads as inside them), the accessors, checked payloads
//! both ways, disconnects of every kind, and the allocator's calls
//! balanced once the server is destroyed.
#![cfg(not(miri))]

use std::ffi::c_int;
use std::net::SocketAddr;
use std::time::Instant;

use crate::server_common::*;
use netcode::*;
use netcode_std::{Client, ClientState, ConnectTokenBuilder};
use test_fixtures::{
    PROTOCOL_ID, key, pattern, run_until, seconds, token, token_timing_out, user_data,
};

/// Runs `client` and `server` until `done`.
fn run(
    what: &str,
    epoch: Instant,
    server: *mut netcode_server_t,
    client: &mut Client,
    mut done: impl FnMut(&mut Client) -> bool,
) {
    run_until(what, epoch, |now| {
        client.update(now);
        // SAFETY: a live server.
        unsafe { netcode_server_update(server, now) };
        done(client)
    });
}

/// A netcode-std client on 127.0.0.1 that connects to `server` with
/// `token`; runs both until it is connected.
fn connected(what: &str, epoch: Instant, server: *mut netcode_server_t, token: &[u8]) -> Client {
    let mut client = Client::new("127.0.0.1:0").unwrap();
    client.connect(token).unwrap();
    run(what, epoch, server, &mut client, |c| {
        c.state() == ClientState::Connected
    });
    client
}

/// Runs `server` until its slot `slot` is vacated.
fn run_until_vacated(what: &str, epoch: Instant, server: *mut netcode_server_t, slot: c_int) {
    run_until(what, epoch, |now| {
        // SAFETY: a live server.
        unsafe {
            netcode_server_update(server, now);
            netcode_server_client_connected(server, slot) == 0
        }
    });
}

/// Asserts what a disconnect callback of a stop or a destroy (`what`)
/// saw: the server still running with its `max_clients` slots, and the
/// slot whole: client `client_id`, the reason SERVER_DISCONNECT, an IPv4
/// address.
fn assert_whole_inside(what: &str, seen: Seen, max_clients: c_int, client_id: u64) {
    assert_eq!(
        (
            seen.running,
            seen.max_clients,
            seen.slot_connected,
            seen.client_id,
            seen.reason
        ),
        (
            1,
            max_clients,
            1,
            client_id,
            NETCODE_SERVER_CLIENT_DISCONNECT_REASON_SERVER_DISCONNECT
        ),
        "inside {what}'s disconnect callback the server still runs and the slot is whole"
    );
    assert_eq!(seen.address_type, NETCODE_ADDRESS_IPV4);
}

#[test]
fn a_c_server_and_a_netcode_std_client_exchange_checked_payloads() {
    let world = World::new();
    let server = create("127.0.0.1:0", &world.config());
    assert!(!server.is_null());
    assert_eq!(create_error(), NETCODE_SERVER_CREATE_ERROR_NONE);
    world.server.set(server);
    // SAFETY: `server` is live until the destroy at the end of the test.
    unsafe {
        assert_eq!(netcode_server_running(server), 0);
        assert_eq!(netcode_server_max_clients(server), 0);
        netcode_server_start(server, 4);
        assert_eq!(netcode_server_running(server), 1);
        assert_eq!(netcode_server_max_clients(server), 4);
    }
    // SAFETY: as above.
    let port = unsafe { netcode_server_get_port(server) };
    assert_ne!(port, 0, "the ephemeral port");
    let address = SocketAddr::from(([127, 0, 0, 1], port));

    let epoch = Instant::now();
    let mut client = connected("the client connected", epoch, server, &token(7, &[address]));
    assert_eq!(world.events(), [(0, 1)]);
    let seen = world.seen.borrow()[0];
    assert_eq!(
        (
            seen.slot_connected,
            seen.client_id,
            seen.loopback,
            seen.num_connected
        ),
        (1, 7, 0, 1),
        "the slot inside the connect callback"
    );
    assert_eq!(seen.user_data_first, user_data(7)[0]);

    // SAFETY: as above; the pointers returned point into the live server.
    unsafe {
        assert_eq!(netcode_server_client_connected(server, 0), 1);
        assert_eq!(netcode_server_client_connected(server, 1), 0);
        assert_eq!(netcode_server_client_id(server, 0), 7);
        assert_eq!(netcode_server_client_loopback(server, 0), 0);
        assert_eq!(netcode_server_num_connected_clients(server), 1);
        assert_eq!(
            netcode_server_client_disconnect_reason(server, 0),
            NETCODE_SERVER_CLIENT_DISCONNECT_REASON_NONE
        );
        let from = netcode_server_client_address(server, 0);
        assert!(!from.is_null());
        assert_eq!(address_of(&*from), client.local_addr());
        let free = netcode_server_client_address(server, 1);
        assert_eq!(
            (*free).type_,
            NETCODE_ADDRESS_NONE,
            "a free slot's address is zeroed"
        );
        let data = netcode_server_client_user_data(server, 0).cast::<[u8; 256]>();
        assert_eq!(*data, user_data(7));
        let data = netcode_server_client_user_data(server, 1).cast::<[u8; 256]>();
        assert_eq!(*data, [0; 256]);
    }

    // Client to server: ten payloads of different sizes, in order.
    let sent: Vec<Vec<u8>> = (0..10).map(|i| pattern(1 + i * 133, i as u64)).collect();
    for payload in &sent {
        client.send_packet(payload).unwrap();
    }
    let mut received = Vec::new();
    run(
        "ten payloads at the server",
        epoch,
        server,
        &mut client,
        |_| {
            while let Some(packet) = receive(server, 0) {
                received.push(packet);
            }
            received.len() == sent.len()
        },
    );
    for (i, ((data, sequence), payload)) in received.iter().zip(&sent).enumerate() {
        assert_eq!(data, payload, "payload {i}");
        if i > 0 {
            assert!(*sequence > received[i - 1].1, "sequences increase");
        }
    }

    // Server to client, with the sequence of each.
    for (i, payload) in sent.iter().enumerate() {
        // SAFETY: as above.
        let before = unsafe { netcode_server_next_packet_sequence(server, 0) };
        send(server, 0, payload);
        // SAFETY: as above.
        let after = unsafe { netcode_server_next_packet_sequence(server, 0) };
        assert!(after > before, "payload {i} took a sequence");
    }
    let mut at_client = Vec::new();
    run(
        "ten payloads at the client",
        epoch,
        server,
        &mut client,
        |c| {
            while let Some(packet) = c.receive_packet() {
                at_client.push(packet.data().to_vec());
            }
            at_client.len() == sent.len()
        },
    );
    assert_eq!(at_client, sent);

    // A payload left unfreed, for destroy to free.
    client.send_packet(&sent[0]).unwrap();
    let mut kept = std::ptr::null_mut();
    run("one more payload", epoch, server, &mut client, |_| {
        let (mut bytes, mut sequence) = (0, 0);
        // SAFETY: as above, with writable out-pointers.
        kept = unsafe { netcode_server_receive_packet(server, 0, &mut bytes, &mut sequence) };
        !kept.is_null()
    });

    // The server kicks the client: the callback sees the slot as it was.
    // SAFETY: as above.
    unsafe { netcode_server_disconnect_client(server, 0) };
    assert_eq!(world.events(), [(0, 1), (0, 0)]);
    let seen = world.seen.borrow()[1];
    assert_eq!(
        (
            seen.slot_connected,
            seen.client_id,
            seen.reason,
            seen.num_connected
        ),
        (
            1,
            7,
            NETCODE_SERVER_CLIENT_DISCONNECT_REASON_SERVER_DISCONNECT,
            1
        ),
        "the slot inside the disconnect callback"
    );
    assert_eq!(seen.user_data_first, user_data(7)[0]);
    // SAFETY: as above.
    unsafe {
        assert_eq!(netcode_server_client_connected(server, 0), 0);
        assert_eq!(netcode_server_client_id(server, 0), 0);
        assert_eq!(netcode_server_num_connected_clients(server), 0);
        assert_eq!(
            netcode_server_client_disconnect_reason(server, 0),
            NETCODE_SERVER_CLIENT_DISCONNECT_REASON_SERVER_DISCONNECT
        );
        let data = netcode_server_client_user_data(server, 0).cast::<[u8; 256]>();
        assert_eq!(*data, [0; 256], "a vacated slot's user data is zeroed");
    }
    run("the client saw the kick", epoch, server, &mut client, |c| {
        c.state() != ClientState::Connected
    });

    // A new client in the slot, then the server is destroyed under it: the
    // disconnect callback fires from destroy, the client is told.
    let mut second = connected(
        "the second client connected",
        epoch,
        server,
        &token(8, &[address]),
    );
    assert_eq!(world.events()[2..], [(0, 1)]);
    // SAFETY: live; not used after this (the callbacks query it while
    // destroy runs them).
    unsafe { netcode_server_destroy(server) };
    assert_eq!(world.events()[3..], [(0, 0)]);
    assert_whole_inside("destroy", world.seen.borrow()[3], 4, 8);
    world.server.set(std::ptr::null_mut());
    let _ = kept;
    world.assert_balanced();
    run_until("the second client was told", epoch, |now| {
        second.update(now);
        second.state() == ClientState::Disconnected
    });
}

#[test]
fn silent_and_leaving_clients_are_reported_with_their_reasons() {
    let world = World::new();
    let server = create("127.0.0.1:0", &world.config());
    assert!(!server.is_null());
    world.server.set(server);
    // SAFETY: live until destroyed at the end.
    let port = unsafe {
        netcode_server_start(server, 2);
        netcode_server_get_port(server)
    };
    let address = SocketAddr::from(([127, 0, 0, 1], port));
    let epoch = Instant::now();

    // A client that leaves: CLIENT_DISCONNECT.
    let mut client = connected("connected", epoch, server, &token(1, &[address]));
    client.disconnect();
    run_until_vacated("the server saw the client leave", epoch, server, 0);
    let seen = *world.seen.borrow().last().unwrap();
    assert_eq!(
        (seen.index, seen.connected, seen.client_id, seen.reason),
        (
            0,
            0,
            1,
            NETCODE_SERVER_CLIENT_DISCONNECT_REASON_CLIENT_DISCONNECT
        )
    );

    // A client that goes silent (1 s timeout): TIMED_OUT.
    let _silent = connected(
        "the second client connected",
        epoch,
        server,
        &token_timing_out(2, &[address], 1),
    );
    let slot: c_int = world.events().last().unwrap().0;
    run_until_vacated("the silent client timed out", epoch, server, slot);
    // SAFETY: live.
    let reason = unsafe { netcode_server_client_disconnect_reason(server, slot) };
    assert_eq!(reason, NETCODE_SERVER_CLIENT_DISCONNECT_REASON_TIMED_OUT);
    let seen = *world.seen.borrow().last().unwrap();
    assert_eq!((seen.client_id, seen.reason), (2, reason));

    // Stop reports the remaining client; start resets the reasons.
    let _third = connected(
        "the third client connected",
        epoch,
        server,
        &token(3, &[address]),
    );
    let before = world.events().len();
    // SAFETY: live.
    unsafe { netcode_server_stop(server) };
    assert_eq!(world.events()[before..].len(), 1);
    assert_eq!(world.events()[before].1, 0);
    assert_whole_inside("stop", *world.seen.borrow().last().unwrap(), 2, 3);
    // SAFETY: live.
    unsafe {
        assert_eq!(netcode_server_running(server), 0);
        assert_eq!(netcode_server_num_connected_clients(server), 0);
        assert_eq!(
            netcode_server_client_disconnect_reason(server, 0),
            0,
            "stopped"
        );
        netcode_server_start(server, 2);
        assert_eq!(netcode_server_client_disconnect_reason(server, 0), 0);
        assert_eq!(netcode_server_client_disconnect_reason(server, 1), 0);
    }

    // A start while running stops first, with the callbacks.
    let _fourth = connected(
        "the fourth client connected",
        epoch,
        server,
        &token(4, &[address]),
    );
    // SAFETY: live; destroyed once.
    unsafe {
        netcode_server_start(server, 1);
        let seen = *world.seen.borrow().last().unwrap();
        assert_eq!(
            (
                seen.connected,
                seen.running,
                seen.max_clients,
                seen.client_id
            ),
            (0, 1, 2, 4),
            "the restart's disconnect callback sees the old server"
        );
        assert_eq!(netcode_server_max_clients(server), 1);
        assert_eq!(netcode_server_num_connected_clients(server), 0);
        world.server.set(std::ptr::null_mut());
        netcode_server_destroy(server);
    }
    world.assert_balanced();
}

#[test]
fn an_unspecified_public_address_is_accepted_as_in_the_reference() {
    let world = World::new();
    let server = create("0.0.0.0:0", &world.config());
    assert!(!server.is_null(), "error {}", create_error());
    // SAFETY: live until destroyed.
    let port = unsafe {
        netcode_server_start(server, 2);
        netcode_server_get_port(server)
    };
    let public = SocketAddr::from(([127, 0, 0, 1], port));
    let listed = SocketAddr::from(([0, 0, 0, 0], port));
    let epoch = Instant::now();
    // A token whose internal address is the server's (unspecified) one.
    let admitted = ConnectTokenBuilder::new(PROTOCOL_ID, &key(), 1)
        .server_addresses([public])
        .internal_server_addresses([listed])
        .generate()
        .unwrap();
    let _client = connected("the client connected", epoch, server, &admitted);
    // A token listing only the address it is reached at is refused, as
    // the reference refuses it: the server's address is not in it.
    let mut refused = Client::new("127.0.0.1:0").unwrap();
    refused.connect(&token_timing_out(2, &[public], 1)).unwrap();
    run(
        "the second client gave up",
        epoch,
        server,
        &mut refused,
        |c| c.state() != ClientState::SendingConnectionRequest,
    );
    assert_eq!(refused.state(), ClientState::ConnectionRequestTimedOut);
    // SAFETY: live; destroyed once.
    unsafe {
        assert_eq!(netcode_server_num_connected_clients(server), 1);
        netcode_server_destroy(server);
    }
    world.assert_balanced();
}

#[test]
fn a_dual_stack_server_takes_clients_of_both_families() {
    if !test_fixtures::ipv6_available("a_dual_stack_server_takes_clients_of_both_families") {
        return;
    }
    let world = World::new();
    // A port free for both families: the server binds both unspecified
    // addresses at it; a port taken meanwhile is tried again.
    let (server, port) = (0..20)
        .find_map(|_| {
            let port = std::net::UdpSocket::bind("0.0.0.0:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let server = create_dual(
                &format!("127.0.0.1:{port}"),
                &format!("[::1]:{port}"),
                &world.config(),
            );
            (!server.is_null()).then_some((server, port))
        })
        .expect("a dual-stack server on a free port");
    // SAFETY: live until destroyed below.
    unsafe { netcode_server_start(server, 2) };
    let epoch = Instant::now();
    let v4: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let v6: SocketAddr = format!("[::1]:{port}").parse().unwrap();
    let mut a = Client::new("127.0.0.1:0").unwrap();
    let mut b = Client::new("[::1]:0").unwrap();
    a.connect(&token(1, &[v4])).unwrap();
    b.connect(&token(2, &[v6])).unwrap();
    run_until("both connected", epoch, |now| {
        a.update(now);
        b.update(now);
        // SAFETY: live.
        unsafe { netcode_server_update(server, now) };
        a.state() == ClientState::Connected && b.state() == ClientState::Connected
    });
    // SAFETY: live; destroyed once.
    unsafe {
        assert_eq!(netcode_server_num_connected_clients(server), 2);
        let from = netcode_server_client_address(server, b.client_index() as c_int);
        assert_eq!((*from).type_, NETCODE_ADDRESS_IPV6);
        assert_eq!(netcode_server_get_port(server), port);
        netcode_server_destroy(server);
    }
    assert_eq!(world.events().iter().filter(|e| e.1 == 0).count(), 2);
    world.assert_balanced();
    let _ = seconds(epoch);
}

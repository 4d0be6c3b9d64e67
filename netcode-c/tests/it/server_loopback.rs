//! Loopback clients of a C server: a netcode-std client in loopback mode
//! in slot 0 beside a network client in slot 1, payloads both ways through
//! the loopback callback and `netcode_server_process_loopback_packet`
//! with their sequences, what loopback slots are spared (keep-alives,
//! timeouts, disconnect_all), and the refusals (no loopback callback, a
//! stopped server, a taken slot).
#![cfg(not(miri))]

use std::ffi::c_int;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::globals::capture_log;
use crate::server_common::*;
use netcode::*;
use netcode_std::{Client, ClientState};
use test_fixtures::{pattern, run_for, run_until, token, user_data};

/// Moves what the C server sent to loopback slot 0 to `client`, and what
/// `client` sent to the server; returns how many payloads went each way.
fn transfer(world: &World, server: *mut netcode_server_t, client: &mut Client) -> (usize, usize) {
    let mut down = 0;
    while let Some((index, data, sequence)) = world.loopback.borrow_mut().pop_front() {
        assert_eq!(index, 0);
        client.process_loopback_packet(&data, sequence).unwrap();
        down += 1;
    }
    let mut up = 0;
    while let Some(packet) = client.poll_loopback_packet() {
        // SAFETY: a live server and `packet.len()` readable bytes.
        unsafe {
            netcode_server_process_loopback_packet(
                server,
                0,
                packet.data().as_ptr(),
                packet.len() as c_int,
                packet.sequence(),
            );
        }
        client.free_packet(packet);
        up += 1;
    }
    (down, up)
}

#[test]
fn a_loopback_client_and_a_network_client_share_a_server() {
    let world = World::new();
    let server = create("127.0.0.1:0", &world.config());
    assert!(!server.is_null());
    world.server.set(server);
    let user = user_data(42);
    // SAFETY: live until destroyed at the end; `user` is 256 bytes.
    let port = unsafe {
        netcode_server_start(server, 2);
        netcode_server_connect_loopback_client(server, 0, 42, user.as_ptr());
        netcode_server_get_port(server)
    };
    assert_eq!(
        world.events(),
        [(0, 1)],
        "the connect callback fired at once"
    );
    let seen = world.seen.borrow()[0];
    assert_eq!(
        (seen.slot_connected, seen.client_id, seen.loopback),
        (1, 42, 1)
    );
    // SAFETY: live.
    unsafe {
        assert_eq!(netcode_server_client_loopback(server, 0), 1);
        assert_eq!(netcode_server_client_id(server, 0), 42);
        assert_eq!(netcode_server_num_connected_clients(server), 1);
        let data = netcode_server_client_user_data(server, 0).cast::<[u8; 256]>();
        assert_eq!(*data, user);
        let from = netcode_server_client_address(server, 0);
        assert_eq!(
            (*from).type_,
            NETCODE_ADDRESS_NONE,
            "a loopback slot has no address"
        );
    }
    let mut local = Client::new("127.0.0.1:0").unwrap();
    local.connect_loopback(0, 2).unwrap();

    // A network client takes slot 1.
    let address = SocketAddr::from(([127, 0, 0, 1], port));
    let epoch = Instant::now();
    let mut remote = Client::new("127.0.0.1:0").unwrap();
    remote.connect(&token(7, &[address])).unwrap();
    run_until("the network client connected", epoch, |now| {
        remote.update(now);
        // SAFETY: live.
        unsafe { netcode_server_update(server, now) };
        remote.state() == ClientState::Connected
    });
    assert_eq!(remote.client_index(), 1);
    assert_eq!(world.events(), [(0, 1), (1, 1)]);

    // Server to loopback client: the callback gets each payload with the
    // slot's sequence, 0 upwards.
    let sent: Vec<Vec<u8>> = (0..10).map(|i| pattern(10 + i * 100, i as u64)).collect();
    for payload in &sent {
        send(server, 0, payload);
    }
    let sequences: Vec<u64> = world.loopback.borrow().iter().map(|p| p.2).collect();
    assert_eq!(sequences, (0..10).collect::<Vec<u64>>());
    // SAFETY: live.
    let next = unsafe { netcode_server_next_packet_sequence(server, 0) };
    assert_eq!(next, 10);
    // Loopback client to server.
    for payload in &sent {
        local.send_packet(payload).unwrap();
    }
    assert_eq!(transfer(&world, server, &mut local), (10, 10));
    let mut at_client = Vec::new();
    while let Some(packet) = local.receive_packet() {
        at_client.push(packet.data().to_vec());
    }
    assert_eq!(at_client, sent);
    for (i, payload) in sent.iter().enumerate() {
        let (data, sequence) = receive(server, 0).expect("queued at the server");
        assert_eq!((&data, sequence), (payload, i as u64));
    }
    assert!(receive(server, 0).is_none());

    // Time passes: the network client keeps its slot by talking, the
    // loopback slot needs nothing; then the network client goes silent.
    run_for(Duration::from_millis(300), epoch, |now| {
        remote.update(now);
        // SAFETY: live.
        unsafe { netcode_server_update(server, now) };
    });
    // SAFETY: live.
    unsafe {
        assert_eq!(netcode_server_num_connected_clients(server), 2);
        // disconnect_all leaves the loopback slot alone.
        netcode_server_disconnect_all_clients(server);
        assert_eq!(netcode_server_client_connected(server, 0), 1);
        assert_eq!(netcode_server_client_connected(server, 1), 0);
        // disconnect_client does too.
        netcode_server_disconnect_client(server, 0);
        assert_eq!(netcode_server_client_connected(server, 0), 1);
    }
    assert_eq!(world.events(), [(0, 1), (1, 1), (1, 0)]);
    // A stretch of updates far apart: no keep-alives, no timeout.
    for step in 0..20 {
        // SAFETY: live.
        unsafe { netcode_server_update(server, 1000.0 * f64::from(step)) };
    }
    assert!(
        world.loopback.borrow().is_empty(),
        "no keep-alives to loopback slots"
    );
    // SAFETY: live.
    unsafe {
        assert_eq!(netcode_server_client_connected(server, 0), 1);
        netcode_server_disconnect_loopback_client(server, 0);
        assert_eq!(netcode_server_client_connected(server, 0), 0);
        assert_eq!(
            netcode_server_client_disconnect_reason(server, 0),
            NETCODE_SERVER_CLIENT_DISCONNECT_REASON_SERVER_DISCONNECT
        );
    }
    let seen = *world.seen.borrow().last().unwrap();
    assert_eq!(
        (
            seen.index,
            seen.connected,
            seen.slot_connected,
            seen.loopback,
            seen.client_id
        ),
        (0, 0, 1, 1, 42),
        "inside its disconnect callback the loopback slot reads as it was"
    );
    local.disconnect_loopback();

    // Reconnect it, and destroy with it connected: the callback fires.
    // SAFETY: live; destroyed once.
    unsafe {
        netcode_server_connect_loopback_client(server, 0, 43, std::ptr::null());
        let data = netcode_server_client_user_data(server, 0).cast::<[u8; 256]>();
        assert_eq!(*data, [0; 256], "NULL user data is zeros");
        world.server.set(std::ptr::null_mut());
        netcode_server_destroy(server);
    }
    assert_eq!(world.events()[4..], [(0, 1), (0, 0)]);
    world.assert_balanced();
}

#[test]
fn loopback_connects_are_refused_when_they_cannot_be_served() {
    let _settings = capture_log();
    let world = World::new();
    let mut config = world.config();
    config.send_loopback_packet_callback = None;
    let server = create("127.0.0.1:0", &config);
    assert!(!server.is_null());
    // SAFETY: live until destroyed; every pointer given is valid or NULL.
    unsafe {
        netcode_server_start(server, 2);
        netcode_server_connect_loopback_client(server, 0, 1, std::ptr::null());
        assert_eq!(netcode_server_client_connected(server, 0), 0);
        assert_eq!(netcode_server_num_connected_clients(server), 0);
        let payload = [1u8; 10];
        netcode_server_send_packet(server, 0, payload.as_ptr(), 10);
        netcode_server_destroy(server);
    }
    assert!(world.events().is_empty());
    let lines = netcode::test_log::take();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("send_loopback_packet_callback")),
        "{lines:?}"
    );

    let world = World::new();
    let server = create("127.0.0.1:0", &world.config());
    assert!(!server.is_null());
    // SAFETY: live until destroyed.
    unsafe {
        // Stopped.
        netcode_server_connect_loopback_client(server, 0, 1, std::ptr::null());
        assert!(world.events().is_empty());
        netcode_server_start(server, 2);
        // Out of range.
        netcode_server_connect_loopback_client(server, 2, 1, std::ptr::null());
        netcode_server_connect_loopback_client(server, -1, 1, std::ptr::null());
        assert!(world.events().is_empty());
        // Taken slot, and a client id already connected.
        netcode_server_connect_loopback_client(server, 0, 1, std::ptr::null());
        netcode_server_connect_loopback_client(server, 0, 2, std::ptr::null());
        netcode_server_connect_loopback_client(server, 1, 1, std::ptr::null());
        assert_eq!(world.events(), [(0, 1)]);
        assert_eq!(netcode_server_num_connected_clients(server), 1);
        // Not a loopback slot.
        netcode_server_disconnect_loopback_client(server, 1);
        // A payload for a slot that is not loopback is dropped.
        let payload = [5u8; 4];
        netcode_server_process_loopback_packet(server, 1, payload.as_ptr(), 4, 0);
        assert!(receive(server, 1).is_none());
        netcode_server_destroy(server);
    }
    assert_eq!(world.events(), [(0, 1), (0, 0)]);
    world.assert_balanced();
}

//! Override mode: a C server whose datagrams go through the config's send
//! and receive callbacks, on addresses no socket could bind here (so
//! nothing is bound), with a netcode-std client on the same in-test
//! network; the same through `netcode_server_process_packet`; the
//! half-configured override refused before the address is parsed; and
//! calls made from inside an override callback refused, not run on a
//! server that is mid-call.
#![cfg(not(miri))]

use std::net::SocketAddr;
use std::time::Instant;

use crate::globals::capture_log;
use crate::server_common::*;
use netcode::*;
use netcode_std::{Client, ClientState};
use test_fixtures::{pattern, run_until, seconds, token};

const SERVER: &str = "10.200.0.1:40000";
const CLIENT: &str = "10.200.0.2:50000";

/// A client on the world's network at [`CLIENT`], connecting with a token
/// for [`SERVER`].
fn client(world: &World, client_id: u64) -> Client<NetworkSocket> {
    let local: SocketAddr = CLIENT.parse().unwrap();
    let mut client = Client::with_sockets(local, None::<&str>, |_, a| Ok(world.socket(a))).unwrap();
    client
        .connect(&token(client_id, &[SERVER.parse().unwrap()]))
        .unwrap();
    client
}

/// Sends ten checked payloads each way between `server`'s slot 0 and
/// `client`, with `pump` moving the server's datagrams in.
fn exchange(
    epoch: Instant,
    server: *mut netcode_server_t,
    client: &mut Client<NetworkSocket>,
    mut pump: impl FnMut(f64),
) {
    let sent: Vec<Vec<u8>> = (0..10).map(|i| pattern(1 + i * 130, i as u64)).collect();
    for payload in &sent {
        client.send_packet(payload).unwrap();
        send(server, 0, payload);
    }
    let (mut at_server, mut at_client) = (Vec::new(), Vec::new());
    run_until("ten payloads each way", epoch, |now| {
        client.update(now);
        pump(now);
        while let Some((data, _)) = receive(server, 0) {
            at_server.push(data);
        }
        while let Some(packet) = client.receive_packet() {
            at_client.push(packet.data().to_vec());
        }
        at_server.len() == sent.len() && at_client.len() == sent.len()
    });
    assert_eq!(at_server, sent);
    assert_eq!(at_client, sent);
}

#[test]
fn an_override_server_carries_everything_through_its_callbacks() {
    let world = World::new();
    world.address.set(Some(SERVER.parse().unwrap()));
    let server = create(SERVER, &world.override_config());
    assert!(!server.is_null(), "error {}", create_error());
    world.server.set(server);
    // SAFETY: live until destroyed at the end.
    unsafe {
        assert_eq!(
            netcode_server_get_port(server),
            0,
            "no socket, as the reference"
        );
        netcode_server_start(server, 4);
    }
    let epoch = Instant::now();
    let mut client = client(&world, 9);
    run_until("the client connected", epoch, |now| {
        client.update(now);
        // SAFETY: live.
        unsafe { netcode_server_update(server, now) };
        client.state() == ClientState::Connected
    });
    assert_eq!(world.events(), [(0, 1)]);
    // SAFETY: live.
    unsafe {
        let from = netcode_server_client_address(server, 0);
        assert_eq!(address_of(&*from), CLIENT.parse::<SocketAddr>().unwrap());
    }
    exchange(epoch, server, &mut client, |now| {
        // SAFETY: live.
        unsafe { netcode_server_update(server, now) };
    });
    let client_address: SocketAddr = CLIENT.parse().unwrap();
    assert!(
        world.sent.borrow().len() >= 12,
        "challenge, keep-alive, ten payloads"
    );
    assert!(
        world
            .sent
            .borrow()
            .iter()
            .all(|(to, len)| *to == client_address && *len <= 1300)
    );

    // SAFETY: live; destroyed once.
    unsafe { netcode_server_destroy(server) };
    assert_eq!(world.events(), [(0, 1), (0, 0)]);
    world.assert_balanced();
    run_until("the client was told", epoch, |now| {
        client.update(now);
        client.state() == ClientState::Disconnected
    });
}

#[test]
fn datagrams_handed_in_with_process_packet_are_handled_as_received_ones() {
    let world = World::new();
    world.address.set(Some(SERVER.parse().unwrap()));
    world.receive_enabled.set(false);
    let server = create(SERVER, &world.override_config());
    assert!(!server.is_null());
    world.server.set(server);
    // SAFETY: live until destroyed.
    unsafe { netcode_server_start(server, 1) };
    let server_address: SocketAddr = SERVER.parse().unwrap();
    let pump = |now: f64| {
        // SAFETY: live; each datagram is a writable buffer of its length,
        // which the send override may write over during the call.
        unsafe { netcode_server_update(server, now) };
        while let Some((mut datagram, from)) = world.take_datagram(server_address) {
            let from = c_address(from);
            // The send override writes over the buffer the server is
            // given (as a program reusing one buffer would): the server
            // is done with it by the time its replies leave.
            world.scribble.set((datagram.as_mut_ptr(), datagram.len()));
            // SAFETY: as above.
            unsafe {
                netcode_server_process_packet(
                    server,
                    std::ptr::from_ref(&from).cast_mut(),
                    datagram.as_mut_ptr(),
                    datagram.len() as i32,
                );
            }
            world.scribble.set((std::ptr::null_mut(), 0));
        }
    };
    let epoch = Instant::now();
    let mut client = client(&world, 3);
    run_until("the client connected", epoch, |now| {
        client.update(now);
        pump(now);
        client.state() == ClientState::Connected
    });
    assert_eq!(
        world.events(),
        [(0, 1)],
        "the connect callback fired from process_packet"
    );
    exchange(epoch, server, &mut client, pump);
    // SAFETY: live; destroyed once.
    unsafe { netcode_server_destroy(server) };
    world.assert_balanced();
}

thread_local! {
    /// Where `netcode_server_client_address` said slot 0's address is.
    static SLOT_ADDRESS: std::cell::Cell<*const netcode_address_t> =
        const { std::cell::Cell::new(std::ptr::null()) };
    /// What the receive override read there.
    static READ_INSIDE: std::cell::RefCell<Vec<SocketAddr>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

#[test]
fn an_address_handed_out_reads_right_from_inside_an_override() {
    // Runs inside the receive override, while the server's update holds
    // its state: the address handed out earlier is kept apart from that
    // state, so reading it here is sound.
    fn read_slot_address(_world: &World) {
        let pointer = SLOT_ADDRESS.get();
        if !pointer.is_null() {
            // SAFETY: from netcode_server_client_address of the live
            // server, valid until it is destroyed.
            let address = address_of(unsafe { &*pointer });
            READ_INSIDE.with(|r| r.borrow_mut().push(address));
        }
    }
    let world = World::new();
    world.address.set(Some(SERVER.parse().unwrap()));
    let server = create(SERVER, &world.override_config());
    assert!(!server.is_null());
    world.server.set(server);
    // SAFETY: live until destroyed at the end.
    unsafe { netcode_server_start(server, 1) };
    let epoch = Instant::now();
    let mut client = client(&world, 4);
    run_until("the client connected", epoch, |now| {
        client.update(now);
        // SAFETY: live.
        unsafe { netcode_server_update(server, now) };
        client.state() == ClientState::Connected
    });
    // SAFETY: live.
    SLOT_ADDRESS.set(unsafe { netcode_server_client_address(server, 0) });
    world.on_receive.set(Some(read_slot_address));
    // SAFETY: live.
    unsafe { netcode_server_update(server, seconds(epoch) + 0.1) };
    world.on_receive.set(None);
    let read = READ_INSIDE.with(|r| r.borrow().clone());
    assert!(!read.is_empty());
    assert!(
        read.iter()
            .all(|a| *a == CLIENT.parse::<SocketAddr>().unwrap())
    );
    // SAFETY: live; destroyed once.
    unsafe { netcode_server_destroy(server) };
    world.assert_balanced();
}

#[test]
fn a_half_configured_override_is_refused_before_the_address_is_parsed() {
    let world = World::new();
    let mut config = world.override_config();
    config.send_packet_override = None;
    assert!(create("not an address", &config).is_null());
    assert_eq!(
        create_error(),
        NETCODE_SERVER_CREATE_ERROR_MISSING_OVERRIDE_CALLBACK
    );
    let mut config = world.override_config();
    config.receive_packet_override = None;
    assert!(create(SERVER, &config).is_null());
    assert_eq!(
        create_error(),
        NETCODE_SERVER_CREATE_ERROR_MISSING_OVERRIDE_CALLBACK
    );
    // With both, a dual-stack server on two foreign addresses.
    let server = create_dual(SERVER, "[fd00::1]:40000", &world.override_config());
    assert!(!server.is_null());
    assert_eq!(create_error(), NETCODE_SERVER_CREATE_ERROR_NONE);
    // SAFETY: live; destroyed once.
    unsafe { netcode_server_destroy(server) };
    world.assert_balanced();
}

#[test]
fn calls_from_inside_an_override_callback_are_refused() {
    fn reenter(world: &World) {
        let server = world.server.get();
        // SAFETY: the live server whose update runs this callback: the
        // library refuses the calls (the server is mid-call), reading only
        // its flags.
        unsafe {
            world
                .events
                .borrow_mut()
                .push((-1, netcode_server_running(server)));
            netcode_server_update(server, 5.0);
            netcode_server_disconnect_all_clients(server);
            netcode_server_destroy(server);
        }
    }
    let _settings = capture_log();
    let world = World::new();
    world.address.set(Some(SERVER.parse().unwrap()));
    let server = create(SERVER, &world.override_config());
    assert!(!server.is_null());
    world.server.set(server);
    world.on_receive.set(Some(reenter));
    // SAFETY: live until destroyed.
    unsafe {
        netcode_server_start(server, 1);
        netcode_server_update(server, 1.0);
        assert_eq!(
            world.events(),
            [(-1, 0)],
            "running() refused inside the override"
        );
        assert_eq!(netcode_server_running(server), 1, "and the server lives on");
    }
    let lines = netcode::test_log::take();
    for function in [
        "netcode_server_running",
        "netcode_server_update",
        "netcode_server_disconnect_all_clients",
    ] {
        let refusals = lines
            .iter()
            .filter(|l| l.contains(function) && l.contains("refused"))
            .count();
        assert_eq!(refusals, 1, "one line per refused call: {lines:?}");
    }
    assert!(
        lines
            .iter()
            .any(|l| l.contains("netcode_server_destroy") && l.contains("refused"))
    );
    world.on_receive.set(None);
    // SAFETY: live; destroyed once.
    unsafe { netcode_server_destroy(server) };
    world.assert_balanced();
}

//! What a careless C program hands the server API, survived: NULL and
//! foreign objects, bad configs and addresses (with the reference's create
//! error codes), slot indices out of range, NULL buffers and sizes out of
//! range, packets freed twice or by the wrong server, destroy twice, and
//! a destroy from inside a callback. Each is refused, mostly with an error
//! line, and the allocator's calls stay balanced.
#![cfg(not(miri))]

use std::ffi::{c_int, c_void};
use std::net::UdpSocket;

use crate::globals::capture_log;
use crate::server_common::*;
use netcode::*;

/// A running server in override mode on a foreign address (no socket),
/// with `slots` slots.
fn started(world: &World, slots: c_int) -> *mut netcode_server_t {
    world.address.set(Some("10.200.0.1:40000".parse().unwrap()));
    let server = create("10.200.0.1:40000", &world.override_config());
    assert!(!server.is_null());
    world.server.set(server);
    // SAFETY: live.
    unsafe { netcode_server_start(server, slots) };
    server
}

/// Asserts that the captured log holds a line with every one of `words`.
#[track_caller]
fn assert_logged(lines: &[String], words: &[&str]) {
    assert!(
        lines.iter().any(|l| words.iter().all(|w| l.contains(w))),
        "no line with all of {words:?}: {lines:?}"
    );
}

#[test]
fn null_and_foreign_servers_are_refused_by_every_function() {
    let _settings = capture_log();
    let null = std::ptr::null_mut::<netcode_server_t>();
    // Not a server: zeroed memory of the right size and alignment, and a
    // misaligned pointer into it.
    let mut foreign = [0u64; 64];
    let not_a_server = foreign.as_mut_ptr().cast::<netcode_server_t>();
    let misaligned = foreign
        .as_mut_ptr()
        .cast::<u8>()
        .wrapping_add(1)
        .cast::<netcode_server_t>();
    let mut bytes = 0;
    let mut sequence = 0;
    let payload = [1u8; 8];
    let mut address = netcode_address_t::default();
    for server in [null, not_a_server, misaligned] {
        // SAFETY: NULL, or 512 bytes that hold no server: every function
        // looks the pointer up among the live servers and refuses it
        // without reading it.
        unsafe {
            netcode_server_start(server, 4);
            netcode_server_stop(server);
            netcode_server_update(server, 1.0);
            assert_eq!(netcode_server_running(server), 0);
            assert_eq!(netcode_server_max_clients(server), 0);
            assert_eq!(netcode_server_num_connected_clients(server), 0);
            assert_eq!(netcode_server_get_port(server), 0);
            assert_eq!(netcode_server_client_connected(server, 0), 0);
            assert_eq!(netcode_server_client_id(server, 0), 0);
            assert!(netcode_server_client_address(server, 0).is_null());
            assert!(netcode_server_client_user_data(server, 0).is_null());
            assert_eq!(netcode_server_client_disconnect_reason(server, 0), 0);
            assert_eq!(netcode_server_client_loopback(server, 0), 0);
            assert_eq!(netcode_server_next_packet_sequence(server, 0), 0);
            netcode_server_disconnect_client(server, 0);
            netcode_server_disconnect_all_clients(server);
            netcode_server_send_packet(server, 0, payload.as_ptr(), 8);
            let packet = netcode_server_receive_packet(server, 0, &mut bytes, &mut sequence);
            assert!(packet.is_null());
            netcode_server_free_packet(server, payload.as_ptr().cast_mut().cast());
            netcode_server_connect_loopback_client(server, 0, 1, std::ptr::null());
            netcode_server_disconnect_loopback_client(server, 0);
            netcode_server_process_loopback_packet(server, 0, payload.as_ptr(), 8, 0);
            netcode_server_process_packet(server, &mut address, payload.as_ptr().cast_mut(), 8);
            netcode_server_destroy(server);
        }
    }
    assert_eq!(
        foreign, [0; 64],
        "nothing was written to the foreign object"
    );
    let lines = netcode::test_log::take();
    assert_logged(&lines, &["netcode_server_update", "NULL"]);
    assert_logged(&lines, &["netcode_server_update", "not a live object"]);
    assert_logged(&lines, &["netcode_server_update", "misaligned"]);
    assert_logged(&lines, &["netcode_server_destroy", "not a live server"]);
}

#[test]
fn create_errors_are_the_references_codes() {
    let world = World::new();
    let config = world.config();
    // NULL config, NULL and bad addresses.
    assert!(create_raw(c"127.0.0.1:0".as_ptr(), None, std::ptr::null()).is_null());
    assert_eq!(
        create_error(),
        NETCODE_SERVER_CREATE_ERROR_ALLOCATE_SERVER_FAILED
    );
    assert!(create_raw(std::ptr::null(), None, &config).is_null());
    assert_eq!(
        create_error(),
        NETCODE_SERVER_CREATE_ERROR_PARSE_ADDRESS_FAILED
    );
    for bad in ["", "not an address", "127.0.0.1:65536", "[]", "1.2.3"] {
        assert!(create(bad, &config).is_null(), "{bad}");
        assert_eq!(
            create_error(),
            NETCODE_SERVER_CREATE_ERROR_PARSE_ADDRESS_FAILED,
            "{bad}"
        );
    }
    let long = "1".repeat(300);
    assert!(create(&long, &config).is_null());
    assert_eq!(
        create_error(),
        NETCODE_SERVER_CREATE_ERROR_PARSE_ADDRESS_FAILED
    );
    assert!(create_dual("127.0.0.1:0", "nope", &config).is_null());
    assert_eq!(
        create_error(),
        NETCODE_SERVER_CREATE_ERROR_PARSE_ADDRESS2_FAILED
    );
    assert!(create_dual("127.0.0.1:0", "127.0.0.2:0", &config).is_null());
    assert_eq!(
        create_error(),
        NETCODE_SERVER_CREATE_ERROR_PARSE_ADDRESS2_FAILED,
        "two addresses of one family"
    );
    // A port in use: the server binds the unspecified address at it.
    let taken = UdpSocket::bind("0.0.0.0:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    assert!(create(&format!("127.0.0.1:{port}"), &config).is_null());
    assert_eq!(
        create_error(),
        NETCODE_SERVER_CREATE_ERROR_BIND_SOCKET_IPV4_FAILED
    );
    if test_fixtures::ipv6_available("create_errors_are_the_references_codes (IPv6 bind)") {
        let taken = std::net::UdpSocket::bind("[::]:0").unwrap();
        let port = taken.local_addr().unwrap().port();
        assert!(create(&format!("[::1]:{port}"), &config).is_null());
        assert_eq!(
            create_error(),
            NETCODE_SERVER_CREATE_ERROR_BIND_SOCKET_IPV6_FAILED
        );
    }
    // The allocator fails: nothing is left behind.
    world.fail_allocations.set(true);
    assert!(create("127.0.0.1:0", &config).is_null());
    assert_eq!(
        create_error(),
        NETCODE_SERVER_CREATE_ERROR_ALLOCATE_SERVER_FAILED
    );
    world.fail_allocations.set(false);
    // A zeroed config is a default one (malloc and free).
    // SAFETY: all-zero bytes are a valid config: integers, NULL pointers
    // and NULL (None) function pointers.
    let zeroed: netcode_server_config_t = unsafe { std::mem::zeroed() };
    let server = create("127.0.0.1:0", &zeroed);
    assert!(!server.is_null());
    assert_eq!(create_error(), NETCODE_SERVER_CREATE_ERROR_NONE);
    // SAFETY: live; destroyed once.
    unsafe { netcode_server_destroy(server) };
    assert_eq!((world.allocations.get(), world.frees.get()), (0, 0));
    // netcode_default_server_config survives NULL and writes the defaults.
    let mut defaults = zeroed;
    // SAFETY: NULL is refused; `defaults` is writable.
    unsafe {
        netcode_default_server_config_v2(std::ptr::null_mut());
        netcode_default_server_config_v2(&mut defaults);
    }
    assert_eq!(
        defaults.max_connect_token_lifetime,
        NETCODE_DEFAULT_MAX_CONNECT_TOKEN_LIFETIME
    );
    assert!(defaults.allocate_function.is_some() && defaults.free_function.is_some());
    assert_eq!((defaults.protocol_id, defaults.private_key), (0, [0; 32]));
}

#[test]
fn slot_indices_out_of_range_are_refused() {
    let _settings = capture_log();
    let world = World::new();
    let server = started(&world, 2);
    let user = [9u8; 256];
    // SAFETY: live until destroyed; every pointer given is valid or NULL.
    unsafe {
        netcode_server_connect_loopback_client(server, 1, 5, user.as_ptr());
        for index in [-1, 2, 255, 256, c_int::MIN, c_int::MAX] {
            assert_eq!(netcode_server_client_connected(server, index), 0);
            assert_eq!(netcode_server_client_id(server, index), 0);
            assert!(netcode_server_client_address(server, index).is_null());
            assert!(netcode_server_client_user_data(server, index).is_null());
            assert_eq!(netcode_server_client_disconnect_reason(server, index), 0);
            assert_eq!(netcode_server_client_loopback(server, index), 0);
            assert_eq!(netcode_server_next_packet_sequence(server, index), 0);
            netcode_server_disconnect_client(server, index);
            netcode_server_disconnect_loopback_client(server, index);
            send(server, index, &[1, 2, 3]);
            assert!(receive(server, index).is_none());
            netcode_server_process_loopback_packet(server, index, user.as_ptr(), 4, 0);
            netcode_server_connect_loopback_client(server, index, 6, std::ptr::null());
        }
        assert_eq!(netcode_server_num_connected_clients(server), 1);
        assert_eq!(netcode_server_client_id(server, 1), 5, "slot 1 untouched");
        // start with a count out of range changes nothing.
        for count in [0, -1, 257, c_int::MAX, c_int::MIN] {
            netcode_server_start(server, count);
            assert_eq!(netcode_server_max_clients(server), 2);
            assert_eq!(netcode_server_client_connected(server, 1), 1);
        }
        // A stopped server answers every slot query with 0 or NULL.
        netcode_server_stop(server);
        assert_eq!(netcode_server_client_connected(server, 0), 0);
        assert!(netcode_server_client_address(server, 0).is_null());
        assert!(netcode_server_client_user_data(server, 0).is_null());
        send(server, 0, &[1]);
        assert!(world.loopback.borrow().is_empty());
        netcode_server_destroy(server);
    }
    world.assert_balanced();
    let lines = netcode::test_log::take();
    assert_logged(&lines, &["netcode_server_client_id", "client index -1"]);
    assert_logged(&lines, &["netcode_server_start", "257"]);
}

#[test]
fn bad_buffers_and_sizes_are_refused() {
    let _settings = capture_log();
    let world = World::new();
    let server = started(&world, 1);
    let payload = [7u8; 1300];
    let mut from = c_address("10.200.0.2:50000".parse().unwrap());
    let mut bytes: c_int = -5;
    let mut sequence = 77;
    // SAFETY: live until destroyed; every pointer given is NULL or valid
    // for the size passed with it (sizes out of range are refused before
    // any byte is read).
    unsafe {
        netcode_server_connect_loopback_client(server, 0, 1, std::ptr::null());
        // Sends: NULL data, sizes 0, negative, over 1200.
        netcode_server_send_packet(server, 0, std::ptr::null(), 10);
        for size in [0, -1, 1201, c_int::MAX, c_int::MIN] {
            netcode_server_send_packet(server, 0, payload.as_ptr(), size);
        }
        assert!(world.loopback.borrow().is_empty(), "nothing was sent");
        netcode_server_send_packet(server, 0, payload.as_ptr(), 1200);
        assert_eq!(
            world.loopback.borrow().len(),
            1,
            "the largest payload is sent"
        );

        // Loopback payloads in: the same checks.
        netcode_server_process_loopback_packet(server, 0, std::ptr::null(), 10, 0);
        for size in [0, -1, 1201] {
            netcode_server_process_loopback_packet(server, 0, payload.as_ptr(), size, 0);
        }
        netcode_server_process_loopback_packet(server, 0, payload.as_ptr(), 3, 41);
        // receive with a NULL size is refused and takes nothing.
        let packet = netcode_server_receive_packet(server, 0, std::ptr::null_mut(), &mut sequence);
        assert!(packet.is_null());
        // A NULL sequence is allowed, as in the reference.
        let packet = netcode_server_receive_packet(server, 0, &mut bytes, std::ptr::null_mut());
        assert!(!packet.is_null());
        assert_eq!((bytes, sequence), (3, 77));
        netcode_server_free_packet(server, packet.cast());

        // Datagrams in: NULL from or data, a from of no type, sizes out of
        // range. None reaches the receive override's network.
        netcode_server_process_packet(
            server,
            std::ptr::null_mut(),
            payload.as_ptr().cast_mut(),
            100,
        );
        netcode_server_process_packet(server, &mut from, std::ptr::null_mut(), 100);
        let mut nothing = netcode_address_t::default();
        netcode_server_process_packet(server, &mut nothing, payload.as_ptr().cast_mut(), 100);
        let mut odd = from;
        odd.type_ = 7;
        netcode_server_process_packet(server, &mut odd, payload.as_ptr().cast_mut(), 100);
        for size in [-1, 1301, c_int::MAX] {
            netcode_server_process_packet(server, &mut from, payload.as_ptr().cast_mut(), size);
        }
        // Garbage of every size the protocol allows is dropped.
        let mut garbage = [0xabu8; 1300];
        for size in [0, 1, 2, 100, 1300] {
            netcode_server_process_packet(server, &mut from, garbage.as_mut_ptr(), size);
        }
        assert_eq!(netcode_server_num_connected_clients(server), 1);
        netcode_server_destroy(server);
    }
    world.assert_balanced();
    let lines = netcode::test_log::take();
    assert_logged(&lines, &["netcode_server_send_packet", "1201"]);
    assert_logged(
        &lines,
        &["netcode_server_receive_packet", "packet_bytes is NULL"],
    );
    assert_logged(&lines, &["netcode_server_process_packet", "1301"]);
    assert_logged(&lines, &["netcode_server_process_packet", "type 7"]);
}

#[test]
fn packets_are_freed_once_and_only_by_their_server() {
    let _settings = capture_log();
    let (world_a, world_b) = (World::new(), World::new());
    // `a` is destroyed twice: its memory is not given back meanwhile.
    world_a.keep_freed.set(true);
    let a = started(&world_a, 1);
    let b = started(&world_b, 1);
    let payload = [3u8; 50];
    let (mut bytes, mut sequence) = (0, 0);
    // SAFETY: both live until destroyed; every pointer given is valid, NULL
    // or a value the servers look up before using.
    unsafe {
        for server in [a, b] {
            netcode_server_connect_loopback_client(server, 0, 1, std::ptr::null());
            for _ in 0..3 {
                netcode_server_process_loopback_packet(server, 0, payload.as_ptr(), 50, 0);
            }
        }
        let from_a = netcode_server_receive_packet(a, 0, &mut bytes, &mut sequence);
        let from_b = netcode_server_receive_packet(b, 0, &mut bytes, &mut sequence);
        assert!(!from_a.is_null() && !from_b.is_null());
        // The wrong server, a stack pointer, NULL, an interior pointer.
        netcode_server_free_packet(b, from_a.cast());
        let mut local = 0u64;
        netcode_server_free_packet(a, (&raw mut local).cast::<c_void>());
        netcode_server_free_packet(a, std::ptr::null_mut());
        netcode_server_free_packet(a, from_a.add(1).cast());
        // The packet is still whole: it was not freed by any of those.
        assert_eq!(std::slice::from_raw_parts(from_a, 50), &payload[..]);
        netcode_server_free_packet(a, from_a.cast());
        netcode_server_free_packet(a, from_a.cast()); // twice
        // One more from each, never freed: destroy frees them.
        let kept_a = netcode_server_receive_packet(a, 0, &mut bytes, &mut sequence);
        assert!(!kept_a.is_null());
        netcode_server_free_packet(b, from_b.cast());
        netcode_server_destroy(a);
        netcode_server_destroy(a); // twice
        netcode_server_destroy(b);
    }
    world_a.assert_balanced();
    world_b.assert_balanced();
    let lines = netcode::test_log::take();
    let refused = lines
        .iter()
        .filter(|l| l.contains("netcode_server_free_packet") && l.contains("not a packet"))
        .count();
    assert_eq!(refused, 5, "{lines:?}");
    assert_logged(
        &lines,
        &["netcode_server_destroy", "freed 1 received packets"],
    );
    assert_logged(&lines, &["netcode_server_destroy", "not a live server"]);
}

#[test]
fn callbacks_may_call_the_server_and_even_destroy_it() {
    // A connect callback that disconnects the client it was told about:
    // the disconnect callback runs nested, and the server is consistent.
    fn kick(world: &World, index: c_int, connected: c_int) {
        if connected == 1 {
            // SAFETY: the live server whose callback this is.
            unsafe { netcode_server_disconnect_loopback_client(world.server.get(), index) };
        }
    }
    let world = World::new();
    // The server's pointer is passed again after its destroy: its memory
    // is not given back meanwhile.
    world.keep_freed.set(true);
    let server = started(&world, 2);
    world.on_event.set(Some(kick));
    // SAFETY: live until destroyed.
    unsafe {
        netcode_server_connect_loopback_client(server, 1, 3, std::ptr::null());
        assert_eq!(netcode_server_num_connected_clients(server), 0);
        assert_eq!(netcode_server_client_connected(server, 1), 0);
    }
    assert_eq!(world.events(), [(1, 1), (1, 0)]);
    let seen = world.seen.borrow().clone();
    assert_eq!((seen[0].slot_connected, seen[0].client_id), (1, 3));
    assert_eq!(
        (seen[1].slot_connected, seen[1].client_id, seen[1].reason),
        (1, 3, 3)
    );

    // A disconnect callback that destroys the server: the destroy waits
    // until the call that ran the callback returns, then frees everything.
    fn destroy_on_disconnect(world: &World, _index: c_int, connected: c_int) {
        if connected == 0 {
            // SAFETY: the live server whose callback this is.
            unsafe { netcode_server_destroy(world.server.get()) };
            // Still usable until the outer call returns.
            // SAFETY: as above.
            let running = unsafe { netcode_server_running(world.server.get()) };
            world.events.borrow_mut().push((-2, running));
        }
    }
    world.on_event.set(Some(destroy_on_disconnect));
    // SAFETY: live; the stop's disconnect callbacks destroy it, and it is
    // not used after this call.
    unsafe {
        netcode_server_connect_loopback_client(server, 0, 4, std::ptr::null());
        netcode_server_connect_loopback_client(server, 1, 5, std::ptr::null());
        netcode_server_stop(server);
    }
    // The first disconnect callback asks for the destroy; the second runs
    // from the destroy itself (which delivers what the stop left), where a
    // second destroy is ignored. Inside both the server still reads as
    // running, as the reference's stop calls back before it stops.
    assert_eq!(
        world.events()[2..],
        [(0, 1), (1, 1), (0, 0), (-2, 1), (1, 0), (-2, 1)]
    );
    world.assert_balanced();
    // The pointer is no longer a server: destroy says so without reading it.
    let _settings = capture_log();
    // SAFETY: destroy looks the pointer up before reading anything.
    unsafe { netcode_server_destroy(server) };
    assert_logged(&netcode::test_log::take(), &["not a live server"]);
}

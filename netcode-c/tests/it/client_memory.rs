//! The C client's memory and its defences, without the network: loopback
//! mode (the callback, payloads in through process_loopback_packet),
//! payloads freed twice or by the wrong client, the allocator callbacks
//! counted and balanced after destroy, allocator failures, NULL and
//! garbage arguments, a destroyed client used again, and calls back into
//! the client from its callbacks.

use std::cell::Cell;
use std::ffi::{c_int, c_void};

use crate::common::*;
use crate::globals::{capture_log, client_create_error, create_client};
use netcode::*;

/// A config with `seen` as the callbacks' context, state and loopback
/// callbacks, and `counter`'s allocator.
fn config(seen: &Seen, counter: &Counter) -> netcode_client_config_t {
    netcode_client_config_t {
        callback_context: std::ptr::from_ref(seen).cast_mut().cast::<c_void>(),
        state_change_callback: Some(record_change),
        send_loopback_packet_callback: Some(record_loopback),
        allocator_context: std::ptr::from_ref(counter).cast_mut().cast::<c_void>(),
        allocate_function: Some(counted_allocate),
        free_function: Some(counted_free),
        ..Default::default()
    }
}

/// A client on an ephemeral IPv4 port.
///
/// # Safety
///
/// `config`'s contexts outlive the client.
unsafe fn client(config: &netcode_client_config_t) -> *mut netcode_client_t {
    // SAFETY: a C string and a readable config (the caller's promise on its
    // contexts).
    let client =
        create_client(|| unsafe { netcode_client_create(c"127.0.0.1:0".as_ptr(), config, 0.0) });
    assert!(!client.is_null());
    client
}

/// Receives one payload: pointer, bytes, sequence.
///
/// # Safety
///
/// `client` is live.
unsafe fn receive(client: *mut netcode_client_t) -> (*mut u8, c_int, u64) {
    let (mut bytes, mut sequence) = (0, 0);
    // SAFETY: a live client and two writable out-pointers.
    let packet = unsafe { netcode_client_receive_packet(client, &mut bytes, &mut sequence) };
    (packet, bytes, sequence)
}

#[test]
fn loopback_mode_calls_back_and_queues_what_the_server_sends() {
    let seen = Seen::default();
    let counter = Counter::default();
    let config = config(&seen, &counter);
    // SAFETY: the contexts outlive the client; every pointer passed below
    // is valid for its call.
    unsafe {
        let client = client(&config);
        netcode_client_connect_loopback(client, 2, 4);
        assert_eq!(netcode_client_state(client), NETCODE_CLIENT_STATE_CONNECTED);
        assert_eq!(netcode_client_loopback(client), 1);
        assert_eq!(
            (
                netcode_client_index(client),
                netcode_client_max_clients(client)
            ),
            (2, 4)
        );
        assert!(
            seen.changes.borrow().is_empty(),
            "no callback, as the reference"
        );

        netcode_client_send_packet(client, b"one".as_ptr(), 3);
        netcode_client_send_packet(client, b"two!".as_ptr(), 4);
        assert_eq!(
            seen.loopback.borrow()[..],
            [(2, b"one".to_vec(), 0), (2, b"two!".to_vec(), 1)]
        );

        netcode_client_process_loopback_packet(client, b"back".as_ptr(), 4, 99);
        let (packet, bytes, sequence) = receive(client);
        assert_eq!((bytes, sequence), (4, 99));
        assert_eq!(std::slice::from_raw_parts(packet, 4), b"back");
        // The reference's slack: 8 zero bytes after the payload.
        assert_eq!(std::slice::from_raw_parts(packet.add(4), 8), [0; 8]);
        netcode_client_free_packet(client, packet.cast());
        assert!(receive(client).0.is_null(), "nothing more queued");

        netcode_client_disconnect_loopback(client);
        assert_eq!(
            netcode_client_state(client),
            NETCODE_CLIENT_STATE_DISCONNECTED
        );
        assert_eq!(netcode_client_loopback(client), 0);
        assert_eq!(seen.changes.borrow()[..], [(3, 0)]);
        netcode_client_destroy(client);
    }
    assert!(counter.balanced(), "{counter:?}");
}

#[test]
fn loopback_without_its_callback_or_with_a_bad_slot_is_refused() {
    let seen = Seen::default();
    let counter = Counter::default();
    let mut config = config(&seen, &counter);
    config.send_loopback_packet_callback = None;
    let _settings = capture_log();
    // SAFETY: the contexts outlive the clients.
    unsafe {
        let client = client(&config);
        netcode_client_connect_loopback(client, 0, 4);
        assert_eq!(
            netcode_client_state(client),
            NETCODE_CLIENT_STATE_DISCONNECTED
        );
        assert_eq!(netcode_client_loopback(client), 0);
        netcode_client_destroy(client);

        config.send_loopback_packet_callback = Some(record_loopback);
        let client = self::client(&config);
        for (index, max) in [(-1, 4), (4, 4), (0, -3)] {
            netcode_client_connect_loopback(client, index, max);
            assert_eq!(netcode_client_loopback(client), 0, "{index} of {max}");
        }
        netcode_client_process_loopback_packet(client, b"x".as_ptr(), 1, 0);
        assert!(receive(client).0.is_null(), "not in loopback mode: dropped");
        netcode_client_destroy(client);
    }
    let lines = netcode::test_log::take();
    assert!(
        logged(&lines, "no send_loopback_packet_callback"),
        "{lines:?}"
    );
    assert!(logged(&lines, "is not a slot"), "{lines:?}");
    assert!(counter.balanced());
}

#[test]
fn packets_freed_twice_or_by_another_client_are_refused_and_destroy_frees_the_rest() {
    let seen = Seen::default();
    let counter = Counter::default();
    let config = config(&seen, &counter);
    let _settings = capture_log();
    // SAFETY: the contexts outlive the clients; foreign pointers are never
    // dereferenced by the library.
    unsafe {
        let (a, b) = (client(&config), client(&config));
        for client in [a, b] {
            netcode_client_connect_loopback(client, 0, 1);
            for sequence in 0..3 {
                netcode_client_process_loopback_packet(client, b"payload".as_ptr(), 7, sequence);
            }
        }
        let (packet, _, _) = receive(a);
        netcode_client_free_packet(b, packet.cast());
        netcode_client_free_packet(a, packet.cast());
        netcode_client_free_packet(a, packet.cast());
        let mut local = [0u8; 16];
        netcode_client_free_packet(a, local.as_mut_ptr().cast());
        netcode_client_free_packet(a, std::ptr::null_mut());

        let (kept, _, _) = receive(b);
        assert!(!kept.is_null());
        let allocations = counter.allocations.get();
        assert_eq!(allocations, 2 + 2, "two objects, two payloads handed out");
        netcode_client_destroy(a);
        netcode_client_destroy(b);
    }
    let lines = netcode::test_log::take();
    let refusals = lines
        .iter()
        .filter(|l| l.contains("is not a packet this client handed out"))
        .count();
    assert_eq!(refusals, 4, "{lines:?}");
    assert!(logged(&lines, "freed 1 received packet(s)"), "{lines:?}");
    assert!(counter.balanced(), "{counter:?}");
}

#[test]
fn allocator_failures_are_create_errors_and_dropped_payloads() {
    let seen = Seen::default();
    let counter = Counter::default();
    let config = config(&seen, &counter);
    // SAFETY: the contexts outlive the clients.
    unsafe {
        counter.fail.set(true);
        let client = create_client(|| netcode_client_create(c"127.0.0.1:0".as_ptr(), &config, 0.0));
        assert!(client.is_null());
        assert_eq!(
            client_create_error(),
            NETCODE_CLIENT_CREATE_ERROR_ALLOCATE_CLIENT_FAILED
        );
        counter.fail.set(false);
        let client = self::client(&config);
        netcode_client_connect_loopback(client, 0, 1);
        netcode_client_process_loopback_packet(client, b"lost".as_ptr(), 4, 0);
        counter.fail.set(true);
        assert!(
            receive(client).0.is_null(),
            "no memory: the payload is dropped"
        );
        counter.fail.set(false);
        netcode_client_destroy(client);
    }
    assert!(counter.balanced());
}

#[test]
fn an_allocator_handing_out_a_live_objects_memory_for_a_payload_is_refused() {
    let seen = Seen::default();
    let counter = Counter::default();
    let config = config(&seen, &counter);
    let _settings = capture_log();
    // SAFETY: the contexts outlive the client; the address the broken
    // allocator returns is never written (that is what is checked).
    unsafe {
        let client = self::client(&config);
        netcode_client_connect_loopback(client, 0, 1);
        netcode_client_process_loopback_packet(client, b"lost".as_ptr(), 4, 0);
        // Inside the client's own memory, as a broken pool might.
        let inside = counter.first.get() + 16;
        let object = std::slice::from_raw_parts(inside as *const u8, 64).to_vec();
        counter.in_use.set(inside);
        assert!(
            receive(client).0.is_null(),
            "refused: the payload is dropped"
        );
        assert_eq!(
            std::slice::from_raw_parts(inside as *const u8, 64),
            object,
            "the client's memory was not written"
        );
        assert!(
            netcode::test_log::take()
                .iter()
                .any(|l| l.contains("memory of a live client")),
            "logged"
        );
        // The client goes on.
        netcode_client_process_loopback_packet(client, b"kept".as_ptr(), 4, 1);
        let (packet, bytes, sequence) = receive(client);
        assert_eq!((bytes, sequence), (4, 1));
        assert_eq!(std::slice::from_raw_parts(packet, 4), b"kept");
        netcode_client_free_packet(client, packet.cast());
        netcode_client_destroy(client);
    }
    assert!(counter.balanced(), "{counter:?}");
}

#[test]
fn null_and_garbage_arguments_are_logged_and_survived() {
    let seen = Seen::default();
    let counter = Counter::default();
    let config = config(&seen, &counter);
    let null = std::ptr::null_mut::<netcode_client_t>();
    let _settings = capture_log();
    // SAFETY: every pointer is NULL, valid, or (the zeroed block) readable
    // memory that is not a client, which the library detects before using.
    unsafe {
        netcode_client_update(null, 1.0);
        netcode_client_connect(null, std::ptr::null_mut());
        netcode_client_send_packet(null, b"x".as_ptr(), 1);
        netcode_client_free_packet(null, std::ptr::null_mut());
        netcode_client_disconnect(null);
        netcode_client_destroy(null);
        assert_eq!(
            netcode_client_state(null),
            NETCODE_CLIENT_STATE_DISCONNECTED
        );
        assert_eq!(netcode_client_index(null), 0);
        assert_eq!(netcode_client_max_clients(null), 0);
        assert_eq!(netcode_client_next_packet_sequence(null), 0);
        assert_eq!(netcode_client_loopback(null), 0);
        assert_eq!(netcode_client_get_port(null), 0);
        assert!(netcode_client_server_address(null).is_null());
        assert!(receive(null).0.is_null());
        netcode_default_client_config(std::ptr::null_mut());

        // Memory that is not a client (aligned, readable, zeroed).
        let mut not_a_client = [0u64; 8];
        let fake = not_a_client.as_mut_ptr().cast::<netcode_client_t>();
        netcode_client_update(fake, 1.0);
        netcode_client_destroy(fake);
        // Misaligned.
        let misaligned = not_a_client
            .as_mut_ptr()
            .cast::<u8>()
            .add(1)
            .cast::<netcode_client_t>();
        assert_eq!(netcode_client_state(misaligned), 0);

        // Creates with bad arguments.
        let mut wrong = config;
        assert!(create_client(|| netcode_client_create(std::ptr::null(), &config, 0.0)).is_null());
        assert_eq!(
            client_create_error(),
            NETCODE_CLIENT_CREATE_ERROR_PARSE_ADDRESS_FAILED
        );
        assert!(
            create_client(|| netcode_client_create(c"nonsense".as_ptr(), &config, 0.0)).is_null()
        );
        assert_eq!(
            client_create_error(),
            NETCODE_CLIENT_CREATE_ERROR_PARSE_ADDRESS_FAILED
        );
        let second = create_client(|| {
            netcode_client_create_dual(
                c"127.0.0.1:0".as_ptr(),
                c"not an address".as_ptr(),
                &config,
                0.0,
            )
        });
        assert!(second.is_null());
        assert_eq!(
            client_create_error(),
            NETCODE_CLIENT_CREATE_ERROR_PARSE_ADDRESS2_FAILED
        );
        assert!(
            create_client(|| netcode_client_create(c"127.0.0.1:0".as_ptr(), std::ptr::null(), 0.0))
                .is_null()
        );
        assert_eq!(
            client_create_error(),
            NETCODE_CLIENT_CREATE_ERROR_ALLOCATE_CLIENT_FAILED
        );
        wrong.override_send_and_receive = 1;
        assert!(
            create_client(|| netcode_client_create(c"127.0.0.1:0".as_ptr(), &wrong, 0.0)).is_null()
        );
        assert_eq!(
            client_create_error(),
            NETCODE_CLIENT_CREATE_ERROR_MISSING_OVERRIDE_CALLBACK
        );

        // Bad lengths and pointers on a live client.
        let client = client(&config);
        netcode_client_connect_loopback(client, 0, 1);
        netcode_client_send_packet(client, std::ptr::null(), 10);
        netcode_client_send_packet(client, b"x".as_ptr(), 0);
        netcode_client_send_packet(client, b"x".as_ptr(), -5);
        netcode_client_send_packet(client, b"x".as_ptr(), 1201);
        netcode_client_process_loopback_packet(client, b"x".as_ptr(), 5000, 0);
        netcode_client_process_loopback_packet(client, b"x".as_ptr(), 1, 3);
        let mut bytes = 0;
        let packet = netcode_client_receive_packet(client, &mut bytes, std::ptr::null_mut());
        assert!(
            packet.is_null(),
            "an out-pointer is NULL: nothing handed out"
        );
        // A misaligned out-pointer: refused, and the payload stays queued.
        let mut words = [0u64; 2];
        let misaligned_bytes = words
            .as_mut_ptr()
            .cast::<u8>()
            .wrapping_add(1)
            .cast::<c_int>();
        let mut sequence = 0u64;
        let packet = netcode_client_receive_packet(client, misaligned_bytes, &mut sequence);
        assert!(
            packet.is_null(),
            "a misaligned out-pointer: nothing handed out"
        );
        let misaligned_sequence = words
            .as_mut_ptr()
            .cast::<u8>()
            .wrapping_add(4)
            .cast::<u64>();
        let packet = netcode_client_receive_packet(client, &mut bytes, misaligned_sequence);
        assert!(
            packet.is_null(),
            "a misaligned out-pointer: nothing handed out"
        );
        let (packet, bytes, sequence) = receive(client);
        assert_eq!((bytes, sequence), (1, 3), "the payload stayed queued");
        netcode_client_free_packet(client, packet.cast());
        assert!(seen.loopback.borrow().is_empty(), "no bad payload was sent");
        netcode_client_connect(client, std::ptr::null_mut());
        let mut from = netcode_address_t::ZERO;
        netcode_client_process_packet(client, &mut from, [0u8; 4].as_mut_ptr(), 4);
        netcode_client_process_packet(client, std::ptr::null_mut(), [0u8; 4].as_mut_ptr(), 4);
        netcode_client_update(client, f64::NAN);
        netcode_client_update(client, f64::INFINITY);
        netcode_client_update(client, -1e300);
        netcode_client_destroy(client);
    }
    let lines = netcode::test_log::take();
    assert!(logged(&lines, "the object is NULL"), "{lines:?}");
    assert!(logged(&lines, "is not a live object"), "{lines:?}");
    assert!(logged(&lines, "misaligned"), "{lines:?}");
    assert!(logged(&lines, "1201 bytes is not in 0..=1200"), "{lines:?}");
    assert!(logged(&lines, "0 bytes is not a payload"), "{lines:?}");
    assert!(
        logged(&lines, "override_send_and_receive is set without"),
        "{lines:?}"
    );
    assert!(counter.balanced());
}

#[test]
fn a_destroyed_client_is_refused() {
    let seen = Seen::default();
    let counter = Counter::default();
    counter.keep.set(true);
    let config = config(&seen, &counter);
    let _settings = capture_log();
    // SAFETY: the destroyed client's pointer is looked up among the live
    // clients before anything is read through it (the counter keeps its
    // block anyway; live_objects makes it unreadable instead).
    unsafe {
        let client = client(&config);
        netcode_client_destroy(client);
        netcode_client_destroy(client);
        netcode_client_update(client, 1.0);
        assert_eq!(netcode_client_state(client), 0);
    }
    let lines = netcode::test_log::take();
    let refused = lines
        .iter()
        .filter(|l| l.contains("is not a live object"))
        .count();
    assert_eq!(refused, 3, "{lines:?}");
    assert!(counter.balanced());
    counter.release();
}

thread_local! {
    /// The client the re-entering callbacks call back into.
    static CLIENT: Cell<*mut netcode_client_t> = const { Cell::new(std::ptr::null_mut()) };
    /// What `netcode_client_state` said inside the state callback.
    static STATE_INSIDE: Cell<c_int> = const { Cell::new(-100) };
}

/// A state callback that asks the client for its state.
unsafe extern "C" fn ask_state(_context: *mut c_void, _previous: c_int, _current: c_int) {
    // SAFETY: the test's live client.
    let state = unsafe { netcode_client_state(CLIENT.get()) };
    STATE_INSIDE.set(state);
}

/// A loopback callback that updates the client from inside.
unsafe extern "C" fn update_inside(
    _context: *mut c_void,
    _index: c_int,
    _data: *const u8,
    _bytes: c_int,
    _sequence: u64,
) {
    // SAFETY: the test's live client.
    unsafe { netcode_client_update(CLIENT.get(), 2.0) };
}

#[test]
fn callbacks_may_call_the_client_back() {
    let config = netcode_client_config_t {
        state_change_callback: Some(ask_state),
        send_loopback_packet_callback: Some(update_inside),
        ..Default::default()
    };
    // SAFETY: a readable config; the client is live until destroyed.
    unsafe {
        let client = client(&config);
        CLIENT.set(client);
        netcode_client_connect_loopback(client, 0, 1);
        netcode_client_send_packet(client, b"hi".as_ptr(), 2);
        netcode_client_disconnect_loopback(client);
        assert_eq!(
            STATE_INSIDE.get(),
            NETCODE_CLIENT_STATE_DISCONNECTED,
            "the callback runs after the change, outside the client"
        );
        netcode_client_destroy(client);
    }
}

/// A state callback that destroys the client (its context) on its way
/// down to DISCONNECTED.
unsafe extern "C" fn destroy_on_disconnect(context: *mut c_void, _previous: c_int, current: c_int) {
    if current == NETCODE_CLIENT_STATE_DISCONNECTED {
        // SAFETY: the context is the cell holding the test's live client.
        let client = unsafe { &*context.cast::<Cell<*mut netcode_client_t>>() };
        // SAFETY: the live client; the library reads it no more after this.
        unsafe { netcode_client_destroy(client.replace(std::ptr::null_mut())) };
    }
}

#[test]
fn a_callback_may_destroy_its_client() {
    let counter = Counter::default();
    let cell = Cell::new(std::ptr::null_mut::<netcode_client_t>());
    let config = netcode_client_config_t {
        state_change_callback: Some(destroy_on_disconnect),
        send_loopback_packet_callback: Some(update_inside),
        callback_context: std::ptr::from_ref(&cell).cast_mut().cast::<c_void>(),
        allocator_context: std::ptr::from_ref(&counter).cast_mut().cast::<c_void>(),
        allocate_function: Some(counted_allocate),
        free_function: Some(counted_free),
        ..Default::default()
    };
    let _settings = capture_log();
    // SAFETY: the cell and counter outlive the client; after the callback
    // destroyed it, the client pointer is only passed, never dereferenced
    // by the test.
    unsafe {
        let client = client(&config);
        cell.set(client);
        netcode_client_connect_loopback(client, 0, 1);
        netcode_client_process_loopback_packet(client, b"left".as_ptr(), 4, 0);
        let _ = receive(client);
        netcode_client_disconnect_loopback(client);
        assert!(cell.get().is_null(), "destroyed from the callback");
        // Destroy from the callback of destroy itself.
        let client = self::client(&config);
        cell.set(client);
        netcode_client_connect_loopback(client, 0, 1);
        netcode_client_destroy(client);
        assert!(cell.get().is_null());
    }
    assert!(counter.balanced(), "{counter:?}");
}

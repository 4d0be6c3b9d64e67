//! The C client API over real UDP on 127.0.0.1, against a netcode-std
//! server: connecting (with its state callbacks), payloads both ways
//! through receive / free, the server address and port, disconnecting, and
//! the create errors of sockets. Every loop is bounded in time.

use std::ffi::{c_int, c_void};
use std::net::UdpSocket;
use std::time::Instant;

use crate::common::*;
use crate::globals::{capture_log, client_create_error, create_client};
use netcode::*;

/// A client config recording state changes into `seen` and allocating
/// through `counter`.
fn client_config(seen: &Seen, counter: &Counter) -> netcode_client_config_t {
    let mut config = netcode_client_config_t::default();
    // SAFETY: `config` is writable.
    unsafe { netcode_default_client_config(&mut config) };
    config.callback_context = std::ptr::from_ref(seen).cast_mut().cast::<c_void>();
    config.state_change_callback = Some(record_change);
    config.allocator_context = std::ptr::from_ref(counter).cast_mut().cast::<c_void>();
    config.allocate_function = Some(counted_allocate);
    config.free_function = Some(counted_free);
    config
}

/// A token from `netcode_generate_connect_token` for the fixtures' server
/// at `address`, which a server started a moment ago admits at once.
///
/// The C API issues tokens as of now, and the restart rule refuses a token
/// that may have been issued in the server's start second: one whose
/// expiry is no later than that second plus the server's
/// `max_connect_token_lifetime`. This token lives one second longer than
/// that lifetime, so its expiry is that of a token issued as of the first
/// second the server admits (what `Server::start_nowait` returns): the
/// server need not wait out its start second (`start` would).
fn c_token(client_id: u64, address: &str, server_lifetime: u64) -> [u8; 2048] {
    let expire_seconds = i32::try_from(server_lifetime + 1).unwrap();
    let address = std::ffi::CString::new(address).unwrap();
    let list = [address.as_ptr()];
    let mut token = [0u8; 2048];
    // SAFETY: one C string in each list, a 32-byte key, 2048 bytes out.
    let result = unsafe {
        netcode_generate_connect_token(
            1,
            list.as_ptr(),
            list.as_ptr(),
            expire_seconds,
            5,
            client_id,
            PROTOCOL_ID,
            PRIVATE_KEY.as_ptr(),
            std::ptr::null_mut(),
            token.as_mut_ptr(),
        )
    };
    assert_eq!(result, NETCODE_OK);
    token
}

#[test]
fn a_c_client_connects_exchanges_payloads_and_disconnects() {
    assert_eq!(netcode_init(), NETCODE_OK);
    let server_config = config();
    let lifetime = server_config.max_connect_token_lifetime;
    let mut server = netcode_std::Server::new("127.0.0.1:0", server_config).unwrap();
    server.start_nowait(4).unwrap();
    let server_address = server.public_address();
    let mut token = c_token(77, &server_address.to_string(), lifetime);

    let seen = Seen::default();
    let counter = Counter::default();
    let config = client_config(&seen, &counter);
    let epoch = Instant::now();
    // SAFETY: a C string and a readable config whose contexts outlive the
    // client (destroyed below).
    let client =
        create_client(|| unsafe { netcode_client_create(c"127.0.0.1:0".as_ptr(), &config, 0.0) });
    assert!(!client.is_null());
    assert_eq!(client_create_error(), NETCODE_CLIENT_CREATE_ERROR_NONE);
    // SAFETY: `client` is live for every call below until destroy; the
    // token, out-pointers and payloads are valid for each call.
    unsafe {
        assert_ne!(netcode_client_get_port(client), 0);
        assert_eq!(
            netcode_client_state(client),
            NETCODE_CLIENT_STATE_DISCONNECTED
        );
        assert_eq!(
            (*netcode_client_server_address(client)).type_,
            NETCODE_ADDRESS_NONE
        );

        netcode_client_connect(client, token.as_mut_ptr());
        run_until("the C client connected", epoch, |now| {
            netcode_client_update(client, now);
            server.update(now);
            netcode_client_state(client) == NETCODE_CLIENT_STATE_CONNECTED
        });
        assert_eq!(
            seen.changes.borrow()[..],
            [(0, 1), (1, 2), (2, 3)],
            "every state change reached the callback, in order"
        );
        assert_eq!(netcode_client_index(client), 0);
        assert_eq!(netcode_client_max_clients(client), 4);
        assert_eq!(server.client_id(0), Some(77), "the C token's client id");
        let address = netcode_client_server_address(client);
        let mut text = [0 as std::ffi::c_char; 256];
        netcode_address_to_string(address, text.as_mut_ptr());
        let text = std::ffi::CStr::from_ptr(text.as_ptr()).to_str().unwrap();
        assert_eq!(text, server_address.to_string());

        // Client to server.
        let payload = pattern(300, 1);
        let sequence = netcode_client_next_packet_sequence(client);
        netcode_client_send_packet(client, payload.as_ptr(), payload.len() as c_int);
        assert_eq!(netcode_client_next_packet_sequence(client), sequence + 1);
        run_until("the payload reached the server", epoch, |now| {
            server.update(now);
            server
                .receive_packet(0)
                .is_some_and(|p| p.data() == &payload[..])
        });

        // Server to client, twice: one freed, one left for destroy.
        for salt in [2, 3] {
            server
                .send_packet(0, &pattern(100 + salt as usize, salt))
                .unwrap();
        }
        let mut received = Vec::new();
        run_until("both payloads reached the client", epoch, |now| {
            netcode_client_update(client, now);
            let (mut bytes, mut sequence) = (0, 0);
            let packet = netcode_client_receive_packet(client, &mut bytes, &mut sequence);
            if !packet.is_null() {
                received.push((packet, bytes, sequence));
            }
            received.len() == 2
        });
        for (salt, (packet, bytes, _)) in [2u64, 3].into_iter().zip(&received) {
            let data = std::slice::from_raw_parts(*packet, *bytes as usize);
            assert_eq!(data, &pattern(100 + salt as usize, salt)[..]);
        }
        assert!(received[0].2 < received[1].2, "sequences increase");
        netcode_client_free_packet(client, received[0].0.cast());
        let allocations_before = counter.allocations.get();
        assert!(allocations_before >= 3, "object and two payloads");

        netcode_client_disconnect(client);
        assert_eq!(
            netcode_client_state(client),
            NETCODE_CLIENT_STATE_DISCONNECTED
        );
        assert_eq!(seen.changes.borrow().last(), Some(&(3, 0)));
        assert_eq!(netcode_client_index(client), 0);
        run_until("the server saw the disconnect", epoch, |now| {
            server.update(now);
            server.num_connected_clients() == 0
        });
        netcode_client_destroy(client);
    }
    assert!(
        counter.balanced(),
        "{counter:?}: every allocation was freed"
    );
    netcode_term();
}

#[test]
fn socket_failures_are_the_reference_create_errors() {
    let taken = UdpSocket::bind("127.0.0.1:0").unwrap();
    let address = std::ffi::CString::new(taken.local_addr().unwrap().to_string()).unwrap();
    let config = netcode_client_config_t::default();
    // SAFETY: C strings and a readable config.
    unsafe {
        let client = create_client(|| netcode_client_create(address.as_ptr(), &config, 0.0));
        assert!(client.is_null(), "the port is taken");
        assert_eq!(
            client_create_error(),
            NETCODE_CLIENT_CREATE_ERROR_CREATE_SOCKET_IPV4_FAILED
        );
        // A second address of the first one's family is ignored, as the
        // reference does.
        let client = create_client(|| {
            netcode_client_create_dual(
                c"127.0.0.1:0".as_ptr(),
                c"127.0.0.1:0".as_ptr(),
                &config,
                0.0,
            )
        });
        assert!(!client.is_null());
        assert_eq!(client_create_error(), NETCODE_CLIENT_CREATE_ERROR_NONE);
        netcode_client_destroy(client);
    }
}

#[test]
fn a_token_of_servers_the_client_cannot_reach_changes_nothing() {
    let seen = Seen::default();
    let counter = Counter::default();
    let config = client_config(&seen, &counter);
    let mut token = token(5, &["[::1]:40000".parse().unwrap()]);
    let _settings = capture_log();
    // SAFETY: C strings, a readable config, a live client, a 2048-byte
    // token.
    unsafe {
        let client = create_client(|| netcode_client_create(c"127.0.0.1:0".as_ptr(), &config, 0.0));
        assert!(!client.is_null());
        netcode_client_connect(client, token.as_mut_ptr());
        assert_eq!(
            netcode_client_state(client),
            NETCODE_CLIENT_STATE_DISCONNECTED
        );
        assert!(seen.changes.borrow().is_empty());
        let mut garbage = [0u8; 2048];
        netcode_client_connect(client, garbage.as_mut_ptr());
        assert_eq!(
            netcode_client_state(client),
            NETCODE_CLIENT_STATE_INVALID_CONNECT_TOKEN
        );
        assert_eq!(seen.changes.borrow()[..], [(0, -5)]);
        netcode_client_destroy(client);
    }
    let lines = netcode::test_log::take();
    assert!(logged(&lines, "no IPv4 server address"), "{lines:?}");
    assert!(logged(&lines, "invalid connect token"), "{lines:?}");
    assert!(counter.balanced());
}

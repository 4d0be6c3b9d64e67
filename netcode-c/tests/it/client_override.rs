//! A C client in override mode: no socket, every datagram through the
//! config's send and receive callbacks and the test's own queue, to a
//! netcode-std server on the same queue (made with `with_sockets`, no
//! socket either), at addresses that are not this machine's.

use std::collections::VecDeque;
use std::ffi::{c_int, c_void};
use std::net::SocketAddr;
use std::time::Instant;

use crate::common::*;
use crate::globals::{capture_log, create_client};
use netcode::*;

/// What the client's callbacks reach through their context: the network,
/// the address the client is known by, and counts.
struct Endpoint {
    network: Network,
    me: SocketAddr,
    sent: usize,
    received: usize,
    /// The client, for a callback that calls it back (refused).
    client: *mut netcode_client_t,
}

/// The send override: pushes the datagram to its destination's queue.
///
/// # Safety
///
/// `context` is the test's `Endpoint`; `to` an address; `data` `bytes`
/// readable bytes.
unsafe extern "C" fn send_override(
    context: *mut c_void,
    to: *mut netcode_address_t,
    data: *const u8,
    bytes: c_int,
) {
    // SAFETY: the test's setup and the library's promise on the arguments.
    let (endpoint, to, data) = unsafe {
        (
            &mut *context.cast::<Endpoint>(),
            *to,
            std::slice::from_raw_parts(data, bytes as usize),
        )
    };
    let to = match (to.type_, to.port) {
        // SAFETY: type IPv4: the octets are the address.
        (NETCODE_ADDRESS_IPV4, port) => SocketAddr::from((unsafe { to.data.ipv4 }, port)),
        _ => panic!("the test's server is IPv4"),
    };
    endpoint.sent += 1;
    if !endpoint.client.is_null() {
        // A call back into the client from inside it: refused, logged.
        // SAFETY: the live client.
        unsafe { netcode_client_update(endpoint.client, 0.0) };
    }
    let me = endpoint.me;
    endpoint
        .network
        .borrow_mut()
        .entry(to)
        .or_default()
        .push_back((data.to_vec(), me));
}

/// The receive override: pops the next datagram for the client.
///
/// # Safety
///
/// `context` is the test's `Endpoint`; `from` writable; `buffer` `max`
/// writable bytes.
unsafe extern "C" fn receive_override(
    context: *mut c_void,
    from: *mut netcode_address_t,
    buffer: *mut u8,
    max: c_int,
) -> c_int {
    // SAFETY: the test's setup.
    let endpoint = unsafe { &mut *context.cast::<Endpoint>() };
    let Some((datagram, sender)) = endpoint
        .network
        .borrow_mut()
        .get_mut(&endpoint.me)
        .and_then(VecDeque::pop_front)
    else {
        return 0;
    };
    assert!(datagram.len() <= max as usize);
    let SocketAddr::V4(sender) = sender else {
        panic!("the test's server is IPv4");
    };
    let mut address = netcode_address_t::ZERO;
    address.data.ipv4 = sender.ip().octets();
    address.port = sender.port();
    address.type_ = NETCODE_ADDRESS_IPV4;
    // SAFETY: writable by the library's promise; `datagram` fits in `max`.
    unsafe {
        from.write(address);
        std::ptr::copy_nonoverlapping(datagram.as_ptr(), buffer, datagram.len());
    }
    endpoint.received += 1;
    datagram.len() as c_int
}

#[test]
fn an_override_client_connects_through_the_callbacks_with_no_socket() {
    let network = Network::default();
    let server_address: SocketAddr = "10.77.0.1:40000".parse().unwrap();
    let make = |_, local| {
        Ok(NetworkSocket {
            network: network.clone(),
            local,
        })
    };
    let mut server =
        netcode_std::Server::with_sockets(server_address, None::<&str>, config(), make).unwrap();
    // Tokens issued as of the first second the restart rule admits, rather
    // than a wait for it (`start` would wait): the test is not about it.
    let admitted_from = server.start_nowait(2).unwrap();
    let mut token = netcode_std::ConnectTokenBuilder::new(PROTOCOL_ID, &key(), 3)
        .server_addresses([server_address])
        .user_data(&user_data(3))
        .timeout_seconds(5)
        .issued_at(admitted_from)
        .generate()
        .unwrap();

    let mut endpoint = Endpoint {
        network: network.clone(),
        me: "10.77.0.2:50000".parse().unwrap(),
        sent: 0,
        received: 0,
        client: std::ptr::null_mut(),
    };
    let net: *mut Endpoint = &raw mut endpoint;
    let config = netcode_client_config_t {
        override_send_and_receive: 1,
        send_packet_override: Some(send_override),
        receive_packet_override: Some(receive_override),
        callback_context: net.cast::<c_void>(),
        ..Default::default()
    };
    let epoch = Instant::now();
    let _settings = capture_log();
    // SAFETY: the endpoint outlives the client; every pointer passed is
    // valid for its call. The callbacks reach `endpoint` only during calls
    // into the client, while the test does not touch it.
    unsafe {
        let client =
            create_client(|| netcode_client_create(c"10.77.0.2:50000".as_ptr(), &config, 0.0));
        assert!(!client.is_null());
        assert_eq!(
            netcode_client_get_port(client),
            0,
            "no socket, as the reference"
        );
        netcode_client_connect(client, token.as_mut_ptr());
        run_until("the override client connected", epoch, |now| {
            netcode_client_update(client, now);
            server.update(now);
            netcode_client_state(client) == NETCODE_CLIENT_STATE_CONNECTED
        });
        netcode_client_send_packet(client, b"over the callbacks".as_ptr(), 18);
        server.update(seconds(epoch));
        let packet = server
            .receive_packet(0)
            .expect("the payload reached the server");
        assert_eq!(packet.data(), b"over the callbacks");
        server.send_packet(0, b"and back").unwrap();
        netcode_client_update(client, seconds(epoch));
        let (mut bytes, mut sequence) = (0, 0);
        let packet = netcode_client_receive_packet(client, &mut bytes, &mut sequence);
        assert_eq!(
            std::slice::from_raw_parts(packet, bytes as usize),
            b"and back"
        );
        netcode_client_free_packet(client, packet.cast());

        // A call back into the client from its send callback is refused.
        (*net).client = client;
        netcode_client_send_packet(client, b"x".as_ptr(), 1);
        (*net).client = std::ptr::null_mut();

        let sent_before = (*net).sent;
        netcode_client_destroy(client);
        assert!(
            (*net).sent >= sent_before + 10,
            "destroy sent the disconnect packets through the callback"
        );
    }
    assert!(endpoint.received > 0);
    let lines = netcode::test_log::take();
    assert!(logged(&lines, "called from inside a callback"), "{lines:?}");
    server.update(seconds(epoch));
    assert_eq!(
        server.num_connected_clients(),
        0,
        "the server heard the disconnect"
    );
}

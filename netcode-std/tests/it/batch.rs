//! Batched datagrams on real UDP: a payload leaves before `send_packet`
//! returns, unless a batch holds it until the batch ends; a batch to many
//! clients takes one send call per 32 datagrams, and a socket full of
//! datagrams is read in as few calls. Also: which address a server binds.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::{Duration, Instant};

use crate::common::*;
use netcode_std::transport::BATCH_DATAGRAMS;
use netcode_std::{BindMode, Client, Server};

#[test]
fn a_payload_leaves_at_once_unless_a_batch_holds_it() {
    let epoch = Instant::now();
    let mut server = Server::new("127.0.0.1:0", config()).unwrap();
    let admitted = start_nowait(&mut server, 2);
    let mut client = Client::new("127.0.0.1:0").unwrap();
    client
        .connect(&admitted.token(1, &[server.public_address()]))
        .unwrap();
    connect_all(epoch, &mut server, &mut [&mut client]);
    let slot = client.client_index();
    // Let the handshake's last keep-alive land, then read everything.
    std::thread::sleep(Duration::from_millis(20));
    client.update(seconds(epoch));
    assert!(!client.wait(Duration::from_millis(1)), "nothing waiting");

    server.send_packet(slot, b"now").unwrap();
    assert!(
        client.wait(Duration::from_secs(2)),
        "sent before send_packet returned"
    );
    client.update(seconds(epoch));
    assert_eq!(client.receive_packet().unwrap().data(), b"now");

    let mut batch = server.batch();
    batch.send_packet(slot, b"later").unwrap();
    assert!(
        !client.wait(Duration::from_millis(100)),
        "held while the batch lives"
    );
    drop(batch);
    assert!(client.wait(Duration::from_secs(2)), "sent when it ended");
    client.update(seconds(epoch));
    assert_eq!(client.receive_packet().unwrap().data(), b"later");
}

#[test]
fn forty_clients_are_answered_in_two_send_calls_and_read_in_two() {
    let epoch = Instant::now();
    let mut server = Server::new("127.0.0.1:0", config()).unwrap();
    let admitted = start_nowait(&mut server, 40);
    let mut clients: Vec<Client> = (0..40)
        .map(|_| Client::new("127.0.0.1:0").unwrap())
        .collect();
    for (i, client) in clients.iter_mut().enumerate() {
        client
            .connect(&admitted.token(i as u64 + 1, &[server.public_address()]))
            .unwrap();
    }
    let mut refs: Vec<&mut Client> = clients.iter_mut().collect();
    connect_all(epoch, &mut server, &mut refs);
    std::thread::sleep(Duration::from_millis(20));
    server.update(seconds(epoch));

    for client in clients.iter_mut() {
        client.send_packet(b"up").unwrap();
    }
    std::thread::sleep(Duration::from_millis(50));
    let before = server.transport_stats();
    server.drain_socket(seconds(epoch), netcode_std::Family::V4);
    let after = server.transport_stats();
    assert_eq!(after.datagrams_received - before.datagrams_received, 40);
    assert_eq!(
        after.receive_calls - before.receive_calls,
        40usize.div_ceil(BATCH_DATAGRAMS) as u64,
        "a short batch ends the read without another call"
    );
    // The update of the same turn does not read the socket the drain just
    // emptied; the next one does.
    let calls = |server: &Server| server.transport_stats().receive_calls;
    let before = calls(&server);
    server.update(seconds(epoch));
    assert_eq!(calls(&server), before, "no read right after a drain");
    server.update(seconds(epoch));
    assert_eq!(calls(&server), before + 1, "read again the turn after");

    // Every client has now confirmed its slot: one datagram each.
    let before = server.transport_stats();
    let mut batch = server.batch();
    for slot in 0..40 {
        batch.send_packet(slot, &pattern(100, slot as u64)).unwrap();
    }
    drop(batch);
    let after = server.transport_stats();
    assert_eq!(after.datagrams_sent - before.datagrams_sent, 40);
    assert_eq!(
        after.send_calls - before.send_calls,
        40usize.div_ceil(BATCH_DATAGRAMS) as u64
    );
}

#[test]
fn a_server_binds_the_unspecified_address_unless_asked_for_the_exact_one() {
    let mut hosts = vec![("127.0.0.1:0", IpAddr::V4(Ipv4Addr::UNSPECIFIED))];
    if ipv6_available(module_path!()) {
        hosts.push(("[::1]:0", IpAddr::V6(Ipv6Addr::UNSPECIFIED)));
    }
    for (host, unspecified) in hosts {
        let server = Server::new(host, config()).unwrap();
        assert_eq!(server.local_addr().ip(), unspecified, "{host}");
        let mut exact = config();
        exact.bind_mode = BindMode::Exact;
        let server = Server::new(host, exact).unwrap();
        assert_eq!(server.local_addr().ip(), server.public_address().ip());
        assert!(server.local_addr().ip().is_loopback());
        assert_eq!(server.local_addr().port(), server.public_address().port());
    }
}

//! `wait` blocks until a datagram arrives or the core's next deadline,
//! instead of spinning.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::common::*;
use netcode_std::{Client, ClientState, Server};

fn assert_send<T: Send>() {}

#[test]
fn server_and_client_can_move_to_another_thread() {
    assert_send::<Server>();
    assert_send::<Client>();
}

#[test]
fn idle_server_sleeps_for_max() {
    let mut server = Server::new("127.0.0.1:0", config()).unwrap();
    start_nowait(&mut server, 4);
    server.update(0.0);
    let start = Instant::now();
    assert!(!server.wait(Duration::from_millis(50)));
    let slept = start.elapsed();
    assert!(slept >= Duration::from_millis(40), "{slept:?}");
    assert!(slept < Duration::from_secs(2), "{slept:?}");
}

#[test]
fn dual_stack_server_wakes_for_either_family() {
    if !ipv6_available(module_path!()) {
        return;
    }
    let mut server = Server::new_dual("127.0.0.1:0", "[::1]:0", config()).unwrap();
    start_nowait(&mut server, 4);
    server.update(0.0);
    let start = Instant::now();
    assert!(!server.wait(Duration::from_millis(30)));
    assert!(start.elapsed() >= Duration::from_millis(25));
    let sender = std::net::UdpSocket::bind("[::1]:0").unwrap();
    sender
        .send_to(b"x", server.secondary_address().unwrap())
        .unwrap();
    let start = Instant::now();
    assert!(server.wait(Duration::from_secs(5)));
    assert!(start.elapsed() < Duration::from_secs(1));
}

#[test]
fn server_wakes_on_a_connection_request() {
    let epoch = Instant::now();
    let mut server = Server::new("127.0.0.1:0", config()).unwrap();
    let admitted = start_nowait(&mut server, 4);
    server.update(seconds(epoch));
    let mut client = Client::new("127.0.0.1:0").unwrap();
    client
        .connect(&admitted.token(1, &[server.public_address()]))
        .unwrap();
    client.update(seconds(epoch)); // the first request leaves now
    let start = Instant::now();
    assert!(server.wait(Duration::from_secs(5)));
    assert!(start.elapsed() < Duration::from_secs(1));
}

/// A server thread and a client, both sleeping in `wait` between updates,
/// connect and exchange payloads; the connected client wakes for its next
/// keep-alive well before a long `max`.
#[test]
fn deadline_driven_loops_connect_and_exchange() {
    let epoch = Instant::now();
    let mut server = Server::new("127.0.0.1:0", config()).unwrap();
    let admitted = start_nowait(&mut server, 4);
    let address = server.public_address();
    let stop = Arc::new(AtomicBool::new(false));
    let server_thread = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut echoed = 0;
            while !stop.load(Ordering::Relaxed) {
                server.update(seconds(epoch));
                for slot in 0..server.max_clients() {
                    while let Some(packet) = server.receive_packet(slot) {
                        server.send_packet(slot, packet.data()).unwrap();
                        server.free_packet(packet);
                        echoed += 1;
                    }
                }
                server.wait(Duration::from_millis(50));
                assert!(epoch.elapsed() < DEADLINE, "server loop ran too long");
            }
            echoed
        })
    };

    let mut client = Client::new("127.0.0.1:0").unwrap();
    client.connect(&admitted.token(1, &[address])).unwrap();
    let start = Instant::now();
    let mut echoes = 0;
    let mut sent = false;
    while echoes == 0 {
        assert!(start.elapsed() < DEADLINE, "no echo in time");
        client.update(seconds(epoch));
        if client.state() == ClientState::Connected && !sent {
            client.send_packet(b"echo me").unwrap();
            sent = true;
        }
        while let Some(packet) = client.receive_packet() {
            assert_eq!(packet.data(), b"echo me");
            echoes += 1;
        }
        client.wait(Duration::from_secs(1));
    }
    assert!(start.elapsed() < Duration::from_secs(2));

    // Connected and idle: the next keep-alive is due within 100 ms.
    client.update(seconds(epoch));
    let before = Instant::now();
    client.wait(Duration::from_secs(5));
    assert!(before.elapsed() < Duration::from_millis(500));

    stop.store(true, Ordering::Relaxed);
    assert_eq!(server_thread.join().unwrap(), 1);
}

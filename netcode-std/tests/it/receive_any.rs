//! `Server::receive_any`: the payloads of every slot, a payload per client
//! in turn, visiting only the slots that hold payloads; beside the C-style
//! per-slot `receive_packet`, which it never duplicates or loses.

use std::time::Instant;

use crate::common::*;
use netcode_std::{Client, Server};

#[test]
fn receive_any_takes_turns_among_the_slots_with_payloads() {
    const CLIENTS: usize = 4;
    let epoch = Instant::now();
    let mut server = Server::new("127.0.0.1:0", config()).unwrap();
    let admitted = start_nowait(&mut server, 16);
    let address = server.public_address();
    let mut clients: Vec<Client> = (0..CLIENTS)
        .map(|_| Client::new("127.0.0.1:0").unwrap())
        .collect();
    for (i, client) in clients.iter_mut().enumerate() {
        client
            .connect(&admitted.token(i as u64 + 1, &[address]))
            .unwrap();
    }
    let mut all: Vec<&mut Client> = clients.iter_mut().collect();
    connect_all(epoch, &mut server, &mut all);

    // Clients 0 and 2 send three payloads each, client 3 one; client 1
    // sends nothing.
    let sends = [3u8, 0, 3, 1];
    for (i, client) in clients.iter_mut().enumerate() {
        for n in 0..sends[i] {
            client.send_packet(&[i as u8, n]).unwrap();
        }
    }
    let total: usize = sends.iter().map(|&n| usize::from(n)).sum();
    // Every payload arrives before the server reads its socket, so all of
    // them wait in their queues at once.
    std::thread::sleep(std::time::Duration::from_millis(100));
    server.update(seconds(epoch));
    let mut got = Vec::new();
    while let Some((slot, packet)) = server.receive_any() {
        let id = server.client_id(slot).unwrap();
        assert_eq!(packet.data()[0] as u64, id - 1, "the slot's own client's");
        got.push((packet.data()[0], packet.data()[1]));
        server.free_packet(packet);
    }
    assert_eq!(got.len(), total, "every payload, once");
    for client in 0..CLIENTS as u8 {
        let mine: Vec<u8> = got
            .iter()
            .filter(|(c, _)| *c == client)
            .map(|p| p.1)
            .collect();
        assert_eq!(
            mine,
            (0..sends[usize::from(client)]).collect::<Vec<_>>(),
            "in order"
        );
    }
    // Taking turns, a payload each: the three clients with payloads, then
    // the two with more, then again those two.
    let clients_of = |range: std::ops::Range<usize>| {
        let mut c: Vec<u8> = got[range].iter().map(|p| p.0).collect();
        c.sort_unstable();
        c
    };
    assert_eq!(clients_of(0..3), [0, 2, 3], "{got:?}");
    assert_eq!(clients_of(3..5), [0, 2], "{got:?}");
    assert_eq!(clients_of(5..7), [0, 2], "{got:?}");

    // Mixed with the per-slot call: a payload taken by `receive_packet` is
    // not returned again, and the rest still come through `receive_any`.
    clients[1].send_packet(&[1, 0]).unwrap();
    clients[1].send_packet(&[1, 1]).unwrap();
    let slot = (0..16).find(|&s| server.client_id(s) == Some(2)).unwrap();
    let mut first = None;
    run_until("client 1's first payload", epoch, |now| {
        server.update(now);
        first = server.receive_packet(slot);
        first.is_some()
    });
    assert_eq!(first.unwrap().data(), &[1, 0]);
    let mut rest = None;
    run_until("client 1's second payload", epoch, |now| {
        server.update(now);
        rest = server.receive_any();
        rest.is_some()
    });
    let (from, packet) = rest.unwrap();
    assert_eq!((from, packet.data()), (slot, &[1u8, 1][..]));
    assert!(server.receive_any().is_none());
}

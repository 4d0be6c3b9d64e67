//! What an attacker or a bad network can send: replays, bit flips, floods
//! of garbage and invalid requests, spoofed sources, total loss. Nothing
//! crashes, nothing corrupts a session, nothing takes a slot, and the server
//! never answers with more bytes than it received.

use std::net::SocketAddr;
use std::time::Duration;

use netcode_proto::client::ClientState;
use netcode_proto::io::SendFn;
use netcode_proto::packet::PacketError;
use netcode_proto::sim::SimConfig;
use netcode_proto::sim::World;
use netcode_proto::sim::fixtures::*;
use netcode_proto::stats::DropReason;

/// A world with `n` connected clients, each having exchanged a few payloads,
/// and every datagram of the session captured.
fn connected_world(seed: u64, n: usize) -> World {
    let mut w = World::new(perfect(), seed, n, n);
    w.capture = true;
    for i in 0..n {
        let c = w.add_client(&format!("10.1.{}.{}:4000", i / 250, i % 250 + 1));
        let token = w.token(1000 + i as u64);
        w.connect(c, &token);
    }
    assert!(w.run_until(50, |w| (0..n).all(|c| w.state(c) == ClientState::Connected)));
    for frame in 0..10 {
        for c in 0..n {
            let index = w.clients[c].client.client_index() as usize;
            w.client_send(c, &pattern(100, c + frame));
            w.server_send(0, index, &pattern(200, c + frame));
        }
        w.step(FRAME);
    }
    w.capture = false;
    w
}

/// What an observer can see of the world's sessions.
fn snapshot(w: &World) -> Vec<(ClientState, u32, Option<u64>, usize)> {
    w.clients
        .iter()
        .map(|p| {
            let i = p.client.client_index() as usize;
            (
                p.client.state(),
                p.client.client_index(),
                w.server(0).client_id(i),
                w.server(0).num_connected_clients(),
            )
        })
        .collect()
}

#[test]
fn every_captured_packet_replayed_changes_nothing() {
    let mut w = connected_world(40, 4);
    let captured = std::mem::take(&mut w.captured);
    let before = snapshot(&w);
    let events = (
        w.servers[0].events.len(),
        w.clients.iter().map(|p| p.events.len()).sum::<usize>(),
    );
    let replay_drops = |w: &World| {
        w.server(0)
            .stats()
            .dropped(DropReason::Packet(PacketError::Replayed))
            + w.clients
                .iter()
                .map(|p| {
                    p.client
                        .stats()
                        .dropped(DropReason::Packet(PacketError::Replayed))
                })
                .sum::<u64>()
    };
    let replays_before = replay_drops(&w);
    let mut protected = 0;
    for (from, to, bytes) in &captured {
        let mut copy = bytes.clone();
        assert!(
            !w.deliver(*from, *to, &mut copy),
            "a replay delivered a payload"
        );
        if bytes[0] & 0x0f >= 4 {
            protected += 1;
        }
    }
    assert_eq!(snapshot(&w), before);
    assert_eq!(
        (
            w.servers[0].events.len(),
            w.clients.iter().map(|p| p.events.len()).sum::<usize>()
        ),
        events,
        "no connect, disconnect or state change"
    );
    assert_eq!(
        replay_drops(&w) - replays_before,
        protected,
        "each keep-alive, payload and disconnect dropped as a replay"
    );
    assert!(protected > 20);
}

#[test]
fn every_single_bit_flip_of_captured_packets_is_dropped_without_effect() {
    let mut w = connected_world(41, 2);
    let captured = std::mem::take(&mut w.captured);
    let before = snapshot(&w);
    let drops_before = w.server(0).stats().dropped_total()
        + w.clients
            .iter()
            .map(|p| p.client.stats().dropped_total())
            .sum::<u64>();
    let mut flips = 0u64;
    for (from, to, bytes) in &captured {
        for bit in 0..bytes.len() * 8 {
            let mut copy = bytes.clone();
            copy[bit / 8] ^= 1 << (bit % 8);
            assert!(
                !w.deliver(*from, *to, &mut copy),
                "a flipped packet delivered a payload"
            );
            flips += 1;
        }
    }
    assert_eq!(snapshot(&w), before);
    let drops_after = w.server(0).stats().dropped_total()
        + w.clients
            .iter()
            .map(|p| p.client.stats().dropped_total())
            .sum::<u64>();
    assert_eq!(
        drops_after - drops_before,
        flips,
        "every flip dropped and counted"
    );
    assert!(flips > 50_000, "{flips} flips");
    println!(
        "{flips} single-bit flips of {} captured datagrams",
        captured.len()
    );
    // The sessions still work.
    for c in 0..2 {
        let index = w.clients[c].client.client_index() as usize;
        w.client_send(c, b"still here");
        w.server_send(0, index, b"and here");
    }
    let (a, b) = (w.servers[0].received.len(), w.clients[0].received.len());
    w.step(FRAME);
    assert_eq!(w.servers[0].received.len(), a + 2);
    assert_eq!(w.clients[0].received.len(), b + 1);
}

#[test]
fn the_server_never_answers_with_more_bytes_than_it_received() {
    let mut w = World::new(lossy(), 42, 4, 2);
    // Three clients for two slots: the third is denied.
    for i in 0..3 {
        let c = w.add_client(&format!("[::]:{}", 51000 + i));
        let token = w.token(50 + i as u64);
        w.connect(c, &token);
    }
    let server = w.servers[0].address;
    let (mut answered, mut largest_answer) = (0, 0);
    for frame in 0..400 {
        w.now += FRAME;
        w.unix = UNIX_START + (w.now.since_epoch().as_secs() - 1000);
        let now = w.now;
        while let Some(mut d) = w.sim.receive_any(now) {
            if d.to != server {
                let p = w.clients.iter_mut().find(|p| p.address == d.to).unwrap();
                let mut out = w.sim.output(now, p.address, &mut p.events);
                let _ = p.client.handle(now, d.from, &mut d.bytes, &mut out);
                continue;
            }
            let received = d.bytes.len();
            // Forwards to the simulator, recording each answer's size (the
            // server's events are not needed here).
            let mut sizes = Vec::new();
            let mut out = SendFn(|to, datagram: &[u8]| {
                sizes.push(datagram.len());
                w.sim.send(now, server, to, datagram);
            });
            let _ = w.servers[0]
                .server
                .handle(now, d.from, &mut d.bytes, &mut out);
            for size in &sizes {
                assert!(*size <= received, "answered {received} bytes with {size}");
                answered += 1;
                largest_answer = largest_answer.max(*size);
            }
            assert!(sizes.len() <= 1, "one answer per datagram at most");
        }
        for p in w.clients.iter_mut() {
            let mut out = w.sim.output(now, p.address, &mut p.events);
            p.client.update(now, &mut out);
            if p.client.state() == ClientState::Connected && frame % 3 == 0 {
                let _ = p.client.send_payload(now, &pattern(10, frame), &mut out);
            }
        }
        let node = &mut w.servers[0];
        let mut out = w.sim.output(now, server, &mut node.events);
        node.server.update(now, w.unix, &mut out);
    }
    assert_eq!(w.state(0), ClientState::Connected);
    assert_eq!(w.state(1), ClientState::Connected);
    assert_eq!(w.state(2), ClientState::ConnectionDenied);
    assert!(
        answered >= 4,
        "challenges, keep-alives and a denial were checked"
    );
    assert_eq!(largest_answer, 333, "the largest answer is a challenge");
}

#[test]
fn a_flood_of_invalid_requests_takes_nothing_from_connected_clients() {
    use netcode_proto::token::{ConnectTokenParams, generate_connect_token};
    let mut w = connected_world(43, 64);
    let before = snapshot(&w);
    let events_before = w.servers[0].events.len();
    let server = w.servers[0].address;
    let key = netcode_proto::Key::from_bytes(PRIVATE_KEY);
    let other_key = netcode_proto::Key::from_bytes([9; 32]);
    let user_data = [0u8; 256];
    let make = |w: &mut World,
                key: &netcode_proto::Key,
                protocol_id: u64,
                expire: i64,
                create_offset: i64| {
        let params = ConnectTokenParams {
            protocol_id,
            private_key: key,
            client_id: 77,
            public_addresses: &[server],
            internal_addresses: None,
            create_timestamp: (w.unix as i64 + create_offset) as u64,
            expire_seconds: expire,
            timeout_seconds: 5,
            user_data: &user_data,
        };
        let token = generate_connect_token(&params, &mut w.rng).unwrap();
        let mut request = [0u8; 1078];
        request[1..14].copy_from_slice(b"NETCODE 1.02\0");
        request[14..22].copy_from_slice(&protocol_id.to_le_bytes());
        request[22..30].copy_from_slice(&token.expire_timestamp.to_le_bytes());
        request[30..54].copy_from_slice(&token.nonce);
        request[54..].copy_from_slice(&token.private_data);
        request
    };
    let valid = make(&mut w, &key, PROTOCOL_ID, 30, 0);
    let wrong_protocol = make(&mut w, &key, PROTOCOL_ID + 1, 30, 0);
    let wrong_key = make(&mut w, &other_key, PROTOCOL_ID, 30, 0);
    let expired = make(&mut w, &key, PROTOCOL_ID, 10, -60);
    let mut wrong_version = valid;
    wrong_version[5] ^= 0x20;
    let mut bad_mac = valid;
    bad_mac[1077] ^= 1;
    // The valid token is first used by one attacker address (taking one
    // pending mapping, as a real client would); every other address is refused.
    let attacker: SocketAddr = "203.0.113.1:1000".parse().unwrap();
    let mut first = valid;
    w.deliver(attacker, server, &mut first);

    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    for i in 0..100_000u32 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let from: SocketAddr = format!(
            "198.51.{}.{}:{}",
            (state >> 8) as u8,
            state as u8,
            1024 + (state >> 16) % 60000
        )
        .parse()
        .unwrap();
        let mut datagram: Vec<u8> = match i % 7 {
            0 => (0..(state % 1300) as usize)
                .map(|j| (state >> (j % 56)) as u8)
                .collect(),
            1 => wrong_version.to_vec(),
            2 => wrong_protocol.to_vec(),
            3 => expired.to_vec(),
            4 => bad_mac.to_vec(),
            5 => wrong_key.to_vec(),
            _ => valid.to_vec(),
        };
        assert!(!w.deliver(from, server, &mut datagram));
        if i % 10_000 == 0 {
            w.step(Duration::from_millis(1));
        }
    }
    w.step(FRAME);
    assert_eq!(snapshot(&w), before, "no client dropped, no slot taken");
    assert_eq!(
        w.servers[0].events.len(),
        events_before,
        "no connect or disconnect"
    );
    let s = w.server(0).stats();
    let count = |e: PacketError| s.dropped(DropReason::Packet(e));
    assert!(count(PacketError::VersionMismatch) >= 14_000);
    assert!(count(PacketError::ProtocolMismatch) >= 14_000);
    assert!(count(PacketError::TokenExpired) >= 14_000);
    assert!(
        count(PacketError::DecryptFailed) >= 28_000,
        "bad mac and wrong key"
    );
    assert!(
        s.dropped(DropReason::TokenAlreadyUsed) >= 14_000,
        "valid token from other addresses"
    );
    assert!(
        count(PacketError::NoKey)
            + count(PacketError::TooSmall)
            + count(PacketError::RequestWrongSize)
            > 10_000
    );
    // Every client still exchanges.
    for c in 0..64 {
        w.client_send(c, b"after the flood");
    }
    let got = w.servers[0].received.len();
    w.step(FRAME);
    assert_eq!(w.servers[0].received.len(), got + 64);
}

#[test]
fn spoofed_sources_cannot_inject_or_hijack() {
    let mut w = connected_world(44, 2);
    let captured = std::mem::take(&mut w.captured);
    let before = snapshot(&w);
    let victim = w.clients[0].address;
    let server = w.servers[0].address;
    // Client 1's genuine packets, sent again with client 0's source address:
    // they were sealed with client 1's key, so they cannot open as client 0's.
    let mut tried = 0;
    for (from, to, bytes) in &captured {
        if *from == w.clients[1].address && *to == server && bytes[0] & 0x0f >= 4 {
            let mut copy = bytes.clone();
            assert!(!w.deliver(victim, server, &mut copy));
            tried += 1;
        }
    }
    assert!(tried > 0);
    // Client 0's genuine packets from a stranger's address: no mapping there.
    let stranger: SocketAddr = "192.0.2.99:5000".parse().unwrap();
    for (from, to, bytes) in &captured {
        if *from == victim && *to == server && bytes[0] != 0 {
            let mut copy = bytes.clone();
            assert!(!w.deliver(stranger, server, &mut copy));
        }
    }
    // Packets to a client from anyone but its server are ignored unread.
    for (from, to, bytes) in &captured {
        if *from == server && *to == victim {
            let mut copy = bytes.clone();
            assert!(!w.deliver(stranger, victim, &mut copy));
        }
    }
    assert_eq!(snapshot(&w), before);
    let s = w.server(0).stats();
    let spoofed = s.dropped(DropReason::Packet(PacketError::DecryptFailed))
        + s.dropped(DropReason::Packet(PacketError::Replayed));
    assert!(
        spoofed >= tried,
        "each spoofed packet failed to open or was already seen"
    );
    assert!(s.dropped(DropReason::Packet(PacketError::NoKey)) > 0);
    assert!(
        w.clients[0]
            .client
            .stats()
            .dropped(DropReason::NotFromServer)
            > 0
    );
}

#[test]
fn total_loss_ends_in_the_right_timeouts_on_both_sides() {
    let mut w = connected_world(45, 1);
    let server = w.servers[0].address;
    w.sim.set_config(SimConfig {
        loss_percent: 100.0,
        ..SimConfig::default()
    });
    assert!(
        w.run_until(200, |w| w.state(0) == ClientState::ConnectionTimedOut
            && !w.server(0).client_connected(0))
    );
    assert_eq!(
        w.server(0).disconnect_reason(0),
        netcode_proto::server::DisconnectReason::TimedOut
    );
    // A new attempt during total loss times out requesting.
    let token = w.token_for(5, &[server], 60, 3);
    w.connect(0, &token);
    assert!(w.run_until(100, |w| w.state(0)
        == ClientState::ConnectionRequestTimedOut));
}

/// Records every drop the core reports through `Output::dropped`, and
/// sends nothing.
#[derive(Default)]
struct DropLog {
    drops: Vec<netcode_proto::stats::DroppedDatagram>,
}

impl<E> netcode_proto::io::Output<E> for DropLog {
    fn send(&mut self, _to: SocketAddr, _datagram: &[u8]) {}

    fn event(&mut self, _event: E) {}

    fn dropped(&mut self, dropped: netcode_proto::stats::DroppedDatagram) {
        self.drops.push(dropped);
    }
}

#[test]
fn every_drop_is_reported_to_the_output_with_its_sender_type_and_reason() {
    let mut w = connected_world(7, 2);
    let captured = w.captured.clone();
    let server_before = w.server(0).stats().clone();
    let client_before = w.clients[0].client.stats().clone();
    let (mut server_log, mut client_log) = (DropLog::default(), DropLog::default());
    let mut sent_to_server = 0;
    let mut sent_to_client = 0;
    for (i, (from, to, bytes)) in captured.iter().enumerate() {
        let mut bytes = bytes.clone();
        // Replays, flipped bytes and truncations, in turn.
        match i % 3 {
            0 => {}
            1 => *bytes.last_mut().unwrap() ^= 0x40,
            _ => bytes.truncate(bytes.len() / 2),
        }
        let now = w.now;
        if *to == w.servers[0].address {
            let _ = w
                .server_mut(0)
                .handle(now, *from, &mut bytes, &mut server_log);
            sent_to_server += 1;
        } else if *to == w.clients[0].address {
            let _ = w.clients[0]
                .client
                .handle(now, *from, &mut bytes, &mut client_log);
            sent_to_client += 1;
        }
    }
    assert!(sent_to_server > 20 && sent_to_client > 10);
    for (log, before, after, inputs) in [
        (
            &server_log,
            &server_before,
            w.server(0).stats(),
            sent_to_server,
        ),
        (
            &client_log,
            &client_before,
            w.clients[0].client.stats(),
            sent_to_client,
        ),
    ] {
        assert_eq!(
            log.drops.len(),
            inputs,
            "every datagram here is dropped once"
        );
        for reason in (0..DropReason::COUNT).filter_map(DropReason::from_index) {
            let reported = log.drops.iter().filter(|d| d.reason == reason).count() as u64;
            assert_eq!(
                reported,
                after.dropped(reason) - before.dropped(reason),
                "{reason}: reported and counted drops differ"
            );
        }
    }
    // Each report names the datagram's sender and the type its prefix says.
    let mut server_inputs = captured
        .iter()
        .filter(|(_, to, _)| *to == w.servers[0].address);
    for drop in &server_log.drops {
        let (from, _, bytes) = server_inputs.next().unwrap();
        assert_eq!(drop.from, *from);
        assert_eq!(
            drop.packet_type,
            netcode_proto::PacketType::from_u8(bytes[0] & 0x0f)
        );
    }
    assert!(
        server_log
            .drops
            .iter()
            .any(|d| d.reason == DropReason::Packet(PacketError::Replayed))
    );
}

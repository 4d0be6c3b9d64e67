//! Client and server scenarios on the deterministic simulator: the
//! reference's test list and the protocol's edge cases. No sockets, no
//! sleeps: simulated time only.

use std::net::SocketAddr;
use std::time::Duration;

use netcode_proto::client::{ClientEvent, ClientState};
use netcode_proto::packet::{PacketError, PacketType};
use netcode_proto::server::{DisconnectReason, ServerEvent};
use netcode_proto::sim::SimConfig;
use netcode_proto::sim::World;
use netcode_proto::sim::fixtures::*;
use netcode_proto::stats::DropReason;

fn connected(w: &World, peer: usize) -> bool {
    w.state(peer) == ClientState::Connected
}

fn exchange(w: &mut World, peer: usize, index: usize, count: usize, len: usize) {
    let (sent_before, got_before) = (w.servers[0].received.len(), w.clients[peer].received.len());
    for i in 0..count {
        w.client_send(peer, &pattern(len, i));
        w.server_send(0, index, &pattern(len, i + 1000));
        w.step(FRAME);
    }
    assert!(w.run_until(100, |w| w.servers[0].received.len()
        >= sent_before + count / 2
        && w.clients[peer].received.len() >= got_before + count / 2));
}

#[test]
fn connect_and_exchange_payloads_of_1_and_1200_bytes() {
    let mut w = World::new(lossy(), 1, 1, 1);
    let c = w.add_client("[::]:50000");
    let token = w.token(1);
    w.connect(c, &token);
    assert!(
        w.run_until(300, |w| connected(w, c)),
        "state {:?}",
        w.state(c)
    );
    assert_eq!(w.clients[c].client.client_index(), 0);
    assert_eq!(w.clients[c].client.max_clients(), 1);
    assert_eq!(w.server(0).client_id(0), Some(1));
    assert_eq!(w.server(0).client_user_data(0), Some(&user_data_for(1)));
    for len in [1, 1200] {
        let before = (w.servers[0].received.len(), w.clients[c].received.len());
        for i in 0..20 {
            w.client_send(c, &pattern(len, i));
            w.server_send(0, 0, &pattern(len, i + 7));
            w.step(FRAME);
        }
        assert!(
            w.run_until(50, |w| w.servers[0].received.len() >= before.0 + 10
                && w.clients[c].received.len() >= before.1 + 10)
        );
    }
    // Every payload that arrived is intact: it is one of the patterns sent.
    for (index, _, data) in &w.servers[0].received {
        assert_eq!(*index, 0);
        assert!(
            (0..20).any(|i| *data == pattern(data.len(), i)),
            "corrupt payload"
        );
        assert!(data.len() == 1 || data.len() == 1200);
    }
    for (_, data) in &w.clients[c].received {
        assert!(
            (0..20).any(|i| *data == pattern(data.len(), i + 7)),
            "corrupt payload"
        );
    }
    w.server_disconnect(0, 0);
    assert!(w.run_until(50, |w| !w.state(c).is_active()));
}

#[test]
fn many_clients_connect_256() {
    let mut w = World::new(perfect(), 2, 256, 256);
    for i in 0..256u64 {
        let c = w.add_client(&format!("10.0.{}.{}:5000", i / 200, i % 200 + 1));
        let token = w.token(i + 1);
        w.connect(c, &token);
    }
    assert!(w.run_until(50, |w| (0..256).all(|c| connected(w, c))));
    assert_eq!(w.server(0).num_connected_clients(), 256);
    let mut indices: Vec<u32> = w.clients.iter().map(|p| p.client.client_index()).collect();
    indices.sort_unstable();
    assert_eq!(
        indices,
        (0..256).collect::<Vec<_>>(),
        "every client in its own slot"
    );
    for c in 0..256 {
        w.client_send(c, &pattern(100, c));
    }
    w.step(FRAME);
    assert_eq!(w.servers[0].received.len(), 256);
}

#[test]
fn many_clients_connect_4096_on_a_large_server() {
    let mut w = World::new(perfect(), 3, 4096, 4096);
    for i in 0..4096u64 {
        let c = w.add_client(&format!("10.{}.{}.1:6000", i / 250, i % 250));
        let token = w.token(i + 1);
        w.connect(c, &token);
    }
    assert!(w.run_until(10, |w| w.server(0).num_connected_clients() == 4096));
    assert!(w.run_until(5, |w| (0..4096).all(|c| connected(w, c))));
    w.client_send(4095, b"last");
    w.step(FRAME);
    assert!(w.servers[0].received.iter().any(|(_, _, d)| d == b"last"));
}

#[test]
fn server_full_gives_connection_denied() {
    let mut w = World::new(lossy(), 4, 1, 1);
    let a = w.add_client("[::]:50000");
    let b = w.add_client("[::]:50001");
    let ta = w.token(1);
    w.connect(a, &ta);
    assert!(w.run_until(300, |w| connected(w, a)));
    let tb = w.token(2);
    w.connect(b, &tb);
    assert!(w.run_until(300, |w| w.state(b) == ClientState::ConnectionDenied));
    assert!(connected(&w, a), "the first client stays");
    assert_eq!(w.server(0).num_connected_clients(), 1);
    assert!(w.server(0).stats().sent(PacketType::Denied) >= 1);
}

#[test]
fn fallback_across_several_server_addresses() {
    let mut w = World::new(lossy(), 5, 1, 1);
    let c = w.add_client("[::]:50000");
    let addresses: Vec<SocketAddr> = ["10.10.10.10:1000", "100.100.100.100:50000", "[::1]:40000"]
        .map(|a| a.parse().unwrap())
        .to_vec();
    // Simulated unix time runs with the simulation, so the token must
    // outlive two 15 s timeouts on the server's clock too.
    let token = w.token_for(1, &addresses, 60, 15);
    w.connect(c, &token);
    assert!(
        w.run_until(1000, |w| connected(w, c)),
        "state {:?}",
        w.state(c)
    );
    assert_eq!(w.clients[c].client.server_address(), Some(addresses[2]));
    let moved: Vec<_> = w.clients[c]
        .events
        .iter()
        .filter(|e| {
            matches!(
                e,
                ClientEvent::StateChanged {
                    from: ClientState::SendingConnectionRequest,
                    to: ClientState::SendingConnectionRequest
                }
            )
        })
        .collect();
    assert_eq!(
        moved.len(),
        2,
        "timed out on two addresses before the third"
    );
    exchange(&mut w, c, 0, 10, 100);
}

#[test]
fn connect_token_expired() {
    let mut w = World::new(perfect(), 6, 1, 1);
    let c = w.add_client("[::]:50000");
    let server = w.servers[0].address;
    let token = w.token_for(1, &[server], 0, 15);
    w.connect(c, &token);
    w.step(FRAME);
    assert_eq!(w.state(c), ClientState::ConnectTokenExpired);
}

#[test]
fn invalid_connect_token() {
    let mut w = World::new(perfect(), 7, 1, 1);
    let c = w.add_client("[::]:50000");
    let garbage: Vec<u8> = (0..2048u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    w.connect(c, &garbage);
    assert_eq!(w.state(c), ClientState::InvalidConnectToken);
    assert_eq!(
        w.clients[c].events.last(),
        Some(&ClientEvent::StateChanged {
            from: ClientState::Disconnected,
            to: ClientState::InvalidConnectToken,
        })
    );
}

#[test]
fn connection_request_timeout() {
    let mut w = World::new(perfect(), 8, 1, 1);
    let c = w.add_client("[::]:50000");
    let server = w.servers[0].address;
    w.filter = Some(Box::new(move |_, to, bytes| {
        !(to == server && bytes[0] == 0)
    }));
    let token = w.token_for(1, &[server], 60, 5);
    w.connect(c, &token);
    assert!(w.run_until(200, |w| w.state(c)
        == ClientState::ConnectionRequestTimedOut));
    // Sends wait until strictly more than 0.1 s has passed, so at frames of
    // exactly 0.1 s a request goes out every other frame: 5 s gives ~25.
    assert!(w.clients[c].client.stats().sent(PacketType::Request) >= 24);
}

#[test]
fn connection_response_timeout() {
    let mut w = World::new(perfect(), 9, 1, 1);
    let c = w.add_client("[::]:50000");
    let server = w.servers[0].address;
    w.filter = Some(Box::new(move |_, to, bytes| {
        !(to == server && bytes[0] & 0x0f == 3)
    }));
    let token = w.token_for(1, &[server], 60, 5);
    w.connect(c, &token);
    assert!(w.run_until(200, |w| w.state(c)
        == ClientState::ConnectionResponseTimedOut));
}

#[test]
fn client_side_disconnect() {
    let (mut w, c) = World::one_connected(10, 30, 15);
    w.client_disconnect(c);
    assert_eq!(w.state(c), ClientState::Disconnected);
    assert_eq!(w.clients[c].client.stats().sent(PacketType::Disconnect), 10);
    assert!(w.run_until(10, |w| !w.server(0).client_connected(0)));
    assert_eq!(
        w.server(0).disconnect_reason(0),
        DisconnectReason::ClientDisconnect
    );
    assert!(matches!(
        w.servers[0].events.last(),
        Some(ServerEvent::ClientDisconnected {
            client_index: 0,
            client_id: 1,
            reason: DisconnectReason::ClientDisconnect,
            ..
        })
    ));
}

#[test]
fn server_side_disconnect() {
    let (mut w, c) = World::one_connected(11, 30, 15);
    w.server_disconnect(0, 0);
    assert_eq!(
        w.server(0).disconnect_reason(0),
        DisconnectReason::ServerDisconnect
    );
    assert_eq!(w.server(0).stats().sent(PacketType::Disconnect), 10);
    assert!(w.run_until(10, |w| w.state(c) == ClientState::Disconnected));
}

#[test]
fn client_times_out_when_the_server_goes_silent() {
    let (mut w, c) = World::one_connected(12, 30, 5);
    w.servers[0].updating = false;
    assert!(w.run_until(100, |w| w.state(c) == ClientState::ConnectionTimedOut));
}

#[test]
fn server_times_out_a_silent_client() {
    let (mut w, c) = World::one_connected(13, 30, 5);
    assert_eq!(w.server(0).disconnect_reason(0), DisconnectReason::None);
    w.clients[c].updating = false;
    assert!(w.run_until(200, |w| !w.server(0).client_connected(0)));
    assert_eq!(w.server(0).disconnect_reason(0), DisconnectReason::TimedOut);
}

#[test]
fn keep_alives_hold_an_idle_connection() {
    let mut w = World::new(lossy(), 14, 1, 1);
    let c = w.add_client("[::]:50000");
    let token = w.token(1);
    w.connect(c, &token);
    assert!(w.run_until(300, |w| connected(w, c)));
    for _ in 0..(15 * 10 * 5 / 4) {
        w.step(FRAME);
    }
    assert!(connected(&w, c));
    assert!(w.server(0).client_connected(0));
}

#[test]
fn reconnect_with_a_new_token_after_disconnect() {
    let (mut w, c) = World::one_connected(15, 30, 15);
    w.server_disconnect(0, 0);
    assert!(w.run_until(10, |w| w.state(c) == ClientState::Disconnected));
    let fresh = w.token(1);
    w.connect(c, &fresh);
    assert!(w.run_until(50, |w| connected(w, c)));
    assert_eq!(w.server(0).client_id(0), Some(1));
    assert_eq!(w.server(0).disconnect_reason(0), DisconnectReason::None);
    exchange(&mut w, c, 0, 4, 50);
}

#[test]
fn consumed_token_is_refused_on_reuse_from_any_address() {
    let mut w = World::new(perfect(), 16, 2, 2);
    let a = w.add_client("[::]:50000");
    let b = w.add_client("[::]:50001");
    let server = w.servers[0].address;
    let token = w.token_for(1, &[server], 60, 2);
    w.connect(a, &token);
    assert!(w.run_until(50, |w| connected(w, a)));
    w.server_disconnect(0, 0);
    assert!(w.run_until(10, |w| w.state(a) == ClientState::Disconnected));
    // Same token, same address, then from another address: both refused.
    w.connect(a, &token);
    w.connect(b, &token);
    assert!(w.run_until(100, |w| w.state(a)
        == ClientState::ConnectionRequestTimedOut
        && w.state(b) == ClientState::ConnectionRequestTimedOut));
    assert_eq!(w.server(0).num_connected_clients(), 0);
    assert!(w.server(0).stats().dropped(DropReason::TokenAlreadyUsed) >= 2);
}

#[test]
fn pending_token_is_accepted_again_only_from_its_own_address() {
    let mut w = World::new(perfect(), 17, 2, 2);
    let a = w.add_client("[::]:50000");
    let b = w.add_client("[::]:50001");
    let server = w.servers[0].address;
    // Drop every challenge to `a`, so its token stays pending.
    let a_address = w.clients[a].address;
    w.filter = Some(Box::new(move |_, to, bytes| {
        !(to == a_address && bytes[0] & 0x0f == 2)
    }));
    let token = w.token_for(1, &[server], 60, 5);
    w.connect(a, &token);
    for _ in 0..10 {
        w.step(FRAME);
    }
    let challenges = w.server(0).stats().sent(PacketType::Challenge);
    assert!(
        challenges >= 3,
        "each retry from the same address is admitted: {challenges}"
    );
    w.connect(b, &token);
    for _ in 0..10 {
        w.step(FRAME);
    }
    assert!(
        w.server(0).stats().dropped(DropReason::TokenAlreadyUsed) >= 3,
        "other address refused"
    );
    assert_ne!(w.state(b), ClientState::Connected);
    // Once the challenges get through, the original client connects.
    w.filter = None;
    assert!(w.run_until(50, |w| connected(w, a)));
}

#[test]
fn server_restart_reseeds_global_sequence_and_refuses_older_tokens() {
    let mut w = World::new(perfect(), 18, 1, 1);
    let c = w.add_client("[::]:50000");
    assert_eq!(w.server(0).global_sequence(), 1 << 63);
    let token = w.token(1);
    w.connect(c, &token);
    assert!(w.run_until(50, |w| connected(w, c)));
    assert!(w.server(0).global_sequence() > 1 << 63);
    // A token minted two seconds before the restart predates it.
    let old = w.token(2);
    for _ in 0..20 {
        w.step(FRAME);
    }
    w.start_server(0, 1);
    assert_eq!(w.server(0).global_sequence(), 1 << 63);
    assert!(w.run_until(50, |w| w.state(c) == ClientState::Disconnected
        || w.state(c) == ClientState::ConnectionTimedOut));
    w.connect(c, &old);
    assert!(w.run_until(200, |w| !w.state(c).is_active()));
    assert_eq!(w.state(c), ClientState::ConnectionRequestTimedOut);
    assert!(
        w.server(0)
            .stats()
            .dropped(DropReason::Packet(PacketError::TokenPredatesStart))
            > 0
    );
    let fresh = w.token(2);
    w.connect(c, &fresh);
    assert!(w.run_until(50, |w| connected(w, c)));
}

#[test]
fn replayed_packets_are_dropped_with_the_replay_reason() {
    let (mut w, c) = World::one_connected(19, 30, 15);
    w.capture = true;
    exchange(&mut w, c, 0, 5, 64);
    w.capture = false;
    let captured = std::mem::take(&mut w.captured);
    let (received_server, received_client) =
        (w.servers[0].received.len(), w.clients[c].received.len());
    let mut replayed = 0;
    for (from, to, bytes) in &captured {
        if bytes[0] & 0x0f < 4 {
            continue;
        }
        replayed += 1;
        w.sim.send(w.now, *from, *to, bytes);
    }
    w.step(Duration::from_millis(1));
    assert!(replayed > 10);
    assert_eq!(
        w.servers[0].received.len(),
        received_server,
        "no replayed payload delivered"
    );
    assert_eq!(w.clients[c].received.len(), received_client);
    let replays = w
        .server(0)
        .stats()
        .dropped(DropReason::Packet(PacketError::Replayed))
        + w.clients[c]
            .client
            .stats()
            .dropped(DropReason::Packet(PacketError::Replayed));
    assert_eq!(replays, replayed);
    assert!(connected(&w, c) && w.server(0).client_connected(0));
}

#[test]
fn a_client_id_already_connected_is_refused() {
    let mut w = World::new(perfect(), 20, 2, 2);
    let a = w.add_client("[::]:50000");
    let b = w.add_client("[::]:50001");
    let server = w.servers[0].address;
    let ta = w.token(7);
    w.connect(a, &ta);
    assert!(w.run_until(50, |w| connected(w, a)));
    let tb = w.token_for(7, &[server], 30, 3);
    w.connect(b, &tb);
    assert!(w.run_until(100, |w| w.state(b)
        == ClientState::ConnectionRequestTimedOut));
    assert!(
        w.server(0)
            .stats()
            .dropped(DropReason::ClientIdAlreadyConnected)
            > 0
    );
    assert_eq!(w.server(0).num_connected_clients(), 1);
}

#[test]
fn loopback_client_exchanges_beside_a_network_client() {
    let mut w = World::new(perfect(), 21, 2, 2);
    let mut events = Vec::new();
    let mut loopback = netcode_proto::client::Client::new();
    w.with_server(0, |server, _, out| {
        server.connect_loopback_client(0, 99, None, out)
    })
    .unwrap();
    let mut sink = netcode_proto::io::SendFn(|_, _: &[u8]| panic!("loopback sends nothing"));
    loopback.connect_loopback(0, 2, &mut sink).unwrap();
    events.push(loopback.state());
    assert_eq!(loopback.state(), ClientState::Connected);
    let c = w.add_client("[::]:50000");
    let token = w.token(1);
    w.connect(c, &token);
    assert!(w.run_until(50, |w| connected(w, c)));
    assert_eq!(
        w.clients[c].client.client_index(),
        1,
        "the loopback client holds slot 0"
    );
    for i in 0..10 {
        let data = pattern(300, i);
        let sent = loopback.send_payload(w.now, &data, &mut sink).unwrap();
        let netcode_proto::session::Sent::Loopback {
            client_index,
            sequence,
        } = sent
        else {
            panic!()
        };
        let now = w.now;
        let got = w
            .server_mut(0)
            .receive_loopback_payload(now, client_index, &data, sequence)
            .unwrap();
        assert_eq!((got.sequence, got.data), (i as u64, &data[..]));
        let sent = w
            .with_server(0, |server, now, out| {
                server.send_payload(now, 0, &data, out)
            })
            .unwrap();
        let netcode_proto::session::Sent::Loopback { sequence, .. } = sent else {
            panic!()
        };
        assert_eq!(
            loopback
                .receive_loopback_payload(&data, sequence)
                .unwrap()
                .data,
            &data[..]
        );
    }
    exchange(&mut w, c, 1, 10, 100);
    // A long silence times the network client out; the loopback slot stays.
    w.clients[c].updating = false;
    for _ in 0..300 {
        w.step(FRAME);
    }
    assert!(!w.server(0).client_connected(1));
    assert!(w.server(0).client_loopback(0));
    w.with_server(0, |server, _, out| server.disconnect_all_clients(out));
    assert!(
        w.server(0).client_loopback(0),
        "disconnect_all leaves loopback slots"
    );
    w.with_server(0, |server, _, out| {
        server.disconnect_loopback_client(0, out)
    })
    .unwrap();
    loopback.disconnect_loopback(&mut sink);
    assert_eq!(w.server(0).num_connected_clients(), 0);
    assert_eq!(loopback.state(), ClientState::Disconnected);
}

#[test]
fn twenty_percent_loss_with_jitter_and_duplicates_still_connects_and_exchanges() {
    let config = SimConfig {
        latency: Duration::from_millis(100),
        jitter: Duration::from_millis(80),
        loss_percent: 20.0,
        duplicate_percent: 10.0,
        ..SimConfig::default()
    };
    let mut w = World::new(config, 22, 8, 8);
    for i in 0..8 {
        let c = w.add_client(&format!("192.168.0.{}:7000", i + 1));
        let token = w.token(100 + i as u64);
        w.connect(c, &token);
    }
    assert!(w.run_until(300, |w| (0..8).all(|c| connected(w, c))));
    for c in 0..8 {
        let index = w.clients[c].client.client_index() as usize;
        exchange(&mut w, c, index, 10, 500);
    }
    assert!(w.sim.stats().lost > 0 && w.sim.stats().duplicated > 0);
}

#[test]
fn disabled_timeout_survives_long_silences() {
    let (mut w, c) = World::one_connected(23, 30, -1);
    for i in 0..10 {
        w.step(Duration::from_secs(1000));
        w.client_send(c, &pattern(10, i));
        w.server_send(0, 0, &pattern(10, i));
    }
    w.step(FRAME);
    assert!(connected(&w, c) && w.server(0).client_connected(0));
    assert!(w.servers[0].received.len() >= 10 && w.clients[c].received.len() >= 10);
}

#[test]
fn multiple_clients_across_restarts_with_2_32_and_5_slots() {
    let mut w = World::new(lossy(), 24, 32, 2);
    let mut next_id = 1;
    for slots in [2usize, 32, 5] {
        w.start_server(0, slots);
        w.clear_clients();
        w.sim.reset();
        // The restart rule refuses tokens minted in the start second (the
        // reference's test mints them at once and is admitted: its rule is
        // a second looser).
        w.step(Duration::from_secs(1));
        for i in 0..slots {
            let c = w.add_client(&format!("[::]:{}", 50000 + i));
            let token = w.token(next_id);
            next_id += 1;
            w.connect(c, &token);
        }
        assert!(
            w.run_until(500, |w| (0..slots).all(|c| connected(w, c))),
            "{slots} slots"
        );
        let mut indices: Vec<u32> = w.clients.iter().map(|p| p.client.client_index()).collect();
        indices.sort_unstable();
        assert_eq!(indices, (0..slots as u32).collect::<Vec<_>>());
        assert!(
            w.clients
                .iter()
                .all(|p| p.client.max_clients() == slots as u32)
        );
    }
}

#[test]
fn disconnect_reasons_follow_the_slot() {
    let mut w = World::new(perfect(), 25, 1, 1);
    assert_eq!(w.server(0).disconnect_reason(0), DisconnectReason::None);
    let c = w.add_client("[::]:50000");
    let server = w.servers[0].address;
    let token = w.token_for(1, &[server], 30, 3);
    w.connect(c, &token);
    assert!(w.run_until(50, |w| connected(w, c)));
    assert_eq!(w.server(0).disconnect_reason(0), DisconnectReason::None);
    w.clients[c].updating = false;
    assert!(w.run_until(200, |w| !w.server(0).client_connected(0)));
    assert_eq!(w.server(0).disconnect_reason(0), DisconnectReason::TimedOut);
    w.clients[c].updating = true;
    w.client_disconnect(c);
    let fresh = w.token(1);
    w.connect(c, &fresh);
    assert!(w.run_until(50, |w| connected(w, c)));
    assert_eq!(w.server(0).disconnect_reason(0), DisconnectReason::None);
}

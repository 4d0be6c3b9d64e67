//! Server and client lifecycle: guards on caller mistakes, the connect token
//! history filling up, replays across sessions, and driving both sides by
//! their deadlines alone.

use netcode_proto::Instant;
use std::time::Duration;

use netcode_proto::Key;
use netcode_proto::client::ClientState;
use netcode_proto::io::SendFn;
use netcode_proto::packet::{PacketError, PacketType};
use netcode_proto::seeded::SeededRng;
use netcode_proto::server::{ArrayStorage, Server, ServerConfig, ServerError};
use netcode_proto::session::SendError;
use netcode_proto::sim::World;
use netcode_proto::sim::fixtures::*;
use netcode_proto::stats::DropReason;

fn ignore() -> SendFn<impl FnMut(std::net::SocketAddr, &[u8])> {
    SendFn(|_, _: &[u8]| {})
}

#[test]
fn caller_mistakes_get_typed_errors_and_change_nothing() {
    let address = "127.0.0.1:40000".parse().unwrap();
    let config = ServerConfig::new(PROTOCOL_ID, Key::from_bytes(PRIVATE_KEY), address);
    assert_eq!(
        Server::new(config.clone(), ArrayStorage::<0>::new()).err(),
        Some(ServerError::BadStorage)
    );
    let mut server = Server::new(config, ArrayStorage::<4>::new()).unwrap();
    let mut rng = SeededRng::new(1);
    let now = Instant::ZERO;
    for bad in [0, 5, usize::MAX] {
        assert_eq!(
            server.start(now, UNIX_START, bad, &mut rng, &mut ignore()),
            Err(ServerError::InvalidMaxClients)
        );
        assert!(!server.running());
    }
    assert_eq!(
        server.send_payload(now, 0, b"x", &mut ignore()),
        Err(SendError::NotRunning)
    );
    server
        .start(now, UNIX_START, 1, &mut rng, &mut ignore())
        .unwrap();
    assert_eq!(
        server.start(now, UNIX_START, 9, &mut rng, &mut ignore()),
        Err(ServerError::InvalidMaxClients)
    );
    assert!(
        server.running() && server.max_clients() == 1,
        "a refused start changes nothing"
    );
    for index in [1, 2, 4, usize::MAX] {
        assert!(!server.client_connected(index));
        assert_eq!(server.client_id(index), None);
        assert_eq!(server.client_address(index), None);
        assert_eq!(server.client_user_data(index), None);
        assert_eq!(server.next_packet_sequence(index), None);
        assert!(!server.client_loopback(index));
        server.disconnect_client(index, &mut ignore());
        assert_eq!(
            server.send_payload(now, index, b"x", &mut ignore()),
            Err(SendError::InvalidClientIndex)
        );
        assert_eq!(
            server.connect_loopback_client(index, 1, None, &mut ignore()),
            Err(ServerError::InvalidClientIndex)
        );
    }
    assert_eq!(
        server.send_payload(now, 0, b"x", &mut ignore()),
        Err(SendError::NotConnected)
    );
    assert_eq!(
        server.send_payload(now, 0, &[], &mut ignore()),
        Err(SendError::PayloadSize)
    );
    assert_eq!(
        server.send_payload(now, 0, &[0; 1201], &mut ignore()),
        Err(SendError::PayloadSize)
    );
    assert_eq!(
        server.disconnect_loopback_client(0, &mut ignore()),
        Err(ServerError::NotLoopback)
    );
    server
        .connect_loopback_client(0, 5, None, &mut ignore())
        .unwrap();
    assert_eq!(
        server.connect_loopback_client(0, 6, None, &mut ignore()),
        Err(ServerError::SlotTaken)
    );
    assert_eq!(server.num_connected_clients(), 1);

    let mut client = netcode_proto::client::Client::new();
    assert_eq!(
        client.send_payload(now, b"x", &mut ignore()),
        Err(SendError::NotConnected)
    );
    assert!(client.connect(now, &[0; 100], &mut ignore()).is_err());
    assert_eq!(client.state(), ClientState::InvalidConnectToken);
    assert!(client.connect_loopback(3, 3, &mut ignore()).is_err());
    assert_eq!(
        client.receive_loopback_payload(b"x", 0),
        Err(SendError::NotConnected)
    );
}

#[test]
fn a_full_token_history_refuses_new_tokens_until_they_expire() {
    // One slot, 4 mappings and 8 history entries.
    let address = "[::1]:40000".parse().unwrap();
    let storage = netcode_proto::server::HeapStorage::with_tables(1, 4, 8);
    let mut w = World::with_storage(perfect(), 30, storage, 1, address);
    w.filter = Some(Box::new(|_, _, bytes| bytes[0] & 0x0f != 2)); // no challenge arrives
    for i in 0..9u64 {
        let c = w.add_client(&format!("10.0.0.{}:9000", i + 1));
        let token = w.token(100 + i);
        w.connect(c, &token);
    }
    w.step(FRAME);
    w.step(FRAME);
    let stats = w.server(0).stats();
    assert!(
        stats.sent(PacketType::Challenge) >= 4,
        "the first four got mappings"
    );
    assert!(stats.dropped(DropReason::MappingTableFull) >= 4);
    assert!(
        stats.dropped(DropReason::TokenHistoryFull) >= 1,
        "the ninth token is refused"
    );
    assert_eq!(w.server(0).token_history_capacity(), 8);
    assert_eq!(w.server(0).token_history_in_use(), 8);
    // After every entry expired (30 s tokens), a fresh token is admitted.
    w.filter = None;
    for p in w.clients.iter_mut() {
        p.updating = false;
    }
    for _ in 0..320 {
        w.step(FRAME);
    }
    assert_eq!(w.server(0).token_history_in_use(), 0, "update freed them");
    let c = w.add_client("10.0.1.1:9000");
    let token = w.token(999);
    w.connect(c, &token);
    assert!(w.run_until(30, |w| w.state(c) == ClientState::Connected));
}

#[test]
fn the_token_history_is_sized_per_server() {
    use netcode_proto::server::{HeapStorage, ServerStorage, TokenHistorySize};
    let address = "[::1]:40000".parse().unwrap();
    let size = TokenHistorySize {
        per_slot: 2,
        minimum: 3,
    };
    let storage = HeapStorage::with_token_history(2, size);
    let mut w = World::with_storage(perfect(), 35, storage, 2, address);
    assert_eq!(w.server(0).token_history_capacity(), 4);
    for i in 0..5u64 {
        let c = w.add_client(&format!("10.0.0.{}:9000", i + 1));
        let token = w.token(100 + i);
        w.connect(c, &token);
    }
    w.step(FRAME);
    w.step(FRAME);
    assert_eq!(w.server(0).token_history_in_use(), 4);
    assert!(w.server(0).stats().dropped(DropReason::TokenHistoryFull) >= 1);
    assert_eq!(
        HeapStorage::with_token_history(1000, size)
            .tables()
            .tokens
            .len(),
        2000
    );
}

#[test]
fn a_small_server_admits_many_tokens_within_one_lifetime() {
    // Four slots, but the reference's 2048-entry history: 40 clients come
    // and go within one 30 s token lifetime and every one connects (a 4-slot
    // table would have held only 32).
    let mut w = World::new(perfect(), 34, 4, 4);
    assert!(w.server(0).capacity() == 4);
    let c = w.add_client("[::]:50000");
    for i in 0..40 {
        let token = w.token(1 + i);
        w.connect(c, &token);
        assert!(
            w.run_until(20, |w| w.state(c) == ClientState::Connected),
            "connection {i}"
        );
        w.client_disconnect(c);
        w.step(FRAME);
    }
    assert!(
        w.now.since_epoch().as_secs_f64() - 1000.0 < 30.0,
        "all within one token lifetime"
    );
    assert_eq!(w.server(0).stats().dropped(DropReason::TokenHistoryFull), 0);
}

#[test]
fn a_zero_token_lifetime_keeps_the_restart_rule_on() {
    let address = "127.0.0.1:40000".parse().unwrap();
    let mut config = ServerConfig::new(PROTOCOL_ID, Key::from_bytes(PRIVATE_KEY), address);
    config.max_connect_token_lifetime = 0;
    assert_eq!(config.effective_max_connect_token_lifetime(), 30);
    config.max_connect_token_lifetime = 45;
    assert_eq!(config.effective_max_connect_token_lifetime(), 45);
}

#[test]
fn storage_out_of_proportion_is_refused() {
    use netcode_proto::server::HeapStorage;
    let address = "127.0.0.1:40000".parse().unwrap();
    let config = ServerConfig::new(PROTOCOL_ID, Key::from_bytes(PRIVATE_KEY), address);
    // Fewer mappings than slots, or no history at all.
    for storage in [
        HeapStorage::with_tables(8, 4, 64),
        HeapStorage::with_tables(8, 32, 0),
    ] {
        assert_eq!(
            Server::new(config.clone(), storage).err(),
            Some(ServerError::BadStorage)
        );
    }
    assert!(Server::new(config, HeapStorage::with_tables(8, 8, 1)).is_ok());
}

#[test]
fn a_payload_captured_in_one_session_is_rejected_in_the_next() {
    let mut w = World::new(perfect(), 31, 1, 1);
    let c = w.add_client("[::]:50000");
    let token = w.token(1);
    w.connect(c, &token);
    assert!(w.run_until(50, |w| w.state(c) == ClientState::Connected));
    w.capture = true;
    w.client_send(c, b"first session");
    w.step(FRAME);
    w.capture = false;
    let (from, to, bytes) = w
        .captured
        .iter()
        .find(|(_, to, b)| *to == w.servers[0].address && b[0] & 0x0f == 5)
        .cloned()
        .unwrap();
    w.client_disconnect(c);
    w.step(FRAME);
    let fresh = w.token(1);
    w.connect(c, &fresh);
    assert!(w.run_until(50, |w| w.state(c) == ClientState::Connected));
    let delivered = w.servers[0].received.len();
    w.sim.send(w.now, from, to, &bytes);
    w.step(Duration::from_millis(1));
    assert_eq!(w.servers[0].received.len(), delivered);
    assert!(
        w.server(0)
            .stats()
            .dropped(DropReason::Packet(PacketError::DecryptFailed))
            >= 1
    );
}

#[test]
fn deadlines_alone_drive_a_session() {
    let config = netcode_proto::sim::SimConfig {
        latency: Duration::from_millis(30),
        ..perfect()
    };
    let mut w = World::new(config, 32, 4, 4);
    let c = w.add_client("[::]:50000");
    let token = w.token(1);
    w.connect(c, &token);
    let start = w.now;
    let mut wakeups = 0;
    while w.now < start + Duration::from_secs(60) {
        let next = w
            .next_event()
            .expect("something is always pending in a live session");
        assert!(
            next >= w.now,
            "deadlines are never in the past after an update"
        );
        assert!(w.advance());
        assert_eq!(w.now, next);
        wakeups += 1;
        if w.state(c) == ClientState::Connected {
            assert!(w.server(0).next_deadline().is_some());
        }
    }
    assert_eq!(w.state(c), ClientState::Connected);
    assert!(w.server(0).client_connected(0));
    // Keep-alives at 10 Hz each way plus their deliveries, with no busy loop.
    assert!(wakeups < 60 * 45, "{wakeups} wake-ups in 60 s");
}

#[test]
fn an_update_past_the_timers_range_returns_and_applies_timeouts() {
    // The server's timers hold nanoseconds in 64 bits (584 years): a clock
    // beyond that must neither hang an update nor skip what is due.
    let finished = std::thread::spawn(|| {
        let mut w = World::new(perfect(), 33, 3, 3);
        let server = w.servers[0].address;
        for (c, timeout) in [(0, 15), (1, 15), (2, -1)] {
            let client = w.add_client(&format!("10.2.0.{}:4000", c + 1));
            let token = w.token_for(10 + c as u64, &[server], 30, timeout);
            w.connect(client, &token);
        }
        assert!(w.run_until(50, |w| w.server(0).num_connected_clients() == 3));
        let unix = w.unix;
        let beyond =
            Instant::from_duration(Duration::from_nanos(u64::MAX)) + Duration::from_secs(1);
        for (now, connected) in [(beyond, 3), (Instant::MAX, 1)] {
            let mut keep_alives = 0;
            let mut out = SendFn(|_, _: &[u8]| keep_alives += 1);
            w.server_mut(0).update(now, unix, &mut out);
            // Every connected client was sent its keep-alive; the two with
            // a timeout timed out, the one whose token disables timeouts
            // stays.
            assert_eq!(keep_alives, connected);
            assert_eq!(w.server(0).num_connected_clients(), 1);
        }
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !finished.is_finished() {
        assert!(
            std::time::Instant::now() < deadline,
            "update did not return"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    finished.join().expect("no panic");
}

//! Allocations per operation and server memory: the figures of
//! `BENCHMARKS.md` that are counted rather than timed. Run with
//! `cargo test -p netcode-bench --test it footprint -- --nocapture` to see
//! them.
//!
//! netcode-proto must allocate nothing per packet, on either side; the
//! peers' counts are printed for comparison, not asserted.

use netcode_proto::Instant;
use std::mem::size_of;
use std::time::Duration;

use netcode_bench::fixtures::{
    Discard, Last, PACKET_KEY, PROTOCOL_ID, SERVER, UNIX_NOW, client_address, connected, handshake,
    payload, restart, token_bytes,
};
use netcode_bench::peers;
use netcode_proto::client::Client;
use netcode_proto::constants::MAX_PACKET_BYTES;
use netcode_proto::crypto::OpeningKey;
use netcode_proto::packet::{Packet, PacketTypes, ReadContext, read_packet, write_packet};
use netcode_proto::seeded::SeededRng;
use netcode_proto::server::{
    ADDRESS_BUCKETS_PER_SLOT, ArrayStorage, CLIENT_ID_BUCKETS_PER_SLOT, ClientSlot, HeapStorage,
    MAPPINGS_PER_SLOT, Mapping, Server, SlotTimer, TOKEN_BUCKETS_PER_SLOT, TOKENS_PER_SLOT,
    TokenEntry,
};
use netcode_proto::sim::World;
use netcode_proto::{Key, ReplayProtection};

/// Allocations per call of `op`, over `times` calls.
fn per_call(times: u64, mut op: impl FnMut()) -> f64 {
    let (allocations, ()) = counting_alloc::count(|| (0..times).for_each(|_| op()));
    allocations as f64 / times as f64
}

#[test]
fn netcode_proto_allocates_nothing_per_packet() {
    const TIMES: u64 = 200;
    let key = Key::from_bytes(PACKET_KEY);
    let data = payload(100);
    let mut rows: Vec<(&str, f64)> = Vec::new();

    let mut out = [0u8; MAX_PACKET_BYTES];
    let mut sequence = 0;
    rows.push((
        "write_packet (payload)",
        per_call(TIMES, || {
            sequence += 1;
            write_packet(
                &Packet::Payload(&data),
                sequence,
                &key,
                PROTOCOL_ID,
                &mut out,
            )
            .unwrap();
        }),
    ));

    let context = ReadContext {
        protocol_id: PROTOCOL_ID,
        current_timestamp: UNIX_NOW,
        min_expire_timestamp: 0,
        private_key: None,
        read_key: Some(&key),
        accepted: PacketTypes::SERVER,
    };
    let packets: Vec<_> = (1..=TIMES)
        .map(|s| {
            let mut p = [0u8; MAX_PACKET_BYTES];
            let n = write_packet(&Packet::Payload(&data), s, &key, PROTOCOL_ID, &mut p).unwrap();
            (p, n)
        })
        .collect();
    let mut replay = ReplayProtection::new();
    let mut iter = packets.into_iter();
    rows.push((
        "read_packet (payload, replay window)",
        per_call(TIMES, || {
            let (mut p, n) = iter.next().unwrap();
            read_packet(&context, &mut p[..n], Some(&mut replay)).unwrap();
        }),
    ));

    let mut pair = connected(4, 11);
    let now = pair.now;
    let mut sent = Last::default();
    rows.push((
        "Client::send_payload",
        per_call(TIMES, || {
            let _ = pair.clients[0].send_payload(now, &data, &mut sent).unwrap();
        }),
    ));
    let mut datagrams: Vec<_> = (0..TIMES)
        .map(|_| {
            let _ = pair.clients[1].send_payload(now, &data, &mut sent).unwrap();
            sent.take()
        })
        .collect();
    let mut discard = Discard::default();
    let mut next = datagrams.iter_mut();
    rows.push((
        "Server::handle (payload)",
        per_call(TIMES, || {
            let (bytes, n) = next.next().unwrap();
            assert!(
                pair.server
                    .handle(now, client_address(1), &mut bytes[..*n], &mut discard)
                    .is_some()
            );
        }),
    ));
    let mut server_sent = Last::default();
    rows.push((
        "Server::send_payload",
        per_call(TIMES, || {
            let _ = pair
                .server
                .send_payload(now, 2, &data, &mut server_sent)
                .unwrap();
        }),
    ));
    let mut to_client: Vec<_> = (0..TIMES)
        .map(|_| {
            let _ = pair
                .server
                .send_payload(now, 3, &data, &mut server_sent)
                .unwrap();
            server_sent.take()
        })
        .collect();
    let mut next = to_client.iter_mut();
    rows.push((
        "Client::handle (payload)",
        per_call(TIMES, || {
            let (bytes, n) = next.next().unwrap();
            let received =
                pair.clients[3].handle(now, SERVER, &mut bytes[..*n], &mut Discard::default());
            assert!(received.is_some());
        }),
    ));
    let mut tick = now;
    rows.push((
        "Server::update (4 clients)",
        per_call(TIMES, || {
            tick += Duration::from_millis(50);
            pair.server.update(tick, pair.unix, &mut discard);
        }),
    ));

    // A whole handshake, both sides, after the tokens and clients exist,
    // on storage whose prepared key table already reaches every slot (it
    // otherwise grows on the connections that set a new high:
    // `netcode-proto`'s `prepared_keys` tests count those).
    let mut rng = SeededRng::new(12);
    let mut storage = HeapStorage::new(64);
    storage.reserve_prepared_keys(64);
    let mut fresh = Server::new(World::server_config(SERVER), storage).unwrap();
    restart(&mut fresh, 64, &mut rng);
    let tokens: Vec<_> = (0..TIMES.min(64))
        .map(|i| token_bytes(i + 1, &mut rng))
        .collect();
    let mut clients: Vec<Client> = tokens.iter().map(|_| Client::new()).collect();
    let (mut a, mut b) = (Last::default(), Last::default());
    let mut i = 0;
    rows.push((
        "handshake, token to connected (both sides)",
        per_call(tokens.len() as u64, || {
            let now = Instant::from_millis(101 * i as u64);
            handshake(
                &mut fresh,
                &mut clients[i],
                client_address(i),
                &tokens[i],
                now,
                &mut a,
                &mut b,
            );
            i += 1;
        }),
    ));
    assert_eq!(fresh.num_connected_clients(), tokens.len());

    println!("\nallocations per operation, netcode-proto:");
    for (name, allocations) in &rows {
        println!("  {name:<45} {allocations}");
    }
    for (name, allocations) in rows {
        assert_eq!(allocations, 0.0, "{name} allocates");
    }
}

#[test]
fn peers_allocations_per_packet_for_comparison() {
    use renetcode::ServerResult;
    const TIMES: u64 = 200;
    let data = payload(100);
    let (mut server, mut clients) = peers::renet_connected(2);
    let mut rows: Vec<(&str, f64)> = Vec::new();
    rows.push((
        "renetcode NetcodeClient::generate_payload_packet",
        per_call(TIMES, || {
            clients[0].generate_payload_packet(&data).unwrap();
        }),
    ));
    let mut packets: Vec<Vec<u8>> = (0..TIMES)
        .map(|_| {
            clients[1]
                .generate_payload_packet(&data)
                .unwrap()
                .1
                .to_vec()
        })
        .collect();
    let mut next = packets.iter_mut();
    rows.push((
        "renetcode NetcodeServer::process_packet (payload)",
        per_call(TIMES, || {
            let packet = next.next().unwrap();
            assert!(matches!(
                server.process_packet(client_address(1), packet),
                ServerResult::Payload { .. }
            ));
        }),
    ));
    let tokens: Vec<_> = (0..64).map(|i| peers::renet_token(i + 100)).collect();
    let mut fresh = peers::renet_server(64);
    let mut tokens = tokens.into_iter().enumerate();
    rows.push((
        "renetcode handshake, token to connected",
        per_call(64, || {
            let (i, token) = tokens.next().unwrap();
            std::hint::black_box(peers::renet_connect(&mut fresh, token, client_address(i)));
        }),
    ));
    println!("\nallocations per operation, peers (not asserted):");
    for (name, allocations) in &rows {
        println!("  {name:<50} {allocations}");
    }
}

/// Bytes of a server's tables for `slots` slots, from the sizes of their
/// entries: what `HeapStorage::new(slots)` allocates up front. The prepared
/// receive keys come on top, one [`prepared_key_bytes`] per client
/// connected at once.
fn table_bytes(slots: usize) -> usize {
    slots * (size_of::<ClientSlot>() + size_of::<SlotTimer>())
        + slots * MAPPINGS_PER_SLOT * size_of::<Mapping>()
        + slots * TOKENS_PER_SLOT * size_of::<TokenEntry>()
        + slots
            * (ADDRESS_BUCKETS_PER_SLOT + CLIENT_ID_BUCKETS_PER_SLOT + TOKEN_BUCKETS_PER_SLOT)
            * size_of::<u32>()
        + slots.div_ceil(64) * size_of::<u64>()
}

/// Bytes of one entry of the prepared receive key table.
fn prepared_key_bytes() -> usize {
    size_of::<Option<OpeningKey>>()
}

#[test]
fn server_memory_is_linear_in_slots() {
    let fixed = size_of::<Server<HeapStorage>>();
    println!("\nserver memory ({}):", netcode_proto::crypto::BACKEND);
    println!(
        "  entries: ClientSlot {} B (and its SlotTimer {} B), Mapping {} B, TokenEntry {} B, prepared receive key {} B per client connected; Server struct {fixed} B",
        size_of::<ClientSlot>(),
        size_of::<SlotTimer>(),
        size_of::<Mapping>(),
        size_of::<TokenEntry>(),
        prepared_key_bytes(),
    );
    for slots in [256, 1024, 4096] {
        let bytes = table_bytes(slots) + fixed;
        let full = bytes + slots * prepared_key_bytes();
        // What HeapStorage really allocates, with no client and with every
        // slot's key prepared.
        let before = counting_alloc::live_bytes();
        let mut storage = HeapStorage::new(slots);
        let measured = counting_alloc::live_bytes() - before;
        storage.reserve_prepared_keys(slots);
        let measured_full = counting_alloc::live_bytes() - before;
        drop(storage);
        println!(
            "  {slots:>5} slots: {:.1} KB ({:.0} B per slot) with no client connected, {:.1} KB with all {slots} connected; HeapStorage measured: {:.1} KB and {:.1} KB",
            bytes as f64 / 1000.0,
            bytes as f64 / slots as f64,
            full as f64 / 1000.0,
            (measured as usize + fixed) as f64 / 1000.0,
            (measured_full as usize + fixed) as f64 / 1000.0,
        );
        assert_eq!(
            measured as usize,
            table_bytes(slots),
            "the arithmetic is what HeapStorage allocates"
        );
        assert_eq!(
            measured_full as usize,
            table_bytes(slots) + slots * prepared_key_bytes()
        );
    }
    // The inline storage holds exactly these tables and a key for every
    // slot, so the arithmetic is right.
    assert_eq!(
        size_of::<ArrayStorage<256>>(),
        table_bytes(256) + 256 * size_of::<u64>() - 256usize.div_ceil(64) * size_of::<u64>()
            + 256 * prepared_key_bytes()
    );
    // Linear: 16 times the slots is 16 times the tables, to the byte (bar
    // the free-slot bitmap's rounding).
    assert_eq!(table_bytes(4096), 16 * table_bytes(256));
}

//! One payload packet written and read, through the wire layer and the
//! client and server APIs, against renetcode's client and server
//! (STANDARD.md "Payload packet", "Replay protection").

use std::hint::black_box;

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput};
use netcode_bench::fixtures::{
    Discard, Last, PACKET_KEY, PAYLOAD_SIZES, PROTOCOL_ID, UNIX_NOW, client_address, connected,
    payload,
};
use netcode_bench::labels::{RENETCODE, ours};
use netcode_bench::peers::renet_connected;
use netcode_proto::constants::MAX_PACKET_BYTES;
use netcode_proto::packet::{Packet, PacketTypes, ReadContext, read_packet, write_packet};
use netcode_proto::{Key, ReplayProtection};
use renetcode::ServerResult;

pub(crate) fn payload_write(c: &mut Criterion) {
    let mut group = c.benchmark_group("payload_write");
    let key = Key::from_bytes(PACKET_KEY);
    for size in PAYLOAD_SIZES {
        group.throughput(Throughput::Bytes(size as u64));
        let data = payload(size);
        group.bench_function(
            BenchmarkId::new(format!("{} write_packet", ours()), size),
            |b| {
                let mut out = [0u8; MAX_PACKET_BYTES];
                let mut sequence = 1000u64;
                b.iter(|| {
                    sequence += 1;
                    black_box(
                        write_packet(
                            &Packet::Payload(&data),
                            sequence,
                            &key,
                            PROTOCOL_ID,
                            &mut out,
                        )
                        .unwrap(),
                    )
                })
            },
        );
        group.bench_function(
            BenchmarkId::new(format!("{} Client::send_payload", ours()), size),
            |b| {
                let mut pair = connected(1, 1);
                let mut out = Last::default();
                let now = pair.now;
                let client = &mut pair.clients[0];
                b.iter(|| black_box(client.send_payload(now, &data, &mut out).unwrap()))
            },
        );
        group.bench_function(
            BenchmarkId::new(
                format!("{RENETCODE} NetcodeClient::generate_payload_packet"),
                size,
            ),
            |b| {
                let (_server, mut clients) = renet_connected(1);
                let client = &mut clients[0];
                b.iter(|| black_box(client.generate_payload_packet(&data).unwrap().1.len()))
            },
        );
    }
    group.finish();
}

pub(crate) fn payload_read(c: &mut Criterion) {
    let mut group = c.benchmark_group("payload_read");
    let key = Key::from_bytes(PACKET_KEY);
    for size in PAYLOAD_SIZES {
        group.throughput(Throughput::Bytes(size as u64));
        let data = payload(size);
        group.bench_function(
            BenchmarkId::new(format!("{} read_packet", ours()), size),
            |b| {
                let context = ReadContext {
                    protocol_id: PROTOCOL_ID,
                    current_timestamp: UNIX_NOW,
                    min_expire_timestamp: 0,
                    private_key: None,
                    read_key: Some(&key),
                    accepted: PacketTypes::SERVER,
                };
                let mut replay = ReplayProtection::new();
                let mut sequence = 1000u64;
                b.iter_batched_ref(
                    || {
                        sequence += 1;
                        let mut packet = [0u8; MAX_PACKET_BYTES];
                        let n = write_packet(
                            &Packet::Payload(&data),
                            sequence,
                            &key,
                            PROTOCOL_ID,
                            &mut packet,
                        )
                        .unwrap();
                        (packet, n)
                    },
                    |(packet, n)| {
                        let read =
                            read_packet(&context, &mut packet[..*n], Some(&mut replay)).unwrap();
                        black_box(read.sequence);
                    },
                    BatchSize::SmallInput,
                )
            },
        );
        group.bench_function(
            BenchmarkId::new(format!("{} Server::handle", ours()), size),
            |b| {
                let mut pair = connected(1, 2);
                let now = pair.now;
                let address = client_address(0);
                let mut out = Discard::default();
                let (server, client) = (&mut pair.server, &mut pair.clients[0]);
                b.iter_batched_ref(
                    || {
                        let mut sent = Last::default();
                        let _ = client.send_payload(now, &data, &mut sent);
                        sent.take()
                    },
                    |(packet, n)| {
                        let received = server.handle(now, address, &mut packet[..*n], &mut out);
                        assert!(received.is_some());
                    },
                    BatchSize::SmallInput,
                )
            },
        );
        group.bench_function(
            BenchmarkId::new(format!("{RENETCODE} NetcodeServer::process_packet"), size),
            |b| {
                let (mut server, mut clients) = renet_connected(1);
                let client = &mut clients[0];
                let address = client_address(0);
                b.iter_batched_ref(
                    || client.generate_payload_packet(&data).unwrap().1.to_vec(),
                    |packet| match server.process_packet(address, packet) {
                        ServerResult::Payload { payload, .. } => {
                            black_box(payload.len());
                        }
                        _ => panic!("renetcode did not read the payload"),
                    },
                    BatchSize::SmallInput,
                )
            },
        );
    }
    group.finish();
}

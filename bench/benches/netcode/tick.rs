//! The server tick: N connected clients each send one 100-byte payload,
//! the server handles every datagram and updates (STANDARD.md "Server-side
//! connection process": keep-alives and timeouts), against renetcode.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput};
use netcode_bench::peers::{RENET_MAX_CLIENTS, renet_connected};
use netcode_bench::{Discard, Last, client_address, connected, payload};
use renetcode::ServerResult;

use super::{RENET, ours};

const TICK_SIZES: [usize; 5] = [16, 64, 256, 1024, 4096];
const TICK: Duration = Duration::from_micros(16_667);

pub(crate) fn server_tick(c: &mut Criterion) {
    let mut group = c.benchmark_group("server_tick");
    group.sample_size(20);
    let data = payload(100);
    for n in TICK_SIZES {
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(BenchmarkId::new(ours(), n), |b| {
            let mut pair = connected(n, 7);
            let mut now = pair.now;
            let mut datagrams = vec![([0u8; 160], 0usize); n];
            let mut out = Discard::default();
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    now += TICK;
                    for (client, (bytes, len)) in pair.clients.iter_mut().zip(&mut datagrams) {
                        let mut sent = Last::default();
                        let _ = client.send_payload(now, &data, &mut sent);
                        bytes[..sent.len].copy_from_slice(&sent.bytes[..sent.len]);
                        *len = sent.len;
                    }
                    let mut received = 0;
                    let start = Instant::now();
                    for (i, (bytes, len)) in datagrams.iter_mut().enumerate() {
                        if pair
                            .server
                            .handle(now, client_address(i), &mut bytes[..*len], &mut out)
                            .is_some()
                        {
                            received += 1;
                        }
                    }
                    pair.server.update(now, pair.unix, &mut out);
                    total += start.elapsed();
                    assert_eq!(received, n);
                }
                total
            })
        });
        if n > RENET_MAX_CLIENTS {
            continue;
        }
        group.bench_function(BenchmarkId::new(RENET, n), |b| {
            let (mut server, mut clients) = renet_connected(n);
            let ids: Vec<u64> = (1..=n as u64).collect();
            let mut datagrams = vec![([0u8; 160], 0usize); n];
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    // Clients are not updated (as ours are not): a payload needs
                    // no update, and their clocks stay inside the timeout.
                    for (client, (bytes, len)) in clients.iter_mut().zip(&mut datagrams) {
                        let (_, packet) = client.generate_payload_packet(&data).unwrap();
                        bytes[..packet.len()].copy_from_slice(packet);
                        *len = packet.len();
                    }
                    let mut received = 0;
                    let start = Instant::now();
                    for (i, (bytes, len)) in datagrams.iter_mut().enumerate() {
                        if let ServerResult::Payload { .. } =
                            server.process_packet(client_address(i), &mut bytes[..*len])
                        {
                            received += 1;
                        }
                    }
                    server.update(TICK);
                    for &id in &ids {
                        if let ServerResult::PacketToSend { payload, .. } = server.update_client(id)
                        {
                            black_box(payload);
                        }
                    }
                    total += start.elapsed();
                    assert_eq!(received, n);
                }
                total
            })
        });
    }
    group.finish();
}

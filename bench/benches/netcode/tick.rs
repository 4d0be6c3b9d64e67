//! The server tick: N connected clients each send one 100-byte payload,
//! the server handles every datagram and updates (STANDARD.md "Server-side
//! connection process": keep-alives and timeouts), against renetcode.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput};
use netcode_bench::fixtures::{
    Discard, TICK, TickDatagram, client_address, connected, payload, send_from_each,
};
use netcode_bench::labels::{RENETCODE, ours};
use netcode_bench::peers::{RENET_MAX_CLIENTS, renet_connected, renet_send_from_each};
use renetcode::ServerResult;

const TICK_SIZES: [usize; 5] = [16, 64, 256, 1024, 4096];

pub(crate) fn server_tick(c: &mut Criterion) {
    let mut group = c.benchmark_group("server_tick");
    group.sample_size(20);
    let data = payload(100);
    for n in TICK_SIZES {
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(BenchmarkId::new(ours(), n), |b| {
            let mut pair = connected(n, 7);
            let mut now = pair.now;
            let mut datagrams: Vec<TickDatagram> = vec![([0; 160], 0); n];
            let mut out = Discard::default();
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    now += TICK;
                    send_from_each(&mut pair.clients, now, &data, &mut datagrams);
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
        group.bench_function(BenchmarkId::new(RENETCODE, n), |b| {
            let (mut server, mut clients) = renet_connected(n);
            let ids: Vec<u64> = (1..=n as u64).collect();
            let mut datagrams: Vec<TickDatagram> = vec![([0; 160], 0); n];
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    renet_send_from_each(&mut clients, &data, &mut datagrams);
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

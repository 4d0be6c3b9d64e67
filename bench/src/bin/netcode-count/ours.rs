//! netcode-proto's cases (and netcode-std's over loopback), each operation
//! inside `measured_once`, its inputs made before.

use std::hint::black_box;
use std::time::{Duration, Instant};

use netcode_bench::count::{in_batches, measure, measured_once, sized};
use netcode_bench::fixtures::{
    Discard, Last, PRIVATE_KEY, PROTOCOL_ID, TICK, TickDatagram, client_address, connected,
    garbage_request, handshake, payload, request_bytes, restart, send_from_each, server,
    token_bytes, token_params,
};
use netcode_proto::Key;
use netcode_proto::client::Client;
use netcode_proto::seeded::SeededRng;
use netcode_proto::token::generate_connect_token;

/// Requests or handshakes per server start: within a 256-slot server's
/// mappings and token history.
const BATCH: usize = 256;

/// Runs `case` `n` times; the time of the measured loops.
pub(crate) fn run(case: &str, n: usize) -> Option<Duration> {
    if let Some(len) = sized(case, "send-") {
        let data = payload(len);
        let mut pair = connected(1, 1);
        let now = pair.now;
        let client = &mut pair.clients[0];
        let mut out = Last::default();
        let mut inputs = vec![(); n];
        return Some(measure(&mut inputs, |()| {
            black_box(client.send_payload(now, &data, &mut out).is_ok());
        }));
    }
    if let Some(len) = sized(case, "receive-") {
        let data = payload(len);
        let mut pair = connected(1, 2);
        let now = pair.now;
        let mut packets: Vec<_> = (0..n)
            .map(|_| {
                let mut sent = Last::default();
                let _ = pair.clients[0].send_payload(now, &data, &mut sent);
                sent.take()
            })
            .collect();
        let mut out = Discard::default();
        let address = client_address(0);
        let elapsed = measure(&mut packets, |(packet, len)| {
            let read = pair
                .server
                .handle(now, address, &mut packet[..*len], &mut out);
            black_box(read.is_some());
        });
        assert_eq!(pair.server.stats().dropped_total(), 0, "every payload read");
        return Some(elapsed);
    }
    if let Some(len) = sized(case, "loopback-") {
        return Some(loopback(len, n));
    }
    if let Some(clients) = sized(case, "tick-") {
        return Some(ticks(clients, n));
    }
    match case {
        "request" => Some(requests(n)),
        "garbage" => {
            let mut server = server(256, &mut SeededRng::new(6));
            let mut out = Discard::default();
            let mut datagrams = vec![garbage_request(); n];
            let elapsed = measure(&mut datagrams, |datagram| {
                let read = server.handle(
                    netcode_proto::Instant::ZERO,
                    client_address(1),
                    datagram,
                    &mut out,
                );
                black_box(read.is_some());
            });
            assert_eq!(out.sent, 0, "garbage answered");
            Some(elapsed)
        }
        "handshake" => Some(handshakes(n)),
        "token" => {
            let key = Key::from_bytes(PRIVATE_KEY);
            let params = token_params(&key, 42);
            let mut rng = getrandom::rand_core::UnwrapErr(getrandom::SysRng);
            let mut inputs = vec![(); n];
            Some(measure(&mut inputs, |()| {
                let token = generate_connect_token(&params, &mut rng).and_then(|t| t.write());
                black_box(token.is_ok());
            }))
        }
        _ => None,
    }
}

/// Valid requests to challenges, in batches on a server restarted between
/// them (the restart not measured).
fn requests(n: usize) -> Duration {
    let mut rng = SeededRng::new(4);
    let mut server = server(BATCH, &mut rng);
    let requests: Vec<_> = (0..BATCH as u64)
        .map(|i| request_bytes(&token_bytes(i + 1, &mut rng)))
        .collect();
    in_batches(n, BATCH, |k| {
        restart(&mut server, BATCH, &mut rng);
        let mut batch: Vec<_> = requests[..k].iter().copied().enumerate().collect();
        let mut out = Discard::default();
        let elapsed = measure(&mut batch, |(i, (request, len))| {
            let from = client_address(*i);
            black_box(
                server
                    .handle(
                        netcode_proto::Instant::ZERO,
                        from,
                        &mut request[..*len],
                        &mut out,
                    )
                    .is_some(),
            );
        });
        assert_eq!(out.sent, k, "one challenge per request");
        elapsed
    })
}

/// Handshakes, in batches on a server restarted between them.
fn handshakes(n: usize) -> Duration {
    let mut rng = SeededRng::new(8);
    let mut server = server(BATCH, &mut rng);
    let tokens: Vec<_> = (0..BATCH as u64)
        .map(|i| token_bytes(i + 1, &mut rng))
        .collect();
    let (mut to_server, mut to_client) = (Last::default(), Last::default());
    in_batches(n, BATCH, |k| {
        restart(&mut server, BATCH, &mut rng);
        let mut clients: Vec<_> = (0..k).map(|i| (i, Client::new())).collect();
        let elapsed = measure(&mut clients, |(i, client)| {
            let now = netcode_proto::Instant::from_millis(101 * *i as u64);
            let address = client_address(*i);
            let token = &tokens[*i];
            handshake(
                &mut server,
                client,
                address,
                token,
                now,
                &mut to_server,
                &mut to_client,
            );
        });
        assert_eq!(server.num_connected_clients(), k, "every handshake done");
        elapsed
    })
}

/// netcode-std's client and server over 127.0.0.1: `n` payloads of `len`
/// bytes, each sent by the client, read by the server's update and taken.
fn loopback(len: usize, n: usize) -> Duration {
    use netcode_std::{Client, ClientState, ConnectTokenBuilder, Server, ServerConfig};
    let key = Key::from_bytes(PRIVATE_KEY);
    let config = ServerConfig::new(PROTOCOL_ID, key.clone());
    let mut server = Server::new("127.0.0.1:0", config).expect("bind the server");
    server.start(1).expect("start the server");
    let token = ConnectTokenBuilder::new(PROTOCOL_ID, &key, 1)
        .server_addresses([server.public_address()])
        .generate()
        .expect("token");
    let mut client = Client::new("127.0.0.1:0").expect("bind the client");
    client.connect(&token).expect("connect");
    let epoch = Instant::now();
    while client.state() != ClientState::Connected {
        assert!(
            epoch.elapsed() < Duration::from_secs(10),
            "no connection over loopback"
        );
        let t = epoch.elapsed().as_secs_f64();
        client.update(t);
        server.update(t);
        std::thread::sleep(Duration::from_millis(1));
    }
    let t = epoch.elapsed().as_secs_f64();
    let data = payload(len);
    let mut inputs = vec![(); n];
    let mut received = 0;
    let elapsed = measure(&mut inputs, |()| {
        let _ = client.send_packet(&data);
        server.update(t);
        if let Some(packet) = server.receive_packet(0) {
            received += 1;
            server.free_packet(packet);
        }
    });
    assert_eq!(received, n, "every payload read over loopback");
    elapsed
}

/// `n` ticks of a server with `clients` connected clients.
fn ticks(clients: usize, n: usize) -> Duration {
    let data = payload(100);
    let mut pair = connected(clients, 7);
    let mut now = pair.now;
    let mut datagrams: Vec<TickDatagram> = vec![([0; 160], 0); clients];
    let mut out = Discard::default();
    let mut total = Duration::ZERO;
    for _ in 0..n {
        now += TICK;
        send_from_each(&mut pair.clients, now, &data, &mut datagrams);
        let mut received = 0;
        let start = Instant::now();
        for (i, (bytes, len)) in datagrams.iter_mut().enumerate() {
            let address = client_address(i);
            measured_once(&mut || {
                let read = pair
                    .server
                    .handle(now, address, &mut bytes[..*len], &mut out);
                received += usize::from(read.is_some());
            });
        }
        measured_once(&mut || pair.server.update(now, pair.unix, &mut out));
        total += start.elapsed();
        assert_eq!(received, clients, "every payload of the tick read");
    }
    total
}

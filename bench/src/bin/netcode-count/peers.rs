//! The peers' cases: renetcode through its client and server (its packet
//! layer is private), netcode-official through its tokens and its UDP
//! client and server (the only public paths it has).

use std::hint::black_box;
use std::time::{Duration, Instant};

use netcode_bench::count::{in_batches, measure, measured_once, sized};
use netcode_bench::fixtures::{
    PRIVATE_KEY, PROTOCOL_ID, TICK, TickDatagram, client_address, garbage_request, payload,
};
use netcode_bench::peers::{
    RENET_MAX_CLIENTS, official_token, renet_connect, renet_connected, renet_request,
    renet_send_from_each, renet_server, renet_token,
};
use renetcode::ServerResult;

/// Requests or handshakes per server.
const BATCH: usize = 256;

/// renetcode's `case`, `n` times.
pub(crate) fn renetcode(case: &str, n: usize) -> Option<Duration> {
    if let Some(len) = sized(case, "send-") {
        let data = payload(len);
        let (_server, mut clients) = renet_connected(1);
        let client = &mut clients[0];
        let mut inputs = vec![(); n];
        return Some(measure(&mut inputs, |()| {
            black_box(
                client
                    .generate_payload_packet(&data)
                    .map(|p| p.1.len())
                    .ok(),
            );
        }));
    }
    if let Some(len) = sized(case, "receive-") {
        let data = payload(len);
        let (mut server, mut clients) = renet_connected(1);
        let mut packets: Vec<Vec<u8>> = (0..n)
            .map(|_| {
                clients[0]
                    .generate_payload_packet(&data)
                    .unwrap()
                    .1
                    .to_vec()
            })
            .collect();
        let mut read = 0;
        let elapsed = measure(&mut packets, |packet| {
            if let ServerResult::Payload { payload, .. } =
                server.process_packet(client_address(0), packet)
            {
                black_box(payload.len());
                read += 1;
            }
        });
        assert_eq!(read, n, "every payload read");
        return Some(elapsed);
    }
    if let Some(clients) = sized(case, "tick-") {
        return (clients <= RENET_MAX_CLIENTS).then(|| renet_ticks(clients, n));
    }
    match case {
        "request" => {
            let requests: Vec<_> = (0..BATCH as u64)
                .map(|i| renet_request(renet_token(i + 1)))
                .collect();
            Some(in_batches(n, BATCH, |k| {
                let mut server = renet_server(BATCH);
                let mut batch: Vec<_> = requests[..k].iter().cloned().enumerate().collect();
                let mut challenges = 0;
                let elapsed = measure(&mut batch, |(i, request)| {
                    if let ServerResult::PacketToSend { payload, .. } =
                        server.process_packet(client_address(*i), request)
                    {
                        black_box(payload);
                        challenges += 1;
                    }
                });
                assert_eq!(challenges, k, "one challenge per request");
                elapsed
            }))
        }
        "garbage" => {
            let mut server = renet_server(256);
            let mut datagrams = vec![garbage_request(); n];
            Some(measure(&mut datagrams, |datagram| {
                let answered = matches!(
                    server.process_packet(client_address(1), datagram),
                    ServerResult::PacketToSend { .. }
                );
                assert!(!answered, "renetcode answered garbage");
            }))
        }
        "handshake" => Some(in_batches(n, BATCH, |k| {
            let mut server = renet_server(BATCH);
            let mut tokens: Vec<_> = (0..k)
                .map(|i| (i, Some(renet_token(i as u64 + 1))))
                .collect();
            let elapsed = measure(&mut tokens, |(i, token)| {
                if let Some(token) = token.take() {
                    black_box(renet_connect(&mut server, token, client_address(*i)));
                }
            });
            assert_eq!(server.connected_clients(), k, "every handshake done");
            elapsed
        })),
        "token" => {
            let mut inputs = vec![(); n];
            Some(measure(&mut inputs, |()| {
                let token = renet_token(42);
                let mut bytes = [0u8; 2048];
                black_box(token.write(&mut bytes.as_mut_slice()).is_ok());
            }))
        }
        _ => None,
    }
}

/// `n` ticks of a renetcode server with `clients` connected clients.
fn renet_ticks(clients: usize, n: usize) -> Duration {
    let data = payload(100);
    let (mut server, mut connected) = renet_connected(clients);
    let ids: Vec<u64> = (1..=clients as u64).collect();
    let mut datagrams: Vec<TickDatagram> = vec![([0; 160], 0); clients];
    let mut total = Duration::ZERO;
    for _ in 0..n {
        renet_send_from_each(&mut connected, &data, &mut datagrams);
        let mut received = 0;
        let start = Instant::now();
        for (i, (bytes, len)) in datagrams.iter_mut().enumerate() {
            measured_once(&mut || {
                let read = server.process_packet(client_address(i), &mut bytes[..*len]);
                received += usize::from(matches!(read, ServerResult::Payload { .. }));
            });
        }
        measured_once(&mut || {
            server.update(TICK);
            for &id in &ids {
                if let ServerResult::PacketToSend { payload, .. } = server.update_client(id) {
                    black_box(payload);
                }
            }
        });
        total += start.elapsed();
        assert_eq!(received, clients, "every payload of the tick read");
    }
    total
}

/// netcode-official's `case`, `n` times.
pub(crate) fn official(case: &str, n: usize) -> Option<Duration> {
    if let Some(len) = sized(case, "loopback-") {
        return Some(official_loopback(len, n));
    }
    match case {
        "token" => {
            let mut inputs = vec![(); n];
            Some(measure(&mut inputs, |()| {
                black_box(official_token(42));
            }))
        }
        _ => None,
    }
}

/// netcode-official's client and server over 127.0.0.1: `n` payloads of
/// `len` bytes, each sent by the client, read by the server's update and
/// taken.
fn official_loopback(len: usize, n: usize) -> Duration {
    let any = "127.0.0.1:0".parse().expect("an address");
    let mut server = netcode::Server::new(any, PROTOCOL_ID, &PRIVATE_KEY, 0.0).expect("bind");
    server.start(1).expect("start");
    let address = server.address();
    let token = netcode::generate_connect_token(
        &[address],
        &[address],
        30,
        10,
        1,
        PROTOCOL_ID,
        &PRIVATE_KEY,
        &[0; 256],
    )
    .expect("token");
    let mut client = netcode::Client::new(any, 0.0).expect("bind the client");
    client.connect(&token).expect("connect");
    let epoch = Instant::now();
    while client.state() != netcode::ClientState::Connected {
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
        if let Some((packet, _)) = server.receive_packet(0) {
            black_box(packet.len());
            received += 1;
        }
    });
    assert_eq!(received, n, "every payload read over loopback");
    elapsed
}

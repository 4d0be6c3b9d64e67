//! Recording is cheap enough for every tick: once the snapshot has held as
//! many clients as the server has, `record` allocates nothing (the test
//! binary's counting global allocator, which counts each thread apart,
//! watches it with a client connected).

use std::time::{Duration, Instant};

use netcode_metrics::ServerMetrics;
use netcode_std::proto::Key;
use netcode_std::{Client, ClientState, Server, ServerConfig};

use crate::common::start_with_token;

const PROTOCOL_ID: u64 = 0x6e6f_5f61_6c6c_6f63;

#[test]
fn recording_a_warm_snapshot_allocates_nothing() {
    assert!(counting_alloc::installed());
    let key = Key::from_bytes([0x33; 32]);
    let mut server =
        Server::new("127.0.0.1:0", ServerConfig::new(PROTOCOL_ID, key.clone())).unwrap();
    let token = start_with_token(&mut server, 8, PROTOCOL_ID, &key, 77);
    let mut client = Client::new("127.0.0.1:0").unwrap();
    client.connect(&token).unwrap();
    let epoch = Instant::now();
    while client.state() != ClientState::Connected {
        assert!(
            epoch.elapsed() < Duration::from_secs(10),
            "the client connects"
        );
        let now = epoch.elapsed().as_secs_f64();
        client.update(now);
        server.update(now);
        std::thread::sleep(Duration::from_millis(1));
    }

    let mut metrics = ServerMetrics::new();
    // Warm: the snapshots' client lists grow to the connected clients.
    metrics.record(&server);
    metrics.record(&server);
    let (allocations, ()) = counting_alloc::count(|| {
        for _ in 0..100 {
            metrics.record(&server);
        }
    });
    assert_eq!(allocations, 0, "record allocated once warm");
}

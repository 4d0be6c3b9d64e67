//! A loop that sleeps in `Poll::poll` with `poll_timeout` wakes only for
//! what the protocol needs: with one quiet connection, about ten keep-alive
//! deadlines a second plus the peer's datagrams, never a spin.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use crate::common::*;
use mio::Token;
use netcode_mio::{Client, ClientConfig, ClientState, Registered, Server};

/// How long each loop is watched idle.
const IDLE: Duration = Duration::from_secs(2);

/// Most wake-ups allowed in [`IDLE`]: 20 keep-alive deadlines and 20
/// datagrams from the peer, with room to spare; a spinning loop wakes
/// thousands of times.
const MAX_WAKEUPS: u64 = 120;

/// Turns `event_loop` for `peer` only, for [`IDLE`]; returns the wake-ups.
fn idle_wakeups(event_loop: &mut EventLoop, peer: &mut dyn Peer) -> u64 {
    let before = event_loop.wakeups;
    let start = Instant::now();
    while let Some(left) = IDLE.checked_sub(start.elapsed()) {
        event_loop.turn(&mut [&mut *peer], Some(left));
    }
    event_loop.wakeups - before
}

/// Drives `peer` with `step` on a thread of its own until the returned
/// flag is set (or twice [`DEADLINE`] has passed); join to get it back.
fn in_background<P: Send + 'static>(
    mut peer: P,
    step: fn(&mut P, f64),
) -> (Arc<AtomicBool>, thread::JoinHandle<P>) {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let handle = thread::spawn(move || {
        let epoch = Instant::now();
        while !flag.load(Ordering::Relaxed) && epoch.elapsed() < 2 * DEADLINE {
            step(&mut peer, seconds(epoch));
        }
        peer
    });
    (stop, handle)
}

#[test]
fn an_idle_mio_server_loop_does_not_spin() {
    let mut event_loop = EventLoop::new();
    let mut server = Server::new("127.0.0.1:0", config(), event_loop.registry(), Token(0)).unwrap();
    let admitted = start_nowait(&mut server, 4);
    let connect = admitted.token(1, &[server.public_address()]);

    // A std client on its own thread, sleeping in its blocking wait.
    let mut client = netcode_std::Client::new("127.0.0.1:0").unwrap();
    client.connect(&connect).unwrap();
    let (stop, handle) = in_background(client, |client, now| {
        client.update(now);
        client.wait(Duration::from_millis(100));
    });

    event_loop.run_until("the client connected", |event_loop| {
        event_loop.turn(&mut [&mut server], None);
        server.num_connected_clients() == 1
    });
    let before = server.transport_stats();
    let wakeups = idle_wakeups(&mut event_loop, &mut server);
    let after = server.transport_stats();
    stop.store(true, Ordering::Relaxed);
    assert_eq!(handle.join().unwrap().state(), ClientState::Connected);

    let sent = after.datagrams_sent - before.datagrams_sent;
    let received = after.datagrams_received - before.datagrams_received;
    eprintln!("idle server: {wakeups} wake-ups, {sent} sent, {received} received");
    assert!(
        (12..=25).contains(&sent),
        "{sent} keep-alives in {IDLE:?}, expected about 20"
    );
    assert!(received >= 15, "{received} datagrams from the client");
    assert!(
        (10..=MAX_WAKEUPS).contains(&wakeups),
        "{wakeups} wake-ups in {IDLE:?} (sent {sent}, received {received})"
    );
    assert_eq!(server.num_connected_clients(), 1);
}

#[test]
fn an_idle_mio_client_loop_does_not_spin() {
    let mut event_loop = EventLoop::new();
    let mut server = netcode_std::Server::new("127.0.0.1:0", config()).unwrap();
    let admitted = start_nowait(&mut server, 4);
    let connect = admitted.token(2, &[server.public_address()]);
    let (stop, handle) = in_background(server, |server, now| {
        server.update(now);
        server.wait(Duration::from_millis(100));
    });

    let registry = event_loop.registry();
    let mut client =
        Client::new("127.0.0.1:0", ClientConfig::default(), registry, Token(1)).unwrap();
    client.connect(&connect).unwrap();
    event_loop.run_until("the client connected", |event_loop| {
        event_loop.turn(&mut [&mut client], None);
        client.state() == ClientState::Connected
    });
    let before = client.transport_stats();
    let wakeups = idle_wakeups(&mut event_loop, &mut client);
    let after = client.transport_stats();
    stop.store(true, Ordering::Relaxed);
    assert_eq!(handle.join().unwrap().num_connected_clients(), 1);

    let sent = after.datagrams_sent - before.datagrams_sent;
    eprintln!("idle client: {wakeups} wake-ups, {sent} sent");
    assert!(
        (12..=25).contains(&sent),
        "{sent} keep-alives in {IDLE:?}, expected about 20"
    );
    assert!(
        (10..=MAX_WAKEUPS).contains(&wakeups),
        "{wakeups} wake-ups in {IDLE:?}"
    );
    assert_eq!(client.state(), ClientState::Connected);
}

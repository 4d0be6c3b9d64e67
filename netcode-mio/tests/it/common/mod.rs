//! Shared pieces of the mio tests: the workspace's test fixtures
//! (`support/test-fixtures`: keys, tokens, payload patterns, loops that
//! always end), and an event loop that drives mio and std servers and
//! clients together.
#![allow(dead_code, unreachable_pub, unused_imports)]

pub use test_fixtures::*;

use std::time::{Duration, Instant};

use mio::{Events, Poll, Registry, Token};
use netcode_mio::Registered;
use netcode_std::transport::Socket;

/// Something the event loop drives: it says how long it may sleep, takes
/// the readable events of its tokens, and is updated after every wake-up.
pub trait Peer {
    fn timeout(&self, now: f64) -> Option<Duration>;
    fn readable(&mut self, token: Token, now: f64) -> bool;
    fn update(&mut self, now: f64);
}

/// mio servers and clients wait in the poll.
macro_rules! mio_peer {
    ($type:ty) => {
        impl Peer for $type {
            fn timeout(&self, now: f64) -> Option<Duration> {
                self.poll_timeout(now)
            }
            fn readable(&mut self, token: Token, now: f64) -> bool {
                self.handle_readable(token, now)
            }
            fn update(&mut self, now: f64) {
                <$type>::update(self, now);
            }
        }
    };
}

/// std servers and clients are not in the poll: the loop wakes for them
/// every millisecond.
macro_rules! std_peer {
    ($type:ty) => {
        impl Peer for $type {
            fn timeout(&self, _: f64) -> Option<Duration> {
                Some(Duration::from_millis(1))
            }
            fn readable(&mut self, _: Token, _: f64) -> bool {
                false
            }
            fn update(&mut self, now: f64) {
                <$type>::update(self, now);
            }
        }
    };
}

mio_peer!(netcode_mio::Server);
mio_peer!(netcode_mio::Client);
std_peer!(netcode_std::Server);
std_peer!(netcode_std::Client);

/// Takes every payload waiting from `slot` of `server`, each of which must
/// be `expected`; returns how many there were.
pub fn take_server_payloads<S: Socket>(
    server: &mut netcode_std::Server<S>,
    slot: usize,
    expected: &[u8],
) -> usize {
    let mut count = 0;
    while let Some(packet) = server.receive_packet(slot) {
        assert_eq!(packet.data(), expected, "payload from slot {slot}");
        count += 1;
        server.free_packet(packet);
    }
    count
}

/// Takes every payload waiting at a mio `client`, each of which must be
/// `expected`; returns how many there were.
pub fn take_payloads(client: &mut netcode_mio::Client, expected: &[u8]) -> usize {
    let mut count = 0;
    while let Some(packet) = client.receive_packet() {
        assert_eq!(packet.data(), expected, "payload from the server");
        count += 1;
        client.free_packet(packet);
    }
    count
}

/// A mio poll, its clock, and a count of its wake-ups.
pub struct EventLoop {
    poll: Poll,
    events: Events,
    pub epoch: Instant,
    /// Times `poll` returned.
    pub wakeups: u64,
}

impl EventLoop {
    pub fn new() -> Self {
        Self {
            poll: Poll::new().expect("poll"),
            events: Events::with_capacity(1024),
            epoch: Instant::now(),
            wakeups: 0,
        }
    }

    pub fn registry(&self) -> &Registry {
        self.poll.registry()
    }

    /// The clock every peer is given, in seconds.
    pub fn now(&self) -> f64 {
        seconds(self.epoch)
    }

    /// One turn of the loop: sleeps in `poll` until the earliest of the
    /// peers' timeouts and `cap`, hands each event to the peer that owns
    /// its token (events of sockets whose owner is not among `peers` this
    /// turn are dropped), then updates every peer. Returns the time of the
    /// turn.
    pub fn turn(&mut self, peers: &mut [&mut dyn Peer], cap: Option<Duration>) -> f64 {
        let now = self.now();
        let timeout = peers
            .iter()
            .filter_map(|p| p.timeout(now))
            .chain(cap)
            .min()
            .unwrap_or(DEADLINE);
        self.poll
            .poll(&mut self.events, Some(timeout))
            .expect("poll");
        self.wakeups += 1;
        let now = self.now();
        for event in self.events.iter() {
            let _owned = peers.iter_mut().any(|p| p.readable(event.token(), now));
        }
        for peer in peers.iter_mut() {
            peer.update(now);
        }
        now
    }

    /// Calls `step` (which turns the loop) until it returns true; panics
    /// with `what` once [`DEADLINE`] has passed.
    pub fn run_until(&mut self, what: &str, mut step: impl FnMut(&mut Self) -> bool) {
        let start = Instant::now();
        while !step(self) {
            assert!(
                start.elapsed() < DEADLINE,
                "gave up after {DEADLINE:?} waiting for: {what}"
            );
        }
    }
}

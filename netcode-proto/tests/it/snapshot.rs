//! Snapshots of a whole server (`Clone` with feature `sim`): a copy, and a
//! copy restored over a server that moved on with `clone_from`, answer the
//! same input with the same bytes, events and counters as the original did,
//! and restoring over storage of the same sizes allocates nothing.

use netcode_proto::Instant;
use std::net::SocketAddr;
use std::time::Duration;

use netcode_proto::io::Output;
use netcode_proto::seeded::SeededRng;
use netcode_proto::server::{HeapStorage, Server, ServerEvent};
use netcode_proto::session::Sent;
use netcode_proto::sim::World;
use netcode_proto::sim::fixtures::{FRAME, pattern};
use netcode_proto::stats::Stats;

/// Everything a server produced: datagrams and events, in order.
#[derive(Debug, Default, PartialEq)]
struct Recorded {
    datagrams: Vec<(SocketAddr, Vec<u8>)>,
    events: Vec<ServerEvent>,
}

impl Output<ServerEvent> for Recorded {
    fn send(&mut self, to: SocketAddr, datagram: &[u8]) {
        self.datagrams.push((to, datagram.to_vec()));
    }

    fn event(&mut self, event: ServerEvent) {
        self.events.push(event);
    }
}

/// What a server does with one fixed input: the client's captured payload
/// datagram (twice: the second is a replay), an update a second later, a
/// payload to slot 0, a disconnect of every client, and a restart.
struct Script {
    from: SocketAddr,
    datagram: Vec<u8>,
    now: Instant,
    unix: u64,
}

/// Its result: output, payloads received, counters and the slots' clients.
type Outcome = (Recorded, Vec<Vec<u8>>, Stats, Vec<Option<u64>>);

impl Script {
    fn run(&self, server: &mut Server<HeapStorage>) -> Outcome {
        let mut out = Recorded::default();
        let mut received = Vec::new();
        for _ in 0..2 {
            let mut datagram = self.datagram.clone();
            if let Some((_, payload)) = server.handle(self.now, self.from, &mut datagram, &mut out)
            {
                received.push(payload.data.to_vec());
            }
        }
        let later = self.now + Duration::from_secs(1);
        server.update(later, self.unix + 1, &mut out);
        let sent = server.send_payload(later, 0, &pattern(40, 3), &mut out);
        assert_eq!(sent, Ok(Sent::Network));
        let clients = (0..server.max_clients())
            .map(|i| server.client_id(i))
            .collect();
        server.disconnect_all_clients(&mut out);
        server
            .start(later, self.unix + 1, 1, &mut SeededRng::new(9), &mut out)
            .unwrap();
        (out, received, server.stats().clone(), clients)
    }
}

/// A world whose one client is connected and has just sent a payload, the
/// server as it was before the payload arrived, and the script that hands
/// that payload to it.
fn connected_world() -> (World, Server<HeapStorage>, Script) {
    let (mut w, c) = World::one_connected(21, 30, 15);
    w.capture = true;
    w.client_send(c, &pattern(100, 1));
    let before = w.server(0).clone();
    let script = Script {
        from: w.clients[c].address,
        datagram: Vec::new(),
        now: w.now + FRAME,
        unix: w.unix,
    };
    w.step(FRAME);
    let (_, _, datagram) = w
        .captured
        .iter()
        .find(|(from, _, bytes)| *from == script.from && bytes[0] & 0x0f == 5)
        .cloned()
        .expect("the payload was delivered");
    (w, before, Script { datagram, ..script })
}

#[test]
fn a_copy_answers_as_the_original() {
    let (_, mut original, script) = connected_world();
    let mut copy = original.clone();
    let expected = script.run(&mut original);
    assert_eq!(expected.1, [pattern(100, 1)], "once: the replay is dropped");
    assert_eq!(expected.3, [Some(1)], "client 1 in slot 0");
    assert!(!expected.0.datagrams.is_empty());
    assert!(!expected.0.events.is_empty());
    assert_eq!(script.run(&mut copy), expected);
}

#[test]
fn a_snapshot_restored_in_place_answers_as_before_without_allocating() {
    let (mut w, snapshot, script) = connected_world();
    let expected = script.run(&mut snapshot.clone());
    // The world's server has moved on (the payload taken, then its client
    // gone and a restart with a new challenge key): restoring brings back
    // the snapshot's state exactly.
    let server = w.server_mut(0);
    assert_eq!(script.run(server).1, Vec::<Vec<u8>>::new(), "a replay now");
    let (allocations, ()) = counting_alloc::count(|| server.clone_from(&snapshot));
    assert_eq!(allocations, 0, "restored into the tables it has");
    assert_eq!(server.num_connected_clients(), 1);
    assert_eq!(script.run(server), expected);
}

#[test]
fn restoring_over_other_table_sizes_takes_the_snapshots_sizes() {
    let (w, snapshot, script) = connected_world();
    let mut other = Server::new(
        World::server_config(w.servers[0].address),
        HeapStorage::with_tables(4, 4, 3),
    )
    .unwrap();
    other.clone_from(&snapshot);
    assert_eq!(other.capacity(), snapshot.capacity());
    assert_eq!(
        other.token_history_capacity(),
        snapshot.token_history_capacity()
    );
    assert_eq!(script.run(&mut other), script.run(&mut snapshot.clone()));
}

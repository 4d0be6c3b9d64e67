//! A server sends a client a keep-alive only when it has sent it nothing
//! for the keep-alive interval (STANDARD.md: *Connected Clients*, "if no
//! packet has been sent to a client in the last 0.1 seconds"): a client
//! the server is sending payloads to gets none, however many clients the
//! server has, and an idle one gets about one per interval.

use netcode_proto::PacketType;
use netcode_proto::server::HeapStorage;

use crate::rig::Rig;

/// Keep-alives among what the server sent to client `n` of `rig`.
fn keep_alives_to(rig: &Rig<HeapStorage>, n: usize) -> usize {
    let to = rig.clients[n].0;
    rig.sent
        .iter()
        .filter(|(address, kind)| *address == to && *kind == PacketType::KeepAlive as u8)
        .count()
}

#[test]
fn a_client_the_server_sends_to_gets_no_keep_alive_and_an_idle_one_one_per_interval() {
    let mut rig = Rig::new(HeapStorage::new(64), 64);
    for n in 0..40 {
        rig.connect(n);
    }
    rig.sent.clear();
    // Two seconds of 10 ms frames: the first 20 clients get a payload every
    // 50 ms (half the interval), the others nothing.
    for frame in 0..200 {
        if frame % 5 == 0 {
            for slot in 0..20 {
                let now = rig.now;
                let sent = rig
                    .server
                    .send_payload(now, slot, &[7; 20], &mut rig.to_clients);
                assert!(sent.is_ok(), "slot {slot}: {sent:?}");
            }
        }
        rig.frame();
    }
    assert_eq!(rig.server.num_connected_clients(), 40);
    for n in 0..20 {
        assert_eq!(
            keep_alives_to(&rig, n),
            0,
            "client {n}, sent payloads every 50 ms"
        );
    }
    for n in 20..40 {
        let keep_alives = keep_alives_to(&rig, n);
        assert!(
            (19..=21).contains(&keep_alives),
            "client {n}, idle for 2 s: {keep_alives} keep-alives"
        );
    }
}

//! A smoke test of the UDP loopback bench (`benches/udp/`): every pairing
//! of server and clients (ours batched, one-per-call, std and tokio, the
//! peers, the floor) connects a few clients over 127.0.0.1 and echoes
//! payloads, and the rig's own unit tests run. Nothing is timed or
//! compared; `cargo bench -p netcode-bench --bench udp` measures.

#[path = "../../benches/udp/rig/mod.rs"]
mod rig;

use std::time::Duration;

use rig::Settings;
use rig::kinds::PAIRINGS;

#[test]
fn every_pairing_connects_and_echoes() {
    let settings = Settings {
        clients: 8,
        window: 4,
        warm_up: Duration::from_millis(50),
        measure: Duration::from_millis(100),
        syscall_window: None,
    };
    for pairing in PAIRINGS {
        assert_eq!(pairing.refusal(settings.clients), None, "{}", pairing.id());
        let m = rig::run(pairing, &settings).unwrap_or_else(|e| panic!("{}: {e}", pairing.id()));
        assert!(m.server_payloads > 0, "{}: {m:?}", pairing.id());
        assert!(m.echoes > 0, "{}: {m:?}", pairing.id());
        assert_eq!(m.wrong, 0, "{}: echoes of the wrong length", pairing.id());
        assert_eq!(m.connected_at_end, settings.clients, "{}", pairing.id());
        if pairing.server.counts_datagrams() {
            let datagrams = m.server_datagrams.unwrap_or(0);
            assert!(
                datagrams >= 2 * m.server_payloads,
                "{}: {m:?}",
                pairing.id()
            );
            assert!(
                m.server_calls.is_some_and(|c| c > 0),
                "{}: {m:?}",
                pairing.id()
            );
        }
    }
}

#[test]
fn servers_over_their_cap_are_refused_before_running() {
    let settings = Settings {
        clients: 4096,
        window: 1,
        warm_up: Duration::from_millis(1),
        measure: Duration::from_millis(1),
        syscall_window: None,
    };
    for pairing in PAIRINGS {
        let Some(cap) = pairing.server.max_clients() else {
            continue;
        };
        if cap < settings.clients {
            let refusal = pairing.refusal(settings.clients).expect("refused");
            assert!(refusal.contains(&cap.to_string()), "{refusal}");
            let error = rig::run(pairing, &settings).expect_err("refused");
            assert_eq!(error, refusal);
        }
    }
}

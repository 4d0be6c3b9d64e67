//! A smoke test of the UDP loopback bench (`benches/udp/`): every pairing
//! of server and clients connects a few clients over 127.0.0.1 and echoes
//! payloads. Nothing is timed or compared; `cargo bench -p netcode-bench
//! --bench udp` measures.

#[path = "../benches/udp/rig.rs"]
mod rig;

use std::time::Duration;

use rig::{PAIRINGS, Settings};

#[test]
fn every_pairing_connects_and_echoes() {
    let settings = Settings {
        clients: 8,
        window: 4,
        warm_up: Duration::from_millis(50),
        measure: Duration::from_millis(100),
    };
    for pairing in PAIRINGS {
        let m = rig::run(pairing, &settings).unwrap_or_else(|e| panic!("{}: {e}", pairing.id()));
        assert!(m.server_payloads > 0, "{}: {m:?}", pairing.id());
        assert!(m.echoes > 0, "{}: {m:?}", pairing.id());
        assert_eq!(m.wrong, 0, "{}: echoes of the wrong length", pairing.id());
        assert_eq!(m.connected_at_end, settings.clients, "{}", pairing.id());
    }
}

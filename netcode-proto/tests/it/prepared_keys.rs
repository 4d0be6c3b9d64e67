//! The prepared receive keys of connected clients (`Tables::prepared_keys`):
//! `HeapStorage` grows its table with the clients connected at once and
//! allocates only when that count reaches a new high, and a client whose
//! slot the table does not reach is served the same way, its key set up
//! per packet (STANDARD.md: *Connected Clients*, *Packet Processing*).

use netcode_proto::server::{ClientSlot, HeapStorage, ServerStorage, Tables};
use netcode_proto::session::Sent;

use crate::rig::{Outbox, Rig};

#[test]
fn heap_storage_grows_its_prepared_keys_with_the_clients_connected_at_once() {
    let mut rig = Rig::new(HeapStorage::new(256), 256);
    assert_eq!(
        rig.server.storage().prepared_key_slots(),
        0,
        "none before a connection"
    );

    rig.connect(0);
    assert_eq!(rig.server.storage().prepared_key_slots(), 16);
    for n in 1..40 {
        rig.connect(n);
    }
    assert_eq!(rig.server.num_connected_clients(), 40);
    // 16 reached on the first connection, then doubled to 32 and 64.
    assert_eq!(rig.server.storage().prepared_key_slots(), 64);
    assert_eq!(rig.server_allocations, 3, "one allocation per new high");

    // Clients leaving and others taking their slots allocate nothing.
    for client in 0..10 {
        rig.disconnect(client);
    }
    assert_eq!(rig.server.num_connected_clients(), 30);
    for n in 40..50 {
        rig.connect(n);
    }
    rig.send_payloads();
    assert_eq!(rig.server.num_connected_clients(), 40);
    assert_eq!(rig.server.storage().prepared_key_slots(), 64);
    assert_eq!(rig.server_allocations, 3, "no allocation below the high");
    assert_eq!(rig.payloads_echoed, 40);
}

#[test]
fn heap_storage_never_grows_its_prepared_keys_past_the_slots() {
    let mut rig = Rig::new(HeapStorage::new(5), 5);
    for n in 0..5 {
        rig.connect(n);
    }
    assert_eq!(rig.server.storage().prepared_key_slots(), 5);
    let mut reserved = HeapStorage::new(5);
    reserved.reserve_prepared_keys(1000);
    assert_eq!(reserved.prepared_key_slots(), 5);
}

/// Storage whose prepared key table reaches only the first `reach` slots.
struct ShortKeyTable {
    inner: HeapStorage,
    reach: usize,
}

impl ServerStorage for ShortKeyTable {
    fn tables(&mut self) -> Tables<'_> {
        let mut tables = self.inner.tables();
        let keys = std::mem::take(&mut tables.prepared_keys);
        let reach = self.reach.min(keys.len());
        tables.prepared_keys = &mut keys[..reach];
        tables
    }

    fn slots(&self) -> &[ClientSlot] {
        self.inner.slots()
    }

    fn reach_prepared_key(&mut self, index: usize) {
        self.inner.reach_prepared_key(index);
    }
}

#[test]
fn a_client_past_the_prepared_keys_is_served_with_its_key_set_up_per_packet() {
    for reach in [0, 2] {
        let storage = ShortKeyTable {
            inner: HeapStorage::new(4),
            reach,
        };
        let mut rig = Rig::new(storage, 4);
        for n in 0..4 {
            rig.connect(n);
        }
        for _ in 0..3 {
            rig.send_payloads();
        }
        assert_eq!(
            rig.payloads_echoed, 12,
            "reach {reach}: every payload echoed"
        );
        assert_eq!(rig.server.num_connected_clients(), 4);

        // A replayed datagram is refused past the table as within it.
        let (from, client, outbox) = &mut rig.clients[3];
        let now = rig.now;
        assert_eq!(
            client.send_payload(now, &[1; 10], outbox),
            Ok(Sent::Network)
        );
        let (_, datagram) = outbox.datagrams.pop().unwrap();
        let from = *from;
        let mut first = datagram.clone();
        let mut again = datagram;
        let mut sink = Outbox::default();
        assert!(
            rig.server
                .handle(now, from, &mut first, &mut sink)
                .is_some()
        );
        assert!(
            rig.server
                .handle(now, from, &mut again, &mut sink)
                .is_none()
        );
    }
}

//! The client and server never allocate while handling packets, updating or
//! sending: a counting global allocator watches a whole session after setup.

use netcode_proto::Instant;
use std::net::SocketAddr;

use netcode_proto::Key;
use netcode_proto::client::{Client, ClientState};
use netcode_proto::seeded::SeededRng;
use netcode_proto::server::{HeapStorage, Server, ServerConfig};
use netcode_proto::session::Sent;
use netcode_proto::token::{ConnectTokenParams, generate_connect_token};

use crate::rig::Mailbox;

#[test]
fn handle_update_and_send_allocate_nothing() {
    let server_address: SocketAddr = "127.0.0.1:40000".parse().unwrap();
    let client_address: SocketAddr = "127.0.0.1:50000".parse().unwrap();
    let key = Key::from_bytes([3; 32]);
    let mut rng = SeededRng::new(1);
    // The prepared key table otherwise grows on the first connection.
    let mut storage = HeapStorage::new(16);
    storage.reserve_prepared_keys(16);
    let mut server =
        Server::new(ServerConfig::new(7, key.clone(), server_address), storage).unwrap();
    let mut client = Client::new();
    let mut to_server = Mailbox::new();
    let mut to_client = Mailbox::new();
    let unix = 1_800_000_000;
    let params = ConnectTokenParams {
        protocol_id: 7,
        private_key: &key,
        client_id: 5,
        public_addresses: &[server_address],
        internal_addresses: None,
        create_timestamp: unix,
        expire_seconds: 30,
        timeout_seconds: 10,
        user_data: &[0; 256],
    };
    let token = generate_connect_token(&params, &mut rng)
        .unwrap()
        .write()
        .unwrap();

    let (allocations, received) = counting_alloc::count(|| {
        // Started the second before the token was minted: the restart
        // rule refuses tokens minted in the start second.
        server
            .start(Instant::ZERO, unix - 1, 16, &mut rng, &mut to_client)
            .unwrap();
        client
            .connect(Instant::ZERO, &token, &mut to_server)
            .unwrap();
        let mut received = 0;
        for frame in 1..200u64 {
            let now = Instant::from_millis(frame * 50);
            for i in 0..to_server.count {
                let (_, mut bytes, n) = to_server.datagrams[i];
                if let Some((index, payload)) =
                    server.handle(now, client_address, &mut bytes[..n], &mut to_client)
                {
                    received += payload.data.len();
                    let _ = server.send_payload(now, index, payload.data, &mut to_client);
                }
            }
            to_server.count = 0;
            for i in 0..to_client.count {
                let (_, mut bytes, n) = to_client.datagrams[i];
                if let Some(payload) =
                    client.handle(now, server_address, &mut bytes[..n], &mut to_server)
                {
                    received += payload.data.len();
                }
            }
            to_client.count = 0;
            client.update(now, &mut to_server);
            server.update(now, unix, &mut to_client);
            if client.state() == ClientState::Connected {
                let sent = client.send_payload(now, &[frame as u8; 100], &mut to_server);
                assert_eq!(sent, Ok(Sent::Network));
            }
            let _ = client.next_deadline();
            let _ = server.next_deadline();
        }
        client.disconnect(Instant::from_secs(11), &mut to_server);
        server.stop(Instant::from_secs(11), &mut to_client);
        received
    });

    assert!(
        received > 100 * 100,
        "the session really exchanged payloads: {received}"
    );
    assert_eq!(allocations, 0, "allocations during the session");
}

//! Our std client and server against the official Rust port (`netcode-official`
//! on crates.io) over 127.0.0.1 UDP: handshakes, 1200-byte payloads both
//! ways checked byte for byte, disconnects from either side, tokens from
//! either generator, and refusals for the wrong protocol id or key. The
//! scenarios in both directions are in `common`, shared with the mio
//! transport's run in `official_mio.rs`.

use std::time::{Duration, Instant};

use crate::common::*;
use netcode as official;
use netcode_std::proto::Key;
use netcode_std::{Client, ClientState, Server, ServerConfig};

/// Our std server, started by `start`: the tokens it is given here are
/// their generator's, stamped with their clock, so it must have left the
/// restart rule's second before they are made.
fn our_server() -> Server {
    let config = ServerConfig::new(PROTOCOL_ID, Key::from_bytes(PRIVATE_KEY));
    let mut server = Server::new("127.0.0.1:0", config).expect("bind our server");
    server.start(4).expect("start our server");
    server
}

#[test]
fn their_client_connects_to_our_server_with_their_token() {
    their_client_talks_to_our_server_then_leaves(&mut our_server());
}

#[test]
fn our_client_connects_to_their_server_with_our_token() {
    our_client_talks_to_their_server_then_is_kicked(&mut Client::new("127.0.0.1:0").unwrap());
}

#[test]
fn our_client_connects_to_our_server_with_their_token_and_theirs_with_ours() {
    // Their generator's token at our server (from our client), and our
    // generator's token at their server (from their client).
    let mut ours = our_server();
    let mut client = Client::new("127.0.0.1:0").unwrap();
    client
        .connect(&their_token(
            ours.public_address(),
            PROTOCOL_ID,
            &PRIVATE_KEY,
        ))
        .unwrap();
    run_until(
        "their token admits our client to our server",
        Instant::now(),
        |t| {
            client.update(t);
            ours.update(t);
            client.state() == ClientState::Connected && ours.client_connected(0)
        },
    );

    let mut theirs = their_server();
    let mut their_client = official::Client::new("127.0.0.1:0".parse().unwrap(), 0.0).unwrap();
    their_client
        .connect(&our_token(theirs.address(), PROTOCOL_ID, &PRIVATE_KEY))
        .unwrap();
    run_until(
        "our token admits their client to their server",
        Instant::now(),
        |t| {
            their_client.update(t);
            theirs.update(t);
            their_client.state() == official::ClientState::Connected && theirs.client_connected(0)
        },
    );
    assert_eq!(theirs.client_user_data(0), Some(&[9; 256]));
}

#[test]
fn wrong_protocol_id_or_key_never_connects_either_way() {
    let other_key = [0x33; 32];
    for (protocol_id, key) in [(PROTOCOL_ID + 1, &PRIVATE_KEY), (PROTOCOL_ID, &other_key)] {
        // Their client, bad token, our server.
        let mut server = our_server();
        let mut client = official::Client::new("127.0.0.1:0".parse().unwrap(), 0.0).unwrap();
        client
            .connect(&their_token(server.public_address(), protocol_id, key))
            .unwrap();
        run_for(Duration::from_millis(700), Instant::now(), |t| {
            client.update(t);
            server.update(t);
            assert_ne!(client.state(), official::ClientState::Connected);
            assert!(!server.client_connected(0));
        });
        assert!(
            server.stats().dropped_total() > 0,
            "our server dropped the requests"
        );

        // Our client, bad token, their server.
        let mut server = their_server();
        let mut client = Client::new("127.0.0.1:0").unwrap();
        client
            .connect(&our_token(server.address(), protocol_id, key))
            .unwrap();
        run_for(Duration::from_millis(700), Instant::now(), |t| {
            client.update(t);
            server.update(t);
            assert_ne!(client.state(), ClientState::Connected);
            assert!(!server.client_connected(0));
        });
        assert_eq!(client.state(), ClientState::SendingConnectionRequest);
    }
}

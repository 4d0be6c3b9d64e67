//! Once a connection is up and the payload pools are warm, a turn of a mio
//! event loop allocates nothing: polling, draining the sockets on readable
//! events, decrypting, queueing payloads in recycled buffers, sending,
//! keep-alives.

use std::time::Duration;

use crate::common::*;
use mio::Token;
use netcode_mio::{Client, ClientConfig, ClientState, Registered, Server};

#[test]
fn a_connected_turn_allocates_nothing() {
    let mut event_loop = EventLoop::new();
    let registry = event_loop.registry();
    let mut server = Server::new("127.0.0.1:0", config(), registry, Token(0)).unwrap();
    let admitted = start_nowait(&mut server, 4);
    let mut client =
        Client::new("127.0.0.1:0", ClientConfig::default(), registry, Token(1)).unwrap();
    client
        .connect(&admitted.token(1, &[server.public_address()]))
        .unwrap();
    event_loop.run_until("connected", |event_loop| {
        event_loop.turn(&mut [&mut server, &mut client], None);
        client.state() == ClientState::Connected
    });
    while server.poll_event().is_some() {}
    while client.poll_event().is_some() {}
    let slot = client.client_index();
    let to_server = pattern(1200, 3);
    let to_client = pattern(700, 4);
    let (mut got_server, mut got_client) = (0, 0);

    assert_frames_allocate_nothing(|| {
        let cap = Some(Duration::from_millis(1));
        event_loop.turn(&mut [&mut server, &mut client], cap);
        client.send_packet(&to_server).unwrap();
        server.send_packet(slot, &to_client).unwrap();
        got_server += take_server_payloads(&mut server, slot, &to_server);
        got_client += take_payloads(&mut client, &to_client);
    });
    assert!(got_server > 300 && got_client > 300);
    assert_eq!(client.state(), ClientState::Connected);
}

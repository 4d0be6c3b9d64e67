//! Once a connection is up and the payload pools are warm, a frame of
//! real-UDP traffic allocates nothing: reading datagrams, decrypting,
//! queueing payloads in recycled buffers, sending, keep-alives.

use std::time::Instant;

use crate::common::*;
use netcode_std::{Client, ClientState, Server};

#[test]
fn a_connected_frame_allocates_nothing() {
    let epoch = Instant::now();
    let mut server = Server::new("127.0.0.1:0", config()).unwrap();
    let admitted = start_nowait(&mut server, 4);
    let mut client = Client::new("127.0.0.1:0").unwrap();
    client
        .connect(&admitted.token(1, &[server.public_address()]))
        .unwrap();
    connect_all(epoch, &mut server, &mut [&mut client]);
    while server.poll_event().is_some() {}
    while client.poll_event().is_some() {}
    let slot = client.client_index();
    let to_server = pattern(1200, 3);
    let to_client = pattern(700, 4);
    let (mut got_server, mut got_client) = (0u64, 0u64);

    assert_frames_allocate_nothing(|| {
        let now = seconds(epoch);
        client.update(now);
        server.update(now);
        client.send_packet(&to_server).unwrap();
        server.send_packet(slot, &to_client).unwrap();
        while let Some(packet) = server.receive_packet(slot) {
            assert_eq!(packet.data(), &to_server[..]);
            got_server += 1;
            server.free_packet(packet);
        }
        while let Some(packet) = client.receive_packet() {
            assert_eq!(packet.data(), &to_client[..]);
            got_client += 1;
            client.free_packet(packet);
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    });
    assert!(got_server > 300 && got_client > 300);
    assert_eq!(client.state(), ClientState::Connected);
}

//! The host layer (netcode-std's `Server` and `Client`, as every transport
//! runs them) on an in-memory network, fed datagrams and times of any
//! value, NaN and infinities included.
//!
//! A server (2 slots) and a client with a token for it start each input.
//! The input is a list of operations, each a byte `op` (low three bits the
//! kind) and what it reads:
//!
//! * 0, 1: `update` of the server (0) or the client (1) at a time from the
//!   input: a `u64` read as the bits of an `f64`, so any value.
//! * 2: a sane step of the test's own clock (`u16` milliseconds), then
//!   `update` of both at it.
//! * 3: a raw datagram to the server (a `u16` length mod 1400 and that
//!   many bytes), from the client's address or a stranger's (`op` bit 3).
//! * 4: a raw datagram to the client, from the server's address or a
//!   stranger's.
//! * 5: the server's calls: a payload to slot 0 or 1, a batch of payloads
//!   to both, disconnecting a slot or all, stopping, starting again.
//! * 6: the client's calls: a payload, disconnecting, connecting again.
//! * 7: `drain_socket` of the server or client at an arbitrary time.
//!
//! Nothing may panic, the slot count stays sound, and afterwards, on a sane
//! clock, a client that goes silent is timed out by the server within its
//! timeout and the one step a bogus time may cost.

use std::net::SocketAddr;

use netcode_proto::constants::MAX_PAYLOAD_BYTES;
use netcode_std::transport::memory::MemoryNetwork;
use netcode_std::{
    BindMode, Client, ClientConfig, ConnectTokenBuilder, Key, MAX_TIME_STEP, Server, ServerConfig,
};

use netcode_proto::sim::fixtures::{PRIVATE_KEY, PROTOCOL_ID};

use crate::Cursor;

/// Slots of the host target's server.
const SLOTS: usize = 2;

/// The token's timeout in seconds.
const TIMEOUT: i32 = 2;

/// A stranger's address, for spoofed and stray datagrams.
const STRANGER: SocketAddr = SocketAddr::V4(std::net::SocketAddrV4::new(
    std::net::Ipv4Addr::new(10, 1, 2, 3),
    4567,
));

/// The `host` fuzz target: runs one input, panicking on a failed check.
pub fn host(data: &[u8]) {
    let net = MemoryNetwork::new();
    let key = Key::from_bytes(PRIVATE_KEY);
    let mut config = ServerConfig::new(PROTOCOL_ID, key.clone());
    config.bind_mode = BindMode::Exact;
    let Ok(mut server) = Server::bind_with("127.0.0.1:0", None::<&str>, config, net.adopt()) else {
        return; // no loopback socket here: nothing to test
    };
    // Without waiting for the next second: the harness issues its tokens
    // as of the second the restart rule admits from.
    let Ok(admitted_from) = server.start_nowait(SLOTS) else {
        return;
    };
    let Ok(mut client) = Client::bind_with(
        "127.0.0.1:0",
        None::<&str>,
        ClientConfig::default(),
        net.adopt(),
    ) else {
        return;
    };
    let (server_address, client_address) = (server.public_address(), client.local_addr());
    let token = |id: u64| {
        ConnectTokenBuilder::new(PROTOCOL_ID, &key, id)
            .server_addresses([server_address])
            .timeout_seconds(TIMEOUT)
            .issued_at(admitted_from)
            .generate()
            .expect("harness: token parameters are valid")
    };
    let _ = client.connect(&token(1));

    let mut input = Cursor::new(data);
    let mut sane = 0.0f64;
    let mut payload = [0u8; MAX_PAYLOAD_BYTES];
    while !input.is_empty() {
        let op = input.u8();
        let from_stranger = op & 8 != 0;
        match op & 7 {
            0 => server.update(f64::from_bits(input.u64())),
            1 => client.update(f64::from_bits(input.u64())),
            2 => {
                sane += f64::from(input.u16()) / 1000.0;
                client.update(sane);
                server.update(sane);
            }
            3 | 4 => {
                let len = usize::from(input.u16()) % 1400;
                let datagram = input.take(len);
                let (to, peer) = if op & 7 == 3 {
                    (server_address, client_address)
                } else {
                    (client_address, server_address)
                };
                net.inject(if from_stranger { STRANGER } else { peer }, to, datagram);
            }
            5 => {
                let call = input.u8();
                let slot = usize::from(call >> 4) % (SLOTS + 1);
                let len = 1 + usize::from(input.u16()) % (MAX_PAYLOAD_BYTES + 1);
                let data = &mut payload[..len.min(MAX_PAYLOAD_BYTES)];
                data.fill(call);
                match call % 6 {
                    0 => {
                        let _ = server.send_packet(slot, data);
                    }
                    1 => {
                        let mut batch = server.batch();
                        for slot in 0..SLOTS {
                            let _ = batch.send_packet(slot, data);
                        }
                    }
                    2 => server.disconnect_client(slot),
                    3 => server.disconnect_all_clients(),
                    4 => server.stop(),
                    _ => {
                        let _ = server.start_nowait(1 + slot % SLOTS);
                    }
                }
            }
            6 => {
                let call = input.u8();
                match call % 3 {
                    0 => {
                        let len = usize::from(input.u16()) % (MAX_PAYLOAD_BYTES + 2);
                        let _ = client.send_packet(&payload[..len.min(MAX_PAYLOAD_BYTES)]);
                    }
                    1 => client.disconnect(),
                    _ => {
                        let _ = client.connect(&token(u64::from(call >> 2) + 1));
                    }
                }
            }
            _ => {
                let time = f64::from_bits(input.u64());
                if from_stranger {
                    client.drain_socket(time);
                } else {
                    server.drain_socket(time, netcode_std::Family::V4);
                }
            }
        }
        while let Some(packet) = server.receive_packet(0) {
            assert!((1..=MAX_PAYLOAD_BYTES).contains(&packet.len()));
            server.free_packet(packet);
        }
        while let Some(packet) = client.receive_packet() {
            assert!((1..=MAX_PAYLOAD_BYTES).contains(&packet.len()));
            client.free_packet(packet);
        }
        while server.poll_event().is_some() {}
        while client.poll_event().is_some() {}
        assert!(server.num_connected_clients() <= server.max_clients());
    }

    // Whatever came before: on a sane clock, a silent client is timed out.
    net.mute(client_address);
    let bound = f64::from(TIMEOUT) + MAX_TIME_STEP.as_secs_f64() + 0.5;
    let mut waited = 0.0;
    while server.num_connected_clients() > 0 {
        assert!(
            waited <= bound,
            "a silent client still holds a slot after {waited} s"
        );
        sane += 0.1;
        waited += 0.1;
        server.update(sane);
    }
}

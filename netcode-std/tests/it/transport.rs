//! The transport seam: servers and clients on sockets of another type,
//! made with `bind_with`, drained with `drain_socket`, asked for their
//! `poll_timeout`.

use std::cell::Cell;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use crate::common::*;
use netcode_std::transport::Socket;
use netcode_std::{Client, ClientConfig, ClientState, CreateError, Family, Server};

/// A real socket in front of which `flood` junk datagrams wait to be read.
#[derive(Debug)]
struct Flooded {
    socket: UdpSocket,
    flood: Cell<usize>,
}

impl Socket for Flooded {
    fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<usize> {
        self.socket.send_to(datagram, to)
    }

    fn recv_from(&self, buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        match self.flood.get() {
            0 => self.socket.recv_from(buffer),
            n => {
                self.flood.set(n - 1);
                buffer[..40].fill(0xee);
                Ok((40, SocketAddr::from(([127, 0, 0, 1], 9))))
            }
        }
    }
}

fn flooded(_: Family, socket: UdpSocket) -> io::Result<Flooded> {
    Ok(Flooded {
        socket,
        flood: Cell::new(0),
    })
}

fn refuse(_: Family, _: UdpSocket) -> io::Result<UdpSocket> {
    Err(io::Error::other("no room in the event loop"))
}

#[test]
fn a_failed_adoption_is_a_register_error() {
    let e = Server::bind_with("127.0.0.1:0", None::<&str>, config(), refuse).unwrap_err();
    assert!(matches!(
        e,
        CreateError::Register {
            family: Family::V4,
            ..
        }
    ));
    assert!(e.to_string().contains("register"), "{e}");
    assert!(std::error::Error::source(&e).is_some());
    if ipv6_available(module_path!()) {
        let mut calls = 0;
        let second_fails = |_: Family, socket: UdpSocket| {
            calls += 1;
            if calls == 2 {
                refuse(Family::V6, socket)
            } else {
                Ok(socket)
            }
        };
        let e = Client::bind_with(
            "127.0.0.1:0",
            Some("[::1]:0"),
            ClientConfig::default(),
            second_fails,
        )
        .unwrap_err();
        assert!(matches!(
            e,
            CreateError::Register {
                family: Family::V6,
                ..
            }
        ));
    }
}

/// A drain stops at its limit; `poll_timeout` is zero until the rest is
/// read, and the junk is dropped and counted.
#[test]
fn a_drain_that_stops_at_its_limit_leaves_work_due_now() {
    let mut server = Server::bind_with("127.0.0.1:0", None::<&str>, config(), flooded).unwrap();
    start_nowait(&mut server, 2);
    assert_eq!(server.poll_timeout(0.0), None, "no clients: nothing due");
    let socket = server.socket(Family::V4).unwrap();
    socket.flood.set(20_000);
    server.drain_socket(0.5, Family::V4);
    let read = server.transport_stats().datagrams_received;
    assert!(read > 0 && read < 20_000, "{read}");
    assert_eq!(server.poll_timeout(0.5), Some(Duration::ZERO));
    server.drain_socket(0.5, Family::V4);
    assert_eq!(server.transport_stats().datagrams_received, 20_000);
    assert_eq!(server.poll_timeout(0.5), None);
    assert_eq!(server.stats().dropped_total(), 20_000);
    assert!(server.socket(Family::V6).is_none());

    let mut client = Client::bind_with(
        "127.0.0.1:0",
        None::<&str>,
        ClientConfig::default(),
        flooded,
    )
    .unwrap();
    client.socket(Family::V4).unwrap().flood.set(1_500);
    client.drain_socket(0.0);
    assert_eq!(
        client.transport_stats().datagrams_received,
        0,
        "a client with no server reads nothing"
    );
    client
        .connect(&token(1, &["127.0.0.1:9".parse().unwrap()]))
        .unwrap();
    client.update(0.0);
    let first = client.transport_stats().datagrams_received;
    assert!(first > 0 && first < 1_500, "{first}");
    assert_eq!(client.poll_timeout(0.0), Some(Duration::ZERO));
    client.drain_socket(0.0);
    assert_eq!(client.transport_stats().datagrams_received, 1_500);
    assert!(client.poll_timeout(0.0) > Some(Duration::ZERO));
}

/// `poll_timeout` follows the core's deadlines on the caller's clock.
#[test]
fn poll_timeout_counts_down_to_the_next_packet() {
    let epoch = Instant::now();
    let mut server = Server::new("127.0.0.1:0", config()).unwrap();
    let admitted = start_nowait(&mut server, 2);
    let mut client = Client::new("127.0.0.1:0").unwrap();
    assert_eq!(client.poll_timeout(0.0), None, "disconnected: idle");
    client
        .connect(&admitted.token(1, &[server.public_address()]))
        .unwrap();
    assert_eq!(
        client.poll_timeout(0.0),
        Some(Duration::ZERO),
        "the request is due"
    );
    connect_all(epoch, &mut server, &mut [&mut client]);
    let now = seconds(epoch);
    client.update(now);
    server.update(now);
    for timeout in [client.poll_timeout(now), server.poll_timeout(now)] {
        let timeout = timeout.expect("a connection has deadlines");
        assert!(timeout <= Duration::from_millis(101), "{timeout:?}");
    }
    let later = now + 1.0;
    assert_eq!(server.poll_timeout(later), Some(Duration::ZERO));
    assert_eq!(client.poll_timeout(later), Some(Duration::ZERO));
    assert_eq!(client.state(), ClientState::Connected);
}

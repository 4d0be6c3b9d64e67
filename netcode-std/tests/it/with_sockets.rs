//! Servers and clients made with `with_sockets`: sockets a transport makes
//! itself, nothing bound. Here the transport is the test's own queue of
//! datagrams between addresses that are not local to this machine, which
//! no system socket could bind.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Instant;

use crate::common::*;
use netcode_std::transport::Socket;
use netcode_std::{Client, ClientState, CreateError, Family, Server};

/// Datagrams waiting for each address, with their sender.
type Queues = Rc<RefCell<HashMap<SocketAddr, VecDeque<(Vec<u8>, SocketAddr)>>>>;

/// A socket of the test's network: sends push to the receiver's queue,
/// reads pop its own.
#[derive(Debug)]
struct Queued {
    queues: Queues,
    local: SocketAddr,
}

impl Socket for Queued {
    fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<usize> {
        let mut queues = self.queues.borrow_mut();
        let queue = queues.entry(to).or_default();
        queue.push_back((datagram.to_vec(), self.local));
        Ok(datagram.len())
    }

    fn recv_from(&self, buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        let mut queues = self.queues.borrow_mut();
        let Some((datagram, from)) = queues.get_mut(&self.local).and_then(VecDeque::pop_front)
        else {
            return Err(io::ErrorKind::WouldBlock.into());
        };
        let len = datagram.len().min(buffer.len());
        buffer[..len].copy_from_slice(&datagram[..len]);
        Ok((len, from))
    }
}

/// The `make` function of a network's sockets: records what it was asked
/// for.
fn maker(
    queues: &Queues,
    asked: &RefCell<Vec<(Family, SocketAddr)>>,
) -> impl FnMut(Family, SocketAddr) -> io::Result<Queued> {
    move |family, local| {
        asked.borrow_mut().push((family, local));
        Ok(Queued {
            queues: queues.clone(),
            local,
        })
    }
}

#[test]
fn a_server_and_a_client_on_unbound_sockets_exchange_payloads() {
    let queues = Queues::default();
    let asked = RefCell::new(Vec::new());
    let server_address: SocketAddr = "10.200.0.1:40000".parse().unwrap();
    let mut server = Server::with_sockets(
        server_address,
        None::<&str>,
        config(),
        maker(&queues, &asked),
    )
    .unwrap();
    assert_eq!(asked.borrow()[..], [(Family::V4, server_address)]);
    assert_eq!(server.public_address(), server_address);
    assert_eq!(server.local_addr(), server_address);
    assert_eq!(server.port(), 40000);
    let admitted = start_nowait(&mut server, 4);

    let client_address: SocketAddr = "10.200.0.2:50000".parse().unwrap();
    let mut client =
        Client::with_sockets(client_address, None::<&str>, maker(&queues, &asked)).unwrap();
    assert_eq!(client.local_addr(), client_address);
    assert_eq!(client.port(), 50000);
    client
        .connect(&admitted.token(7, &[server_address]))
        .unwrap();

    let epoch = Instant::now();
    run_until("the client connected", epoch, |now| {
        client.update(now);
        server.update(now);
        client.state() == ClientState::Connected
    });
    assert_eq!(server.num_connected_clients(), 1);

    let payload = pattern(100, 3);
    client.send_packet(&payload).unwrap();
    server.update(seconds(epoch));
    let (index, packet) = server
        .receive_any()
        .expect("the payload reached the server");
    assert_eq!((index, packet.data()), (0, &payload[..]));
    server.send_packet(0, &payload[..50]).unwrap();
    client.update(seconds(epoch));
    let packet = client
        .receive_packet()
        .expect("the answer reached the client");
    assert_eq!(packet.data(), &payload[..50]);
}

#[test]
fn with_sockets_keeps_the_checks_of_the_binding_constructors() {
    let queues = Queues::default();
    let asked = RefCell::new(Vec::new());
    let e = Server::with_sockets(
        "0.0.0.0:40000",
        None::<&str>,
        config(),
        maker(&queues, &asked),
    )
    .unwrap_err();
    assert!(
        matches!(e, CreateError::UnspecifiedPublicAddress { .. }),
        "{e}"
    );
    let e =
        Client::with_sockets("10.0.0.1:1", Some("10.0.0.2:2"), maker(&queues, &asked)).unwrap_err();
    assert!(matches!(e, CreateError::SameFamily(Family::V4)), "{e}");
    let e =
        Client::with_sockets("not an address", None::<&str>, maker(&queues, &asked)).unwrap_err();
    assert!(matches!(e, CreateError::ParseAddress(_)), "{e}");
    assert!(
        asked.borrow().is_empty(),
        "nothing made for refused addresses"
    );

    let refuse = |family, _| -> io::Result<Queued> {
        assert_eq!(family, Family::V6);
        Err(io::Error::other("no such peer"))
    };
    let e = Server::with_sockets("[fd00::1]:40000", None::<&str>, config(), refuse).unwrap_err();
    assert!(
        matches!(
            e,
            CreateError::CreateSocket {
                family: Family::V6,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn a_dual_client_on_unbound_sockets_has_one_per_family() {
    let queues = Queues::default();
    let asked = RefCell::new(Vec::new());
    let client =
        Client::with_sockets("[fd00::2]:0", Some("10.0.0.2:0"), maker(&queues, &asked)).unwrap();
    assert_eq!(
        asked.borrow()[..],
        [
            (Family::V6, "[fd00::2]:0".parse().unwrap()),
            (Family::V4, "10.0.0.2:0".parse().unwrap()),
        ]
    );
    assert!(client.socket(Family::V4).is_some() && client.socket(Family::V6).is_some());
    assert_eq!(client.port(), 0, "port 0 stays 0: nothing was bound");
}

//! An in-memory network behind the `transport::Socket` seam: the real host
//! (clock, queues, batches, logging) on virtual time, with instant,
//! lossless delivery and nothing left to chance. Each socket keeps the
//! address the OS bound for it, so addresses are unique; servers bind
//! exactly (`BindMode::Exact`), so their socket's address is the public
//! address clients send to.
#![allow(dead_code, unreachable_pub)]

use std::cell::RefCell;
use std::collections::{HashMap, HashSet, VecDeque};
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::rc::Rc;

use netcode_std::transport::Socket;
use netcode_std::{BindMode, Client, ClientConfig, ClientState, Family, Server, ServerConfig};

/// Datagrams waiting at one address, with their senders.
type Queue = VecDeque<(SocketAddr, Vec<u8>)>;

/// The datagrams in flight, by destination.
#[derive(Debug, Default)]
pub struct Net {
    queues: RefCell<HashMap<SocketAddr, Queue>>,
    /// Addresses whose sends are lost (a peer gone silent).
    muted: RefCell<HashSet<SocketAddr>>,
}

impl Net {
    pub fn new() -> Rc<Self> {
        Rc::new(Self::default())
    }

    /// Loses everything `address` sends from now on.
    pub fn mute(&self, address: SocketAddr) {
        self.muted.borrow_mut().insert(address);
    }

    /// Delivers a datagram to `to` as if from `from`.
    pub fn inject(&self, from: SocketAddr, to: SocketAddr, datagram: &[u8]) {
        self.queues
            .borrow_mut()
            .entry(to)
            .or_default()
            .push_back((from, datagram.to_vec()));
    }
}

/// A socket on a [`Net`].
#[derive(Debug)]
pub struct MemorySocket {
    local: SocketAddr,
    net: Rc<Net>,
}

impl Socket for MemorySocket {
    fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<usize> {
        if !self.net.muted.borrow().contains(&self.local) {
            self.net.inject(self.local, to, datagram);
        }
        Ok(datagram.len())
    }

    fn recv_from(&self, buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        let mut queues = self.net.queues.borrow_mut();
        let (from, datagram) = queues
            .get_mut(&self.local)
            .and_then(VecDeque::pop_front)
            .ok_or(io::ErrorKind::WouldBlock)?;
        let n = datagram.len().min(buffer.len());
        buffer[..n].copy_from_slice(&datagram[..n]);
        Ok((n, from))
    }
}

/// The `adopt` function that puts a bound socket's address on `net`.
pub fn on(net: &Rc<Net>) -> impl FnMut(Family, UdpSocket) -> io::Result<MemorySocket> + '_ {
    move |_, socket| {
        Ok(MemorySocket {
            local: socket.local_addr()?,
            net: Rc::clone(net),
        })
    }
}

/// A server on `net` at 127.0.0.1 with `slots` slots, started.
pub fn server(net: &Rc<Net>, config: ServerConfig, slots: usize) -> Server<MemorySocket> {
    let mut config = config;
    config.bind_mode = BindMode::Exact;
    let mut server = Server::bind_with("127.0.0.1:0", None::<&str>, config, on(net)).unwrap();
    server.start(slots).unwrap();
    server
}

/// A client on `net` at 127.0.0.1.
pub fn client(net: &Rc<Net>) -> Client<MemorySocket> {
    Client::bind_with(
        "127.0.0.1:0",
        None::<&str>,
        ClientConfig::default(),
        on(net),
    )
    .unwrap()
}

/// Virtual time in seconds, stepped by the tests.
#[derive(Debug, Clone, Copy)]
pub struct Clock(pub f64);

impl Clock {
    /// Moves on by `dt` and returns the new time.
    pub fn tick(&mut self, dt: f64) -> f64 {
        self.0 += dt;
        self.0
    }
}

/// Steps `clock` by 0.05 s (at most `ticks` times), updating every client
/// in `clients` and then `server`, until `done`; returns whether it was.
pub fn run(
    clock: &mut Clock,
    ticks: usize,
    server: &mut Server<MemorySocket>,
    clients: &mut [&mut Client<MemorySocket>],
    mut done: impl FnMut(&mut Server<MemorySocket>, &mut [&mut Client<MemorySocket>]) -> bool,
) -> bool {
    for _ in 0..ticks {
        let t = clock.tick(0.05);
        for client in clients.iter_mut() {
            client.update(t);
        }
        server.update(t);
        if done(server, clients) {
            return true;
        }
    }
    false
}

/// Whether every client is connected.
pub fn all_connected(
    _: &mut Server<MemorySocket>,
    clients: &mut [&mut Client<MemorySocket>],
) -> bool {
    clients.iter().all(|c| c.state() == ClientState::Connected)
}

//! A simulated network behind netcode-std's `transport::Socket` seam:
//! every datagram is lost with a fixed probability drawn from a seeded
//! generator, so a run is the same every time; the others arrive in order
//! on the next read. It counts what it carries.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::rc::Rc;

use netcode_renet::netcode_std::transport::Socket;
use netcode_renet::netcode_std::{BindMode, Client, ClientConfig, Family, Server, ServerConfig};
use netcode_renet::{NetcodeClientTransport, NetcodeServerTransport};

/// Datagrams waiting at one address, with their senders.
type Queue = VecDeque<(SocketAddr, Vec<u8>)>;

/// The network: datagrams in flight by destination, the loss, counters.
#[derive(Debug)]
pub struct Net {
    queues: RefCell<HashMap<SocketAddr, Queue>>,
    /// Probability of losing each datagram, in millionths.
    loss_ppm: u64,
    rng: Cell<u64>,
    /// Datagrams handed to the network, and their bytes.
    pub datagrams: Cell<u64>,
    pub bytes: Cell<u64>,
    /// Datagrams the network lost.
    pub lost: Cell<u64>,
    /// The longest datagram sent.
    pub largest: Cell<usize>,
}

impl Net {
    /// A network losing each datagram with probability `loss`, its draws
    /// made from `seed`.
    pub fn new(loss: f64, seed: u64) -> Rc<Self> {
        Rc::new(Self {
            queues: RefCell::default(),
            loss_ppm: (loss * 1e6) as u64,
            rng: Cell::new(seed),
            datagrams: Cell::new(0),
            bytes: Cell::new(0),
            lost: Cell::new(0),
            largest: Cell::new(0),
        })
    }

    /// splitmix64: the next draw.
    fn next(&self) -> u64 {
        let state = self.rng.get().wrapping_add(0x9E37_79B9_7F4A_7C15);
        self.rng.set(state);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn send(&self, from: SocketAddr, to: SocketAddr, datagram: &[u8]) {
        self.datagrams.set(self.datagrams.get() + 1);
        self.bytes.set(self.bytes.get() + datagram.len() as u64);
        self.largest.set(self.largest.get().max(datagram.len()));
        if self.next() % 1_000_000 < self.loss_ppm {
            self.lost.set(self.lost.get() + 1);
            return;
        }
        let mut queues = self.queues.borrow_mut();
        queues
            .entry(to)
            .or_default()
            .push_back((from, datagram.to_vec()));
    }
}

/// A socket on a [`Net`], at the address the OS bound for it (so every
/// address is unique).
#[derive(Debug)]
pub struct SimSocket {
    local: SocketAddr,
    net: Rc<Net>,
}

impl Socket for SimSocket {
    fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<usize> {
        self.net.send(self.local, to, datagram);
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

/// The `adopt` function that puts a bound socket on `net`.
fn on(net: &Rc<Net>) -> impl FnMut(Family, UdpSocket) -> io::Result<SimSocket> + '_ {
    move |_, socket| {
        Ok(SimSocket {
            local: socket.local_addr()?,
            net: Rc::clone(net),
        })
    }
}

/// A netcode server on `net` at 127.0.0.1 (bound exactly, so its socket's
/// address is the one tokens list), started with `slots` slots.
pub fn server(net: &Rc<Net>, mut config: ServerConfig, slots: usize) -> Server<SimSocket> {
    config.bind_mode = BindMode::Exact;
    let mut server = Server::bind_with("127.0.0.1:0", None::<&str>, config, on(net)).unwrap();
    server.start(slots).unwrap();
    server
}

/// A netcode client on `net` at 127.0.0.1.
pub fn client(net: &Rc<Net>) -> Client<SimSocket> {
    Client::bind_with(
        "127.0.0.1:0",
        None::<&str>,
        ClientConfig::default(),
        on(net),
    )
    .unwrap()
}

/// A server transport on `net` with `slots` slots, with the test key, and
/// its public address.
pub fn server_transport(
    net: &Rc<Net>,
    slots: usize,
) -> (NetcodeServerTransport<SimSocket>, SocketAddr) {
    let host = server(
        net,
        ServerConfig::new(super::PROTOCOL_ID, super::key()),
        slots,
    );
    let address = host.public_address();
    (NetcodeServerTransport::from_server(host), address)
}

/// A client transport on `net`, connecting as `client_id` to `server`.
pub fn client_transport(
    net: &Rc<Net>,
    client_id: u64,
    server: SocketAddr,
) -> NetcodeClientTransport<SimSocket> {
    let mut host = client(net);
    host.connect(&super::token(client_id, server)).unwrap();
    NetcodeClientTransport::from_client(host)
}

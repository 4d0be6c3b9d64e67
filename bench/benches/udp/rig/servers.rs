//! The servers of the UDP run, each echoing on a thread of its own: the
//! thread and what it shares with the clients' thread, and every server
//! but the floor (`floor.rs`).
//!
//! * **ours** ([`OursServer`]), as netcode-mio documents its loop: sleep in
//!   its own `mio::Poll` for at most `poll_timeout` (capped at 1 ms), hand
//!   each event to the server, `update`, drain the events, then
//!   `receive_any` (only the slots holding payloads), echoing each payload
//!   with `send_packet` and
//!   returning its buffer with `free_packet`; the whole turn in one
//!   `batch()` scope. Both rows run this same code; only the socket under
//!   the server differs (netcode-mio's batched `RegisteredSocket`, or
//!   [`PerCallSocket`]).
//! * **netcode-official** owns its socket and reads it only in `update`, so
//!   its server runs `update`, `receive_packet`, `send_packet` in a loop that
//!   never sleeps (the fastest way its API allows to find datagrams).
//! * **renetcode** is sans-IO: its server runs on a non-blocking UDP socket
//!   with 4 MiB buffers in a mio poll like ours, read until it would block,
//!   echoing each payload as it reads it, with `update` / `update_client`
//!   every 5 ms for keep-alives and timeouts.
//! * **ours-std** and **ours-tokio** are in `std_server.rs` and
//!   `tokio_server.rs`.
//!
//! Every server is built on its own thread, so the thread's live heap
//! bytes (`counting_alloc::live_bytes`, where the bench installs the
//! counting allocator) are what the server and its loop hold: the thread
//! publishes them with its count of connected clients.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, mpsc};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use netcode_bench::fixtures::{PRIVATE_KEY, PROTOCOL_ID};
use netcode_bench::machine::ThreadCpu;
use netcode_bench::peers::renet_outcome;
use netcode_mio::mio::net::UdpSocket;
use netcode_mio::mio::{Events, Interest, Poll, Token};
use netcode_mio::netcode_std::transport::Socket;
use netcode_mio::{Family, Registered, RegisteredSocket};
use renetcode::{NetcodeServer, ServerAuthentication};

use super::clock::{Clock, unix_now};
use super::echo::{Counters, Counts, EchoServer, SWEEP_SECONDS, Totals, config};
use super::floor::FloorServer;
use super::kinds::ServerKind;
use super::net::{MAX_WAIT, PerCallSocket, poll, retry, udp_socket};
use super::std_server::StdServer;
use super::tokio_server::TokioServer;

/// What `Shared::connected` holds for a server that has no connections.
const NO_CONNECTIONS: usize = usize::MAX;

/// What the server's thread shares with the clients' thread.
#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    counters: Counters,
    /// Connected clients, refreshed every few milliseconds
    /// ([`NO_CONNECTIONS`] for a server without any).
    connected: AtomicUsize,
    /// The server thread's live heap bytes since it started, refreshed
    /// with `connected`.
    heap: AtomicI64,
}

/// A server echoing on its own thread.
pub(super) struct ServerThread {
    pub(super) address: SocketAddr,
    shared: Arc<Shared>,
    /// The thread's CPU counters.
    cpu: Option<ThreadCpu>,
    /// Whether the program counts heap bytes (the counting allocator is
    /// installed).
    counts_heap: bool,
    handle: JoinHandle<Result<(), String>>,
}

impl ServerThread {
    /// Starts a server of `which` with `slots` slots on a new thread.
    pub(super) fn spawn(which: ServerKind, slots: usize, clock: Clock) -> Result<Self, String> {
        let shared = Arc::new(Shared::default());
        let (tell, told) = mpsc::channel();
        let ours = Arc::clone(&shared);
        let handle = thread::Builder::new()
            .name(format!("{} server", which.name()))
            .spawn(move || {
                let base = counting_alloc::live_bytes();
                let mut server = match new_server(which, slots, clock) {
                    Ok(server) => server,
                    Err(e) => {
                        let _ = tell.send(Err(e.clone()));
                        return Err(e);
                    }
                };
                let _ = tell.send(Ok((server.address(), ThreadCpu::this_thread())));
                let mut next_count = 0.0;
                while !ours.stop.load(Relaxed) {
                    server.turn(clock, MAX_WAIT, &ours.counters)?;
                    let now = clock.now();
                    if now >= next_count {
                        next_count = now + SWEEP_SECONDS;
                        let connected = server.connected().unwrap_or(NO_CONNECTIONS);
                        let heap = counting_alloc::live_bytes() - base;
                        ours.heap.store(heap, Relaxed);
                        ours.connected.store(connected, Relaxed);
                    }
                }
                Ok(())
            })
            .map_err(|e| format!("failed to spawn the server's thread: {e}"))?;
        match told.recv() {
            Ok(Ok((address, cpu))) => Ok(Self {
                address,
                shared,
                cpu,
                counts_heap: counting_alloc::installed(),
                handle,
            }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err("the server's thread died".into()),
        }
    }

    /// Clients connected, as the server last said; `None` for a server
    /// without connections (the floor).
    pub(super) fn connected(&self) -> Option<usize> {
        Some(self.shared.connected.load(Relaxed)).filter(|&c| c != NO_CONNECTIONS)
    }

    /// The server thread's live heap bytes as it last said, where the
    /// program counts them.
    pub(super) fn heap(&self) -> Option<u64> {
        let heap = self.shared.heap.load(Relaxed);
        self.counts_heap.then_some(heap.max(0) as u64)
    }

    /// The server's counters now.
    pub(super) fn counts(&self) -> Counts {
        self.shared.counters.read()
    }

    /// The server thread's CPU counters.
    pub(super) fn cpu(&self) -> Option<&ThreadCpu> {
        self.cpu.as_ref()
    }

    /// The server thread's id, for perf.
    pub(super) fn tid(&self) -> Option<&str> {
        self.cpu.as_ref().and_then(ThreadCpu::tid)
    }

    /// Stops the thread and returns what it returned.
    pub(super) fn stop(self) -> Result<(), String> {
        self.shared.stop.store(true, Relaxed);
        self.handle
            .join()
            .map_err(|_| "the server's thread panicked".to_string())?
    }
}

fn new_server(
    which: ServerKind,
    slots: usize,
    clock: Clock,
) -> Result<Box<dyn EchoServer>, String> {
    Ok(match which {
        ServerKind::Batched => Box::new(OursServer::batched(slots)?),
        ServerKind::Std => Box::new(StdServer::new(slots)?),
        ServerKind::PerCall => Box::new(OursServer::per_call(slots)?),
        ServerKind::Official => Box::new(OfficialServer::new(slots, clock)?),
        ServerKind::Renet => Box::new(RenetServer::new(slots)?),
        ServerKind::Floor => Box::new(FloorServer::new()?),
        ServerKind::Tokio => Box::new(TokioServer::new(slots)?),
    })
}

/// What ours' two rows differ in: how a readable event reaches the server.
trait OursSocket: Socket + Sized {
    fn readable(server: &mut netcode_mio::netcode_std::Server<Self>, token: Token, now: f64);
}

impl OursSocket for RegisteredSocket {
    fn readable(server: &mut netcode_mio::Server, token: Token, now: f64) {
        server.handle_readable(token, now);
    }
}

impl OursSocket for PerCallSocket {
    fn readable(server: &mut netcode_mio::netcode_std::Server<Self>, _token: Token, now: f64) {
        server.drain_socket(now, Family::V4);
    }
}

/// Our server on sockets of type `S`, in its own poll.
struct OursServer<S: Socket> {
    poll: Poll,
    events: Events,
    server: netcode_mio::netcode_std::Server<S>,
}

impl OursServer<RegisteredSocket> {
    /// netcode-mio's server.
    fn batched(slots: usize) -> Result<Self, String> {
        let poll = Poll::new().map_err(|e| format!("poll: {e}"))?;
        let server = netcode_mio::Server::new("127.0.0.1:0", config(), poll.registry(), Token(0))
            .map_err(|e| format!("netcode-mio server: {e}"))?;
        Self::start(poll, server, slots)
    }
}

impl OursServer<PerCallSocket> {
    /// netcode-std's server on a one-datagram-per-call socket in mio.
    fn per_call(slots: usize) -> Result<Self, String> {
        let poll = Poll::new().map_err(|e| format!("poll: {e}"))?;
        let registry = poll.registry();
        let adopt = |_family, socket| {
            let mut socket = UdpSocket::from_std(socket);
            registry.register(&mut socket, Token(0), Interest::READABLE)?;
            Ok(PerCallSocket(socket))
        };
        let server = netcode_mio::netcode_std::Server::bind_with(
            "127.0.0.1:0",
            None::<&str>,
            config(),
            adopt,
        )
        .map_err(|e| format!("one-per-call server: {e}"))?;
        Self::start(poll, server, slots)
    }
}

impl<S: Socket> OursServer<S> {
    fn start(
        poll: Poll,
        mut server: netcode_mio::netcode_std::Server<S>,
        slots: usize,
    ) -> Result<Self, String> {
        server
            .start(slots)
            .map_err(|e| format!("our server: {e}"))?;
        Ok(Self {
            poll,
            events: Events::with_capacity(16),
            server,
        })
    }
}

impl<S: OursSocket> EchoServer for OursServer<S> {
    fn address(&self) -> SocketAddr {
        self.server.public_address()
    }

    fn connected(&self) -> Option<usize> {
        Some(self.server.num_connected_clients())
    }

    fn turn(&mut self, clock: Clock, wait: Duration, counters: &Counters) -> Result<(), String> {
        let timeout = (self.server.poll_timeout(clock.now())).map_or(wait, |t| t.min(wait));
        poll(&mut self.poll, &mut self.events, timeout)?;
        let now = clock.now();
        let mut echoed = 0;
        let mut server = self.server.batch();
        for event in self.events.iter() {
            S::readable(&mut server, event.token(), now);
        }
        server.update(now);
        while server.poll_event().is_some() {}
        while let Some((slot, packet)) = server.receive_any() {
            let _ = server.send_packet(slot, packet.data());
            server.free_packet(packet);
            echoed += 1;
        }
        drop(server);
        counters.echoed(echoed);
        counters.totals(&Totals::ours(
            self.server.transport_stats(),
            &self.server.stats(),
        ));
        Ok(())
    }
}

struct OfficialServer {
    server: netcode::Server,
}

impl OfficialServer {
    fn new(slots: usize, clock: Clock) -> Result<Self, String> {
        let address = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
        let mut server = netcode::Server::new(address, PROTOCOL_ID, &PRIVATE_KEY, clock.now())
            .map_err(|e| format!("netcode-official server: {e}"))?;
        server
            .start(slots)
            .map_err(|e| format!("netcode-official server: {e}"))?;
        Ok(Self { server })
    }
}

impl EchoServer for OfficialServer {
    fn address(&self) -> SocketAddr {
        self.server.address()
    }

    fn connected(&self) -> Option<usize> {
        Some(self.server.num_connected_clients())
    }

    /// Never waits: the socket is the server's own, read only in `update`.
    fn turn(&mut self, clock: Clock, _wait: Duration, counters: &Counters) -> Result<(), String> {
        let server = &mut self.server;
        server.update(clock.now());
        while server.next_event().is_some() {}
        let mut echoed = 0;
        for slot in 0..server.max_clients() {
            while let Some((data, _sequence)) = server.receive_packet(slot) {
                let _ = server.send_packet(slot, &data);
                echoed += 1;
            }
        }
        counters.echoed(echoed);
        Ok(())
    }
}

struct RenetServer {
    poll: Poll,
    events: Events,
    socket: UdpSocket,
    address: SocketAddr,
    server: NetcodeServer,
    last_update: Option<f64>,
    buffer: Box<[u8; 1500]>,
}

impl RenetServer {
    fn new(slots: usize) -> Result<Self, String> {
        let poll = Poll::new().map_err(|e| format!("poll: {e}"))?;
        let socket = udp_socket(poll.registry(), Token(0), Ipv4Addr::LOCALHOST)
            .map_err(|e| format!("renetcode server: {e}"))?;
        let address = socket
            .local_addr()
            .map_err(|e| format!("renetcode server: {e}"))?;
        let server = NetcodeServer::new(renetcode::ServerConfig {
            current_time: unix_now(),
            max_clients: slots,
            protocol_id: PROTOCOL_ID,
            public_addresses: vec![address],
            authentication: ServerAuthentication::Secure {
                private_key: PRIVATE_KEY,
            },
        });
        Ok(Self {
            poll,
            events: Events::with_capacity(16),
            socket,
            address,
            server,
            last_update: None,
            buffer: Box::new([0; 1500]),
        })
    }
}

impl EchoServer for RenetServer {
    fn address(&self) -> SocketAddr {
        self.address
    }

    fn connected(&self) -> Option<usize> {
        Some(self.server.connected_clients())
    }

    fn turn(&mut self, clock: Clock, wait: Duration, counters: &Counters) -> Result<(), String> {
        poll(&mut self.poll, &mut self.events, wait)?;
        let Self {
            socket,
            server,
            buffer,
            ..
        } = self;
        // Reads until the socket is empty, which under load can take many
        // batches' worth: each echo is counted as it goes.
        loop {
            let (len, from) = match socket.recv_from(&mut buffer[..]) {
                Ok(received) => received,
                Err(e) if retry(&e) => continue,
                Err(_) => break,
            };
            let echo = renet_outcome(
                server.process_packet(from, &mut buffer[..len]),
                |to, datagram| {
                    let _ = socket.send_to(datagram, to);
                },
            );
            if let Some((client_id, payload)) = echo {
                if let Ok((addr, packet)) = server.generate_payload_packet(client_id, payload) {
                    let _ = socket.send_to(packet, addr);
                }
                counters.echoed(1);
            }
        }

        // The timers: token expiry, keep-alives, timeouts.
        let now = clock.now();
        let last = *self.last_update.get_or_insert(now);
        if now - last >= SWEEP_SECONDS {
            self.last_update = Some(now);
            server.update(Duration::from_secs_f64(now - last));
            for client_id in server.clients_id() {
                renet_outcome(server.update_client(client_id), |to, datagram| {
                    let _ = socket.send_to(datagram, to);
                });
            }
        }
        Ok(())
    }
}

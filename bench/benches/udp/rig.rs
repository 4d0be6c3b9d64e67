//! The UDP loopback echo run: a server on its own thread, N clients on the
//! calling thread, real datagrams over 127.0.0.1.
//!
//! Every client keeps up to a window of 100-byte payloads in flight; the
//! server echoes each payload it receives back to its sender, and each echo
//! a client receives lets it send another. After the clients connect and a
//! warm-up, a fixed measuring window counts the payloads the server
//! received and echoed and the echoes the clients received, and reads both
//! threads' CPU time and its kernel share (Linux `/proc`: `schedstat`,
//! `stat`). A client whose window makes no progress for half a second
//! counts what it had in flight as lost and starts again.
//!
//! Servers and clients come from three implementations:
//!
//! * **netcode-mio**: a [`netcode_mio::Server`] and [`netcode_mio::Client`]s,
//!   each side in its own `mio::Poll`, used as the crate documents:
//!   `poll_timeout`, `handle_readable`, `update`, the C-style queues.
//! * **netcode-official** owns its sockets and reads them in `update`, so
//!   its server and clients are updated in a loop that never sleeps (the
//!   fastest way its API allows to find datagrams).
//! * **renetcode** is sans-IO: its server and clients run here on
//!   non-blocking UDP sockets (4 MiB buffers, as the other two ask for) in a
//!   mio poll like netcode-mio's, read until they would block (the server
//!   echoing each payload as it reads it), with `update` / `update_client`
//!   every 5 ms for keep-alives and timeouts.
//!
//! netcode 1.02 is one protocol, so any server takes any clients: pairing
//! the peers' servers with netcode-mio clients keeps the clients' cost
//! the same and leaves the server as the only difference.

#![allow(dead_code, unreachable_pub)]

use netcode_mio::Registered;
use std::io::{self, ErrorKind};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, mpsc};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use netcode_bench::{
    EXPIRE_SECONDS, PRIVATE_KEY, PROTOCOL_ID, TIMEOUT_SECONDS, USER_DATA, payload,
};
use netcode_mio::mio::net::UdpSocket;
use netcode_mio::mio::{Events, Interest, Poll, Registry, Token};
use netcode_mio::proto::Key;
use netcode_mio::{ClientConfig, ClientState, ConnectTokenBuilder, ServerConfig};
use renetcode::{
    ClientAuthentication, ConnectToken, NetcodeClient, NetcodeServer, ServerAuthentication,
    ServerResult,
};

/// Bytes in every payload.
pub const PAYLOAD_BYTES: usize = 100;

/// Longest a loop sleeps in its poll, so it notices the end of a run.
const MAX_WAIT: Duration = Duration::from_millis(1);

/// How often the client loops sweep every client (update, lost windows)
/// and the renetcode loops run their timers.
const SWEEP_SECONDS: f64 = 0.005;

/// A client whose window has made no progress for this long gives up on
/// what is in flight (counted as lost) and starts a new window.
const LOSS_SECONDS: f64 = 0.5;

/// How long the clients have to connect.
const CONNECT_SECONDS: f64 = 15.0;

/// Socket buffers for the renetcode loops: what netcode-mio and
/// netcode-official ask for.
const SOCKET_BUFFER_BYTES: usize = 4 << 20;

/// One of the implementations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Implementation {
    /// netcode-mio (netcode-proto in netcode-std on mio sockets).
    Mio,
    /// netcode-official 1.0.
    Official,
    /// renetcode 2.0 on a mio socket loop.
    Renet,
}

impl Implementation {
    /// The crate's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Mio => "netcode-mio",
            Self::Official => "netcode-official",
            Self::Renet => "renetcode",
        }
    }
}

/// A server implementation and a client implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pairing {
    /// The server's implementation.
    pub server: Implementation,
    /// The clients' implementation.
    pub clients: Implementation,
}

/// Every pairing the bench runs: each implementation with its own clients,
/// then the peers' servers with netcode-mio's clients.
pub const PAIRINGS: [Pairing; 5] = {
    use Implementation::*;
    [
        Pairing::new(Mio, Mio),
        Pairing::new(Official, Official),
        Pairing::new(Renet, Renet),
        Pairing::new(Official, Mio),
        Pairing::new(Renet, Mio),
    ]
};

impl Pairing {
    /// A server and clients.
    pub const fn new(server: Implementation, clients: Implementation) -> Self {
        Self { server, clients }
    }

    /// The name a filter matches: `udp_echo/<server> server, <clients> clients`.
    pub fn id(&self) -> String {
        format!(
            "udp_echo/{} server, {} clients",
            self.server.name(),
            self.clients.name()
        )
    }
}

/// What a run does.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Connected clients (and server slots).
    pub clients: usize,
    /// Payloads each client keeps in flight.
    pub window: usize,
    /// Traffic before the measuring window.
    pub warm_up: Duration,
    /// The measuring window.
    pub measure: Duration,
}

/// What a run measured, over the measuring window.
#[derive(Clone, Debug)]
pub struct Measurement {
    /// Its length in seconds.
    pub seconds: f64,
    /// Payloads the server received (and echoed).
    pub server_payloads: u64,
    /// Echoes the clients received.
    pub echoes: u64,
    /// CPU seconds of the server's thread, where the OS says.
    pub server_cpu: Option<f64>,
    /// CPU seconds of the clients' thread, where the OS says.
    pub client_cpu: Option<f64>,
    /// The share of the server thread's CPU time spent in the kernel.
    pub server_kernel: Option<f64>,
    /// The share of the clients' thread's CPU time spent in the kernel.
    pub client_kernel: Option<f64>,
    /// Payloads given up on after no progress for half a second (the
    /// whole run, not only the window).
    pub lost: u64,
    /// Echoes of the wrong length (the whole run).
    pub wrong: u64,
    /// Clients still connected at the end, as the clients see it.
    pub connected_at_end: usize,
}

impl Measurement {
    /// Payloads received and echoed by the server per second.
    pub fn server_pps(&self) -> f64 {
        self.server_payloads as f64 / self.seconds
    }

    /// Echoes received by the clients per second.
    pub fn echo_pps(&self) -> f64 {
        self.echoes as f64 / self.seconds
    }

    /// The server thread's CPU per payload, in microseconds.
    pub fn server_us_per_payload(&self) -> Option<f64> {
        self.server_cpu
            .map(|cpu| cpu * 1e6 / self.server_payloads.max(1) as f64)
    }

    /// The clients' thread's CPU per echo, in microseconds.
    pub fn client_us_per_echo(&self) -> Option<f64> {
        self.client_cpu
            .map(|cpu| cpu * 1e6 / self.echoes.max(1) as f64)
    }

    /// The share of the window the server thread was on a CPU.
    pub fn server_busy(&self) -> Option<f64> {
        self.server_cpu.map(|cpu| cpu / self.seconds)
    }

    /// The share of the window the clients' thread was on a CPU.
    pub fn client_busy(&self) -> Option<f64> {
        self.client_cpu.map(|cpu| cpu / self.seconds)
    }
}

/// Runs `pairing` once: starts the server's thread, connects the
/// clients, warms up, measures.
pub fn run(pairing: Pairing, settings: &Settings) -> Result<Measurement, String> {
    let clock = Clock(Instant::now());
    let server = ServerThread::spawn(pairing.server, settings.clients, clock)?;
    let measured = drive(pairing.clients, &server, settings, clock);
    let stopped = server.stop();
    let measurement = measured?;
    stopped?;
    Ok(measurement)
}

/// Connects the clients and measures, on this thread.
fn drive(
    which: Implementation,
    server: &ServerThread,
    settings: &Settings,
    clock: Clock,
) -> Result<Measurement, String> {
    let n = settings.clients;
    let mut clients = new_clients(which, n, server.address, clock)?;
    let mut tally = Tally::default();
    let window = settings.window;

    let deadline = clock.now() + CONNECT_SECONDS;
    while clients.connected() < n || server.connected() < n {
        if clock.now() > deadline {
            return Err(format!(
                "{} of {n} clients connected ({} on the server)",
                clients.connected(),
                server.connected()
            ));
        }
        clients.turn(clock, 0, &mut tally);
    }

    let warm_up_end = clock.now() + settings.warm_up.as_secs_f64();
    while clock.now() < warm_up_end {
        clients.turn(clock, window, &mut tally);
    }
    let cpu = ThreadCpu::this_thread();
    let start = Snapshot::take(clock, server, cpu.as_ref(), &tally);
    let end = start.time + settings.measure.as_secs_f64();
    while clock.now() < end {
        clients.turn(clock, window, &mut tally);
    }
    let stop = Snapshot::take(clock, server, cpu.as_ref(), &tally);
    let since = |a: Option<Cpu>, b: Option<Cpu>| {
        let (a, b) = (a?, b?);
        let ticks = (b.user_ticks + b.kernel_ticks) - (a.user_ticks + a.kernel_ticks);
        let kernel = (b.kernel_ticks - a.kernel_ticks) as f64 / ticks.max(1) as f64;
        Some((b.seconds - a.seconds, kernel))
    };
    let server_cpu = since(start.server_cpu, stop.server_cpu);
    let client_cpu = since(start.client_cpu, stop.client_cpu);
    Ok(Measurement {
        seconds: stop.time - start.time,
        server_payloads: stop.server_payloads - start.server_payloads,
        echoes: stop.echoes - start.echoes,
        server_cpu: server_cpu.map(|c| c.0),
        client_cpu: client_cpu.map(|c| c.0),
        server_kernel: server_cpu.map(|c| c.1),
        client_kernel: client_cpu.map(|c| c.1),
        lost: tally.lost,
        wrong: tally.wrong,
        connected_at_end: clients.connected(),
    })
}

/// The counters at one moment.
struct Snapshot {
    time: f64,
    server_payloads: u64,
    echoes: u64,
    server_cpu: Option<Cpu>,
    client_cpu: Option<Cpu>,
}

impl Snapshot {
    fn take(clock: Clock, server: &ServerThread, cpu: Option<&ThreadCpu>, tally: &Tally) -> Self {
        Self {
            time: clock.now(),
            server_payloads: server.shared.payloads.load(Relaxed),
            echoes: tally.echoes,
            server_cpu: server.cpu.as_ref().and_then(ThreadCpu::read),
            client_cpu: cpu.and_then(ThreadCpu::read),
        }
    }
}

/// Seconds since the run began.
#[derive(Clone, Copy)]
struct Clock(Instant);

impl Clock {
    fn now(&self) -> f64 {
        self.0.elapsed().as_secs_f64()
    }
}

/// The unix time, for renetcode's clocks.
fn unix_now() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

/// A thread's CPU counters, from its directory in `/proc` (Linux).
struct ThreadCpu(PathBuf);

/// A thread's CPU counters at one moment.
#[derive(Clone, Copy)]
struct Cpu {
    /// Time on a CPU (`schedstat`, nanoseconds).
    seconds: f64,
    /// Clock ticks in user mode and in the kernel (`stat`, 10 ms each).
    user_ticks: u64,
    kernel_ticks: u64,
}

impl ThreadCpu {
    /// The calling thread's, where the OS has them.
    fn this_thread() -> Option<Self> {
        let task = std::fs::read_link("/proc/thread-self").ok()?;
        let this = Self(Path::new("/proc").join(task));
        this.read().map(|_| this)
    }

    fn read(&self) -> Option<Cpu> {
        let schedstat = std::fs::read_to_string(self.0.join("schedstat")).ok()?;
        let nanoseconds: u64 = schedstat.split_whitespace().next()?.parse().ok()?;
        // After the command name in parentheses: state is field 3, utime 14,
        // stime 15.
        let stat = std::fs::read_to_string(self.0.join("stat")).ok()?;
        let mut fields = stat.rsplit_once(')')?.1.split_whitespace().skip(11);
        Some(Cpu {
            seconds: nanoseconds as f64 * 1e-9,
            user_ticks: fields.next()?.parse().ok()?,
            kernel_ticks: fields.next()?.parse().ok()?,
        })
    }
}

/// A non-blocking UDP socket on 127.0.0.1 with 4 MiB buffers, registered
/// for readable events under `token`: the renetcode loops' sockets.
fn udp_socket(registry: &Registry, token: Token) -> io::Result<UdpSocket> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))?;
    socket.set_send_buffer_size(SOCKET_BUFFER_BYTES)?;
    socket.set_recv_buffer_size(SOCKET_BUFFER_BYTES)?;
    socket.set_nonblocking(true)?;
    socket.bind(&SocketAddr::from((Ipv4Addr::LOCALHOST, 0)).into())?;
    let mut socket = UdpSocket::from_std(socket.into());
    registry.register(&mut socket, token, Interest::READABLE)?;
    Ok(socket)
}

/// Whether a socket read should go on after `error`: ICMP noise reported
/// as a refused or reset connection, or a signal (would-block ends it).
fn retry(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        ErrorKind::ConnectionRefused | ErrorKind::ConnectionReset | ErrorKind::Interrupted
    )
}

/// Polls, retrying when a signal interrupts.
fn poll(poll: &mut Poll, events: &mut Events, timeout: Duration) -> Result<(), String> {
    match poll.poll(events, Some(timeout)) {
        Err(e) if e.kind() != ErrorKind::Interrupted => Err(format!("poll failed: {e}")),
        _ => Ok(()),
    }
}

// ---------------------------------------------------------------------------
// Servers

/// What the server's thread shares with the clients' thread.
#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    /// Payloads received and echoed so far.
    payloads: AtomicU64,
    /// Connected clients, refreshed every few milliseconds.
    connected: AtomicUsize,
}

/// A server echoing on its own thread.
struct ServerThread {
    address: SocketAddr,
    shared: Arc<Shared>,
    /// The thread's CPU counters.
    cpu: Option<ThreadCpu>,
    handle: JoinHandle<Result<(), String>>,
}

impl ServerThread {
    fn spawn(which: Implementation, slots: usize, clock: Clock) -> Result<Self, String> {
        let shared = Arc::new(Shared::default());
        let (tell, told) = mpsc::channel();
        let ours = Arc::clone(&shared);
        let handle = thread::Builder::new()
            .name(format!("{} server", which.name()))
            .spawn(move || {
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
                    server.turn(clock, MAX_WAIT, &ours.payloads)?;
                    let now = clock.now();
                    if now >= next_count {
                        next_count = now + SWEEP_SECONDS;
                        ours.connected.store(server.connected(), Relaxed);
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
                handle,
            }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err("the server's thread died".into()),
        }
    }

    fn connected(&self) -> usize {
        self.shared.connected.load(Relaxed)
    }

    fn stop(self) -> Result<(), String> {
        self.shared.stop.store(true, Relaxed);
        self.handle
            .join()
            .map_err(|_| "the server's thread panicked".to_string())?
    }
}

/// A server that echoes every payload to its sender.
trait EchoServer {
    /// The address tokens list.
    fn address(&self) -> SocketAddr;
    /// Connected clients.
    fn connected(&self) -> usize;
    /// Waits for datagrams (at most `wait`, where the implementation can
    /// wait at all), handles them, sends what is due and echoes every
    /// payload, adding each to `echoed`.
    fn turn(&mut self, clock: Clock, wait: Duration, echoed: &AtomicU64) -> Result<(), String>;
}

fn new_server(
    which: Implementation,
    slots: usize,
    clock: Clock,
) -> Result<Box<dyn EchoServer>, String> {
    Ok(match which {
        Implementation::Mio => Box::new(MioServer::new(slots)?),
        Implementation::Official => Box::new(OfficialServer::new(slots, clock)?),
        Implementation::Renet => Box::new(RenetServer::new(slots)?),
    })
}

struct MioServer {
    poll: Poll,
    events: Events,
    server: netcode_mio::Server,
}

impl MioServer {
    fn new(slots: usize) -> Result<Self, String> {
        let poll = Poll::new().map_err(|e| format!("poll: {e}"))?;
        let config = ServerConfig::new(PROTOCOL_ID, Key::from_bytes(PRIVATE_KEY));
        let mut server = netcode_mio::Server::new("127.0.0.1:0", config, poll.registry(), Token(0))
            .map_err(|e| format!("netcode-mio server: {e}"))?;
        server
            .start(slots)
            .map_err(|e| format!("netcode-mio server: {e}"))?;
        Ok(Self {
            poll,
            events: Events::with_capacity(16),
            server,
        })
    }
}

impl EchoServer for MioServer {
    fn address(&self) -> SocketAddr {
        self.server.public_address()
    }

    fn connected(&self) -> usize {
        self.server.num_connected_clients()
    }

    fn turn(&mut self, clock: Clock, wait: Duration, echoed: &AtomicU64) -> Result<(), String> {
        let server = &mut self.server;
        let timeout = server
            .poll_timeout(clock.now())
            .map_or(wait, |t| t.min(wait));
        poll(&mut self.poll, &mut self.events, timeout)?;
        let now = clock.now();
        for event in self.events.iter() {
            server.handle_readable(event.token(), now);
        }
        server.update(now);
        while server.poll_event().is_some() {}
        for slot in 0..server.max_clients() {
            while let Some(packet) = server.receive_packet(slot) {
                let _ = server.send_packet(slot, packet.data());
                server.free_packet(packet);
                echoed.fetch_add(1, Relaxed);
            }
        }
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

    fn connected(&self) -> usize {
        self.server.num_connected_clients()
    }

    /// Never waits: the socket is the server's own, read only in `update`.
    fn turn(&mut self, clock: Clock, _wait: Duration, echoed: &AtomicU64) -> Result<(), String> {
        let server = &mut self.server;
        server.update(clock.now());
        while server.next_event().is_some() {}
        for slot in 0..server.max_clients() {
            while let Some((data, _sequence)) = server.receive_packet(slot) {
                let _ = server.send_packet(slot, &data);
                echoed.fetch_add(1, Relaxed);
            }
        }
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
        let socket =
            udp_socket(poll.registry(), Token(0)).map_err(|e| format!("renetcode server: {e}"))?;
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

    fn connected(&self) -> usize {
        self.server.connected_clients()
    }

    fn turn(&mut self, clock: Clock, wait: Duration, echoed: &AtomicU64) -> Result<(), String> {
        poll(&mut self.poll, &mut self.events, wait)?;
        let Self {
            socket,
            server,
            buffer,
            ..
        } = self;
        loop {
            let (len, from) = match socket.recv_from(&mut buffer[..]) {
                Ok(received) => received,
                Err(e) if retry(&e) => continue,
                Err(_) => break,
            };
            let echo = match server.process_packet(from, &mut buffer[..len]) {
                ServerResult::Payload { client_id, payload } => Some((client_id, payload)),
                ServerResult::PacketToSend { addr, payload }
                | ServerResult::ClientConnected { addr, payload, .. }
                | ServerResult::ClientDisconnected {
                    addr,
                    payload: Some(payload),
                    ..
                } => {
                    let _ = socket.send_to(payload, addr);
                    None
                }
                ServerResult::ClientDisconnected { payload: None, .. } | ServerResult::None => None,
            };
            if let Some((client_id, payload)) = echo {
                if let Ok((addr, packet)) = server.generate_payload_packet(client_id, payload) {
                    let _ = socket.send_to(packet, addr);
                }
                echoed.fetch_add(1, Relaxed);
            }
        }

        // The timers: token expiry, keep-alives, timeouts.
        let now = clock.now();
        let last = *self.last_update.get_or_insert(now);
        if now - last >= SWEEP_SECONDS {
            self.last_update = Some(now);
            server.update(Duration::from_secs_f64(now - last));
            for client_id in server.clients_id() {
                match server.update_client(client_id) {
                    ServerResult::PacketToSend { addr, payload }
                    | ServerResult::ClientDisconnected {
                        addr,
                        payload: Some(payload),
                        ..
                    } => {
                        let _ = socket.send_to(payload, addr);
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Clients

/// What the clients counted over the whole run.
#[derive(Default)]
struct Tally {
    echoes: u64,
    lost: u64,
    wrong: u64,
}

/// One client's window.
#[derive(Default, Clone, Copy)]
struct Flow {
    in_flight: usize,
    /// The last echo, or the first send into an empty window.
    progress: f64,
}

impl Flow {
    fn echo(&mut self, now: f64, len: usize, tally: &mut Tally) {
        self.in_flight = self.in_flight.saturating_sub(1);
        self.progress = now;
        tally.echoes += 1;
        if len != PAYLOAD_BYTES {
            tally.wrong += 1;
        }
    }

    /// How many payloads may be sent now, giving up on a stalled window.
    fn room(&mut self, now: f64, window: usize, tally: &mut Tally) -> usize {
        if self.in_flight > 0 && now - self.progress > LOSS_SECONDS {
            tally.lost += self.in_flight as u64;
            self.in_flight = 0;
        }
        window.saturating_sub(self.in_flight)
    }

    fn sent(&mut self, now: f64) {
        if self.in_flight == 0 {
            self.progress = now;
        }
        self.in_flight += 1;
    }
}

/// N clients of one implementation, all driven from this thread.
trait EchoClients {
    /// Clients connected.
    fn connected(&self) -> usize;
    /// Waits briefly for datagrams (where the implementation can wait),
    /// handles them, counts echoes and tops every connected client's window
    /// up to `window` payloads in flight (0: send nothing).
    fn turn(&mut self, clock: Clock, window: usize, tally: &mut Tally);
}

fn new_clients(
    which: Implementation,
    n: usize,
    server: SocketAddr,
    clock: Clock,
) -> Result<Box<dyn EchoClients>, String> {
    Ok(match which {
        Implementation::Mio => Box::new(MioClients::new(n, server)?),
        Implementation::Official => Box::new(OfficialClients::new(n, server, clock)?),
        Implementation::Renet => Box::new(RenetClients::new(n, server)?),
    })
}

struct MioClients {
    poll: Poll,
    events: Events,
    clients: Vec<netcode_mio::Client>,
    flows: Vec<Flow>,
    ready: Vec<usize>,
    connected: usize,
    next_sweep: f64,
    payload: Vec<u8>,
}

impl MioClients {
    fn new(n: usize, server: SocketAddr) -> Result<Self, String> {
        let poll = Poll::new().map_err(|e| format!("poll: {e}"))?;
        let key = Key::from_bytes(PRIVATE_KEY);
        let mut clients = Vec::with_capacity(n);
        for i in 0..n {
            let mut client = netcode_mio::Client::new(
                "127.0.0.1:0",
                ClientConfig::default(),
                poll.registry(),
                Token(i),
            )
            .map_err(|e| format!("netcode-mio client {i}: {e}"))?;
            let token = ConnectTokenBuilder::new(PROTOCOL_ID, &key, i as u64 + 1)
                .server_addresses([server])
                .expire_seconds(EXPIRE_SECONDS as i64)
                .timeout_seconds(TIMEOUT_SECONDS)
                .user_data(&USER_DATA)
                .generate()
                .map_err(|e| format!("netcode-mio token: {e}"))?;
            client
                .connect(&token)
                .map_err(|e| format!("netcode-mio client {i}: {e}"))?;
            clients.push(client);
        }
        Ok(Self {
            poll,
            events: Events::with_capacity(1024),
            clients,
            flows: vec![Flow::default(); n],
            ready: Vec::with_capacity(n),
            connected: 0,
            next_sweep: 0.0,
            payload: payload(PAYLOAD_BYTES),
        })
    }
}

impl EchoClients for MioClients {
    fn connected(&self) -> usize {
        self.connected
    }

    fn turn(&mut self, clock: Clock, window: usize, tally: &mut Tally) {
        let _ = poll(&mut self.poll, &mut self.events, MAX_WAIT);
        let now = clock.now();
        self.ready.clear();
        for event in self.events.iter() {
            let token = event.token();
            if let Some(client) = self.clients.get_mut(token.0) {
                client.handle_readable(token, now);
                self.ready.push(token.0);
            }
        }
        if now >= self.next_sweep {
            // Every client: connection requests, keep-alives, timeouts,
            // stalled windows.
            self.next_sweep = now + SWEEP_SECONDS;
            for client in &mut self.clients {
                client.update(now);
            }
            self.connected = (self.clients.iter())
                .filter(|c| c.state() == ClientState::Connected)
                .count();
            self.ready.clear();
            self.ready.extend(0..self.clients.len());
        }
        for &i in &self.ready {
            let (client, flow) = (&mut self.clients[i], &mut self.flows[i]);
            while let Some(packet) = client.receive_packet() {
                flow.echo(now, packet.data().len(), tally);
                client.free_packet(packet);
            }
            if window > 0 && client.state() == ClientState::Connected {
                for _ in 0..flow.room(now, window, tally) {
                    if client.send_packet(&self.payload).is_ok() {
                        flow.sent(now);
                    }
                }
            }
        }
    }
}

struct OfficialClients {
    clients: Vec<netcode::Client>,
    flows: Vec<Flow>,
    connected: usize,
    payload: Vec<u8>,
}

impl OfficialClients {
    fn new(n: usize, server: SocketAddr, clock: Clock) -> Result<Self, String> {
        let mut clients = Vec::with_capacity(n);
        for i in 0..n {
            let address = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
            let mut client = netcode::Client::new(address, clock.now())
                .map_err(|e| format!("netcode-official client {i}: {e}"))?;
            let token = netcode::generate_connect_token(
                &[server],
                &[server],
                EXPIRE_SECONDS as i32,
                TIMEOUT_SECONDS,
                i as u64 + 1,
                PROTOCOL_ID,
                &PRIVATE_KEY,
                &USER_DATA,
            )
            .map_err(|e| format!("netcode-official token: {e}"))?;
            client
                .connect(&token)
                .map_err(|e| format!("netcode-official client {i}: {e}"))?;
            clients.push(client);
        }
        Ok(Self {
            clients,
            flows: vec![Flow::default(); n],
            connected: 0,
            payload: payload(PAYLOAD_BYTES),
        })
    }
}

impl EchoClients for OfficialClients {
    fn connected(&self) -> usize {
        self.connected
    }

    /// Never waits: each client's socket is its own, read only in
    /// `update`, so every client is updated every turn.
    fn turn(&mut self, clock: Clock, window: usize, tally: &mut Tally) {
        let now = clock.now();
        let mut connected = 0;
        for (client, flow) in self.clients.iter_mut().zip(&mut self.flows) {
            client.update(now);
            while let Some((data, _sequence)) = client.receive_packet() {
                flow.echo(now, data.len(), tally);
            }
            if client.state() == netcode::ClientState::Connected {
                connected += 1;
                if window > 0 {
                    for _ in 0..flow.room(now, window, tally) {
                        if client.send_packet(&self.payload).is_ok() {
                            flow.sent(now);
                        }
                    }
                }
            }
        }
        self.connected = connected;
    }
}

struct RenetClient {
    client: NetcodeClient,
    socket: UdpSocket,
    flow: Flow,
}

struct RenetClients {
    poll: Poll,
    events: Events,
    clients: Vec<RenetClient>,
    ready: Vec<usize>,
    connected: usize,
    last_sweep: Option<f64>,
    buffer: Box<[u8; 1500]>,
    payload: Vec<u8>,
}

impl RenetClients {
    fn new(n: usize, server: SocketAddr) -> Result<Self, String> {
        let poll = Poll::new().map_err(|e| format!("poll: {e}"))?;
        let mut clients = Vec::with_capacity(n);
        for i in 0..n {
            let socket = udp_socket(poll.registry(), Token(i))
                .map_err(|e| format!("renetcode client {i}: {e}"))?;
            let connect_token = ConnectToken::generate(
                unix_now(),
                PROTOCOL_ID,
                EXPIRE_SECONDS,
                i as u64 + 1,
                TIMEOUT_SECONDS,
                vec![server],
                Some(&USER_DATA),
                &PRIVATE_KEY,
            )
            .map_err(|e| format!("renetcode token: {e:?}"))?;
            let client =
                NetcodeClient::new(unix_now(), ClientAuthentication::Secure { connect_token })
                    .map_err(|e| format!("renetcode client {i}: {e:?}"))?;
            clients.push(RenetClient {
                client,
                socket,
                flow: Flow::default(),
            });
        }
        Ok(Self {
            poll,
            events: Events::with_capacity(1024),
            clients,
            ready: Vec::with_capacity(n),
            connected: 0,
            last_sweep: None,
            buffer: Box::new([0; 1500]),
            payload: payload(PAYLOAD_BYTES),
        })
    }
}

impl EchoClients for RenetClients {
    fn connected(&self) -> usize {
        self.connected
    }

    fn turn(&mut self, clock: Clock, window: usize, tally: &mut Tally) {
        let _ = poll(&mut self.poll, &mut self.events, MAX_WAIT);
        let now = clock.now();
        let buffer = &mut self.buffer;
        self.ready.clear();
        for event in self.events.iter() {
            let i = event.token().0;
            let Some(RenetClient {
                client,
                socket,
                flow,
            }) = self.clients.get_mut(i)
            else {
                continue;
            };
            loop {
                let len = match socket.recv_from(&mut buffer[..]) {
                    Ok((len, _from)) => len,
                    Err(e) if retry(&e) => continue,
                    Err(_) => break,
                };
                if let Some(payload) = client.process_packet(&mut buffer[..len]) {
                    flow.echo(now, payload.len(), tally);
                }
            }
            self.ready.push(i);
        }
        let last = *self.last_sweep.get_or_insert(now);
        if now - last >= SWEEP_SECONDS {
            // Every client: its timers, and whatever protocol packet is due
            // (requests, responses, keep-alives).
            self.last_sweep = Some(now);
            let elapsed = Duration::from_secs_f64(now - last);
            for RenetClient { client, socket, .. } in &mut self.clients {
                if let Some((packet, addr)) = client.update(elapsed) {
                    let _ = socket.send_to(packet, addr);
                }
            }
            self.connected = (self.clients.iter())
                .filter(|c| c.client.is_connected())
                .count();
            self.ready.clear();
            self.ready.extend(0..self.clients.len());
        }
        if window == 0 {
            return;
        }
        for &i in &self.ready {
            let RenetClient {
                client,
                socket,
                flow,
            } = &mut self.clients[i];
            if !client.is_connected() {
                continue;
            }
            for _ in 0..flow.room(now, window, tally) {
                if let Ok((addr, packet)) = client.generate_payload_packet(&self.payload)
                    && socket.send_to(packet, addr).is_ok()
                {
                    flow.sent(now);
                }
            }
        }
    }
}

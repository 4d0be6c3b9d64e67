//! The UDP loopback echo run: a server on its own thread, N clients on the
//! calling thread, real datagrams over 127.0.0.1 (the host side of
//! STANDARD.md: payload packets, sections "Encrypted packets" and "Payload
//! packet").
//!
//! Every client keeps up to a window of 100-byte payloads in flight; the
//! server echoes each payload it receives back to its sender, and each echo
//! a client receives lets it send another. After the clients connect and a
//! warm-up, a measuring window counts the payloads the server echoed, the
//! echoes the clients received and the server's own datagram counters, and
//! reads both threads' CPU time and its kernel share (Linux `/proc`:
//! `schedstat`, `stat`). A second, shorter window then counts the server
//! thread's datagram system calls with `perf stat` (where `perf` is on the
//! path), apart from the first so that the tracing costs none of its CPU
//! figures. A payload not echoed within half a second is counted lost and leaves its
//! client's window; the system's count of datagrams dropped for a full
//! receive buffer over the window says where such losses happen.
//!
//! The rows (server kinds, [`ServerKind`]) and their clients
//! ([`kinds::ClientKind`]):
//!
//! * **ours, batched**: a [`netcode_mio::Server`] in its own `mio::Poll`,
//!   used as the crate documents, each turn inside one `server.batch()`
//!   scope, so a turn's echoes leave together (one `sendmmsg` per 32);
//! * **ours, one per call**: the same host code (`netcode_std::Server`) on a
//!   mio socket that implements only `send_to` / `recv_from`, so every
//!   datagram is one system call;
//! * **ours, std**: netcode-std's own server on its default sockets, in the
//!   blocking `wait` / `update` loop its documentation gives
//!   (`std_server.rs`);
//! * **ours, tokio**: netcode-tokio's server on its own driver
//!   (`tokio_server.rs`);
//! * **netcode-official** and **renetcode** (`servers.rs` says how each is
//!   driven), with their own clients and with ours;
//! * **the floor**: a bare echo server with no netcode at all, on the very
//!   same batched socket calls as ours, driven by bare UDP clients sending
//!   datagrams of a netcode payload packet's size (`floor.rs`).
//!
//! netcode 1.02 is one protocol, so any server takes any netcode clients:
//! pairing the peers' servers with our clients keeps the clients' cost the
//! same and leaves the server as the only difference.
//!
//! Where the program installs `counting_alloc::Counting` (the bench and
//! the test binary do), a run also reports the server thread's live
//! heap bytes once all clients are connected and again at the end of the
//! measuring window.
//!
//! The files, each depending only on those listed before it: `kinds.rs`
//! (what is compared), `clock.rs`, `net.rs` (sockets and polling),
//! `syscalls.rs` (perf), `aead.rs` (the AEAD figure), `echo.rs` (what a
//! server and the clients do and count), `floor.rs`, `std_server.rs`,
//! `tokio_server.rs`, `servers.rs` (the other servers and their thread),
//! `clients.rs`; this file runs one pairing.

#![allow(dead_code, unreachable_pub)]

pub mod aead;
mod clients;
mod clock;
mod echo;
mod floor;
pub mod kinds;
mod net;
mod servers;
mod std_server;
pub mod syscalls;
mod tokio_server;

use std::time::Duration;

use netcode_bench::machine::{Cpu, ThreadCpu, udp_counters};

use clients::new_clients;
use clock::Clock;
use echo::{CONNECT_SECONDS, EchoClients, SWEEP_SECONDS, Tally};
use kinds::{Pairing, ServerKind};
use servers::ServerThread;
use syscalls::SyscallCount;

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
    /// The window after it in which `perf stat` counts the server thread's
    /// datagram system calls; `None` counts none.
    pub syscall_window: Option<Duration>,
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
    /// Datagrams the server received and sent, where it counts them.
    pub server_datagrams: Option<u64>,
    /// The server's calls to its socket's batch methods, where it counts
    /// them (on Linux one system call each, except on the one-per-call
    /// socket, whose batch methods loop).
    pub server_calls: Option<u64>,
    /// Keep-alive packets the server sent and received, where it counts
    /// them (the floor has none).
    pub server_keep_alives: Option<u64>,
    /// CPU seconds of the server's thread, where the OS says.
    pub server_cpu: Option<f64>,
    /// CPU seconds of the clients' thread, where the OS says.
    pub client_cpu: Option<f64>,
    /// The share of the server thread's CPU time spent in the kernel.
    pub server_kernel: Option<f64>,
    /// The share of the clients' thread's CPU time spent in the kernel.
    pub client_kernel: Option<f64>,
    /// The server thread's datagram system calls in the second window, or
    /// why there is no count.
    pub syscalls: Result<SyscallCount, String>,
    /// Datagrams the system dropped for a full socket receive buffer
    /// during the window (every UDP socket of the machine; on loopback,
    /// where the bench's are nearly all), where the OS says.
    pub receive_buffer_drops: Option<u64>,
    /// Payloads not echoed within half a second (the whole run, not only
    /// the window).
    pub lost: u64,
    /// Echoes of the wrong length (the whole run).
    pub wrong: u64,
    /// Clients still connected at the end, as the clients see it.
    pub connected_at_end: usize,
    /// The server thread's live heap bytes once every client had
    /// connected, before any payload, where the program counts them.
    pub heap_connected: Option<u64>,
    /// The same at the end of the measuring window, under load (buffer
    /// pools and queues filled).
    pub heap_loaded: Option<u64>,
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

    /// The server thread's CPU per datagram it moved (in or out), in
    /// microseconds, where it counts its datagrams.
    pub fn server_us_per_datagram(&self) -> Option<f64> {
        Some(self.server_cpu? * 1e6 / self.server_datagrams?.max(1) as f64)
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

    /// The server's own count of socket batch calls per datagram.
    pub fn calls_per_datagram(&self) -> Option<f64> {
        Some(self.server_calls? as f64 / self.server_datagrams?.max(1) as f64)
    }

    /// The server's datagrams per payload echoed (2 with no other traffic).
    pub fn datagrams_per_payload(&self) -> Option<f64> {
        Some(self.server_datagrams? as f64 / self.server_payloads.max(1) as f64)
    }

    /// The server's keep-alives (in and out) per payload echoed.
    pub fn keep_alives_per_payload(&self) -> Option<f64> {
        Some(self.server_keep_alives? as f64 / self.server_payloads.max(1) as f64)
    }

    /// Datagram system calls per datagram, from `perf stat`.
    pub fn syscalls_per_datagram(&self) -> Option<f64> {
        self.syscalls.as_ref().ok().map(SyscallCount::per_datagram)
    }
}

/// Runs `pairing` once: starts the server's thread, connects the
/// clients, warms up, measures.
pub fn run(pairing: Pairing, settings: &Settings) -> Result<Measurement, String> {
    if let Some(refusal) = pairing.refusal(settings.clients) {
        return Err(refusal);
    }
    net::check_descriptors(settings.clients)?;
    let clock = Clock::start();
    let server = ServerThread::spawn(pairing.server, settings.clients, clock)?;
    let measured = drive(pairing, &server, settings, clock);
    let stopped = server.stop();
    let measurement = measured?;
    stopped?;
    Ok(measurement)
}

/// Connects the clients and measures, on this thread.
fn drive(
    pairing: Pairing,
    server: &ServerThread,
    settings: &Settings,
    clock: Clock,
) -> Result<Measurement, String> {
    let n = settings.clients;
    let mut clients = new_clients(pairing.clients, n, server.address, clock)?;
    let mut tally = Tally::default();
    let window_size = settings.window;

    let deadline = clock.now() + CONNECT_SECONDS;
    while clients.connected() < n || server.connected().is_some_and(|c| c < n) {
        if clock.now() > deadline {
            return Err(format!(
                "{} of {n} clients connected ({} on the server)",
                clients.connected(),
                server.connected().unwrap_or(0)
            ));
        }
        clients.turn(clock, 0, &mut tally);
    }
    // The server publishes its heap with its connected count; one more
    // refresh after the last connect, before any payload.
    let settle = clock.now() + 2.0 * SWEEP_SECONDS;
    while clock.now() < settle {
        clients.turn(clock, 0, &mut tally);
    }
    let heap_connected = server.heap();

    let run_for = |clients: &mut Box<dyn EchoClients>, tally: &mut Tally, seconds: f64| {
        let end = clock.now() + seconds;
        while clock.now() < end {
            clients.turn(clock, window_size, tally);
        }
    };
    run_for(&mut clients, &mut tally, settings.warm_up.as_secs_f64());
    let cpu = ThreadCpu::this_thread();
    let start = Snapshot::take(clock, server, cpu.as_ref(), &tally);
    run_for(&mut clients, &mut tally, settings.measure.as_secs_f64());
    let stop = Snapshot::take(clock, server, cpu.as_ref(), &tally);
    let heap_loaded = server.heap();

    let syscalls = match settings.syscall_window {
        None => Err("not counted".into()),
        Some(window) => syscalls::Counting::start(server.tid(), window).and_then(|mut counting| {
            // The clients keep the load on until perf has exited, so its
            // whole count falls in steady traffic.
            let before = Snapshot::take(clock, server, None, &tally);
            let give_up = before.time + window.as_secs_f64() + syscalls::GRACE_SECONDS;
            while counting.running() && clock.now() < give_up {
                clients.turn(clock, window_size, &mut tally);
            }
            let after = Snapshot::take(clock, server, None, &tally);
            let calls = counting.finish()?;
            let rate = after.datagrams(pairing.server, &before) / (after.time - before.time);
            Ok(SyscallCount {
                calls,
                datagrams: rate * window.as_secs_f64(),
            })
        }),
    };

    let since = |a: Option<Cpu>, b: Option<Cpu>| {
        let (a, b) = (a?, b?);
        let ticks = (b.user_ticks + b.kernel_ticks) - (a.user_ticks + a.kernel_ticks);
        let kernel = (b.kernel_ticks - a.kernel_ticks) as f64 / ticks.max(1) as f64;
        Some((b.seconds - a.seconds, kernel))
    };
    let server_cpu = since(start.server_cpu, stop.server_cpu);
    let client_cpu = since(start.client_cpu, stop.client_cpu);
    let counted = |value: fn(&Snapshot) -> u64| {
        pairing
            .server
            .counts_datagrams()
            .then(|| value(&stop) - value(&start))
    };
    Ok(Measurement {
        seconds: stop.time - start.time,
        server_payloads: stop.server_payloads - start.server_payloads,
        echoes: stop.echoes - start.echoes,
        server_datagrams: counted(|s| s.server_datagrams),
        server_calls: counted(|s| s.server_calls),
        server_keep_alives: counted(|s| s.server_keep_alives),
        server_cpu: server_cpu.map(|c| c.0),
        client_cpu: client_cpu.map(|c| c.0),
        server_kernel: server_cpu.map(|c| c.1),
        client_kernel: client_cpu.map(|c| c.1),
        syscalls,
        receive_buffer_drops: stop
            .receive_buffer_drops
            .zip(start.receive_buffer_drops)
            .map(|(b, a)| b.saturating_sub(a)),
        lost: tally.lost,
        wrong: tally.wrong,
        connected_at_end: clients.connected(),
        heap_connected,
        heap_loaded,
    })
}

/// The counters at one moment.
struct Snapshot {
    time: f64,
    server_payloads: u64,
    server_datagrams: u64,
    server_calls: u64,
    server_keep_alives: u64,
    echoes: u64,
    receive_buffer_drops: Option<u64>,
    server_cpu: Option<Cpu>,
    client_cpu: Option<Cpu>,
}

impl Snapshot {
    fn take(clock: Clock, server: &ServerThread, cpu: Option<&ThreadCpu>, tally: &Tally) -> Self {
        let counts = server.counts();
        Self {
            time: clock.now(),
            server_payloads: counts.payloads,
            server_datagrams: counts.datagrams,
            server_calls: counts.calls,
            server_keep_alives: counts.keep_alives,
            echoes: tally.echoes,
            receive_buffer_drops: udp_counters().map(|c| c.receive_buffer_errors),
            server_cpu: server.cpu().and_then(ThreadCpu::read),
            client_cpu: cpu.and_then(ThreadCpu::read),
        }
    }

    /// The server's datagrams since `earlier`: its own count where it keeps
    /// one, else two per payload echoed (in and out; the peers' handful of
    /// keep-alives and handshake packets are left out).
    fn datagrams(&self, kind: ServerKind, earlier: &Self) -> f64 {
        if kind.counts_datagrams() {
            (self.server_datagrams - earlier.server_datagrams) as f64
        } else {
            2.0 * (self.server_payloads - earlier.server_payloads) as f64
        }
    }
}

//! renet over this adapter against renet over renet_netcode (renetcode),
//! in one run, with one renet configuration (`ConnectionConfig::default()`)
//! and the same messages: bytes on the wire per message, counted exactly
//! at a relay socket between client and server, and thread CPU time per
//! message spent in renet and the transports (the relay's own work left
//! out).
//!
//! `cargo bench -p netcode-renet --bench compare` (add `-- --quick` for
//! one run per case instead of five).
//!
//! Each case runs one client and one server in this thread over loopback
//! UDP, both talking through the relay (the connect token lists the
//! relay; the servers know their own address as its internal one). The
//! game ticks at a simulated 60 Hz, as fast as the machine goes: the client
//! sends a burst of messages each tick, the server reads them, renet acks.
//! The bench checks that every reliable message arrived and counts the
//! unreliable ones that did.

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use netcode_renet::{ConnectTokenBuilder, Key, NetcodeClientTransport, NetcodeServerTransport};
use renet::{ConnectionConfig, DefaultChannel, RenetClient, RenetServer};

const PROTOCOL_ID: u64 = 0x6265_6e63_6821;
const PRIVATE_KEY: [u8; 32] = [0x17; 32];
const CLIENT_ID: u64 = 99;
/// renet's default channels (checked in `main`).
const RELIABLE: u8 = 2;
const UNRELIABLE: u8 = 0;
const TICK: Duration = Duration::from_micros(16_667);
/// Ticks in which the client sends, per run.
const SENDING_TICKS: u32 = 300;

/// Thread CPU time.
#[cfg(unix)]
fn cpu_now() -> Duration {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(Duration::from)
        .unwrap_or_default()
}

/// Wall time where there is no thread CPU clock to read (not Unix).
#[cfg(not(unix))]
fn cpu_now() -> Duration {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed()
}

/// Forwards datagrams between one client and one server and counts them.
struct Relay {
    /// The address the client sends to.
    front: UdpSocket,
    /// The socket that talks to the server.
    back: UdpSocket,
    server: SocketAddr,
    client: Option<SocketAddr>,
    datagrams: u64,
    bytes: u64,
}

impl Relay {
    fn new(server: SocketAddr) -> Self {
        let front = UdpSocket::bind("127.0.0.1:0").unwrap();
        let back = UdpSocket::bind("127.0.0.1:0").unwrap();
        front.set_nonblocking(true).unwrap();
        back.set_nonblocking(true).unwrap();
        Self {
            front,
            back,
            server,
            client: None,
            datagrams: 0,
            bytes: 0,
        }
    }

    fn address(&self) -> SocketAddr {
        self.front.local_addr().unwrap()
    }

    /// Moves every waiting datagram on.
    fn pump(&mut self) {
        let mut buffer = [0u8; 2048];
        loop {
            let mut moved = false;
            while let Ok((n, from)) = self.front.recv_from(&mut buffer) {
                self.client = Some(from);
                self.count(n);
                let _ = self.back.send_to(&buffer[..n], self.server);
                moved = true;
            }
            while let Ok((n, _)) = self.back.recv_from(&mut buffer) {
                self.count(n);
                if let Some(client) = self.client {
                    let _ = self.front.send_to(&buffer[..n], client);
                }
                moved = true;
            }
            if !moved {
                return;
            }
        }
    }

    fn count(&mut self, n: usize) {
        self.datagrams += 1;
        self.bytes += n as u64;
    }
}

/// One transport's two ends, driven the same way.
trait Transports {
    fn client_update(&mut self, client: &mut RenetClient);
    fn client_send(&mut self, client: &mut RenetClient);
    fn server_update(&mut self, server: &mut RenetServer);
    fn server_send(&mut self, server: &mut RenetServer);
}

/// This crate's transports.
struct Ours {
    server: NetcodeServerTransport,
    client: NetcodeClientTransport,
}

impl Ours {
    fn new() -> (Self, Relay) {
        let key = Key::from_bytes(PRIVATE_KEY);
        let config = netcode_renet::ServerConfig::new(PROTOCOL_ID, key.clone());
        let server = NetcodeServerTransport::new("127.0.0.1:0", config, 4).unwrap();
        let relay = Relay::new(server.addresses()[0]);
        let token = ConnectTokenBuilder::new(PROTOCOL_ID, &key, CLIENT_ID)
            .server_addresses([relay.address()])
            .internal_server_addresses(server.addresses())
            .timeout_seconds(30)
            .generate()
            .unwrap();
        let client = NetcodeClientTransport::new("127.0.0.1:0", &token).unwrap();
        (Self { server, client }, relay)
    }
}

/// renet_netcode's transports.
struct Theirs {
    server: renet_netcode::NetcodeServerTransport,
    client: renet_netcode::NetcodeClientTransport,
}

impl Theirs {
    fn new() -> (Self, Relay) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        let relay = Relay::new(socket.local_addr().unwrap());
        let config = renet_netcode::ServerConfig {
            current_time: now,
            max_clients: 4,
            protocol_id: PROTOCOL_ID,
            public_addresses: vec![relay.address()],
            authentication: renet_netcode::ServerAuthentication::Secure {
                private_key: PRIVATE_KEY,
            },
        };
        let server = renet_netcode::NetcodeServerTransport::new(config, socket).unwrap();
        let connect_token = renet_netcode::ConnectToken::generate(
            now,
            PROTOCOL_ID,
            300,
            CLIENT_ID,
            30,
            vec![relay.address()],
            None,
            &PRIVATE_KEY,
        )
        .unwrap();
        let authentication = renet_netcode::ClientAuthentication::Secure { connect_token };
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        let client =
            renet_netcode::NetcodeClientTransport::new(now, authentication, socket).unwrap();
        (Self { server, client }, relay)
    }
}

/// The same four calls on both transports, whose methods share names and
/// shapes but no trait.
macro_rules! transports {
    ($($stack:ty),*) => {$(
        impl Transports for $stack {
            fn client_update(&mut self, client: &mut RenetClient) {
                self.client.update(TICK, client).unwrap();
            }
            fn client_send(&mut self, client: &mut RenetClient) {
                self.client.send_packets(client).unwrap();
            }
            fn server_update(&mut self, server: &mut RenetServer) {
                self.server.update(TICK, server).unwrap();
            }
            fn server_send(&mut self, server: &mut RenetServer) {
                self.server.send_packets(server);
            }
        }
    )*};
}

transports!(Ours, Theirs);

/// What the client sends: `per_tick` messages of `len` bytes on `channel`.
#[derive(Clone, Copy)]
struct Case {
    name: &'static str,
    channel: u8,
    len: usize,
    per_tick: u32,
}

/// The figures of one run.
#[derive(Debug, Clone, Copy)]
struct Run {
    cpu: Duration,
    datagrams: u64,
    bytes: u64,
    sent: u64,
    received: u64,
}

/// Connects, then sends `case` for [`SENDING_TICKS`] ticks and ticks on
/// until every message is in (reliable) or 60 more ticks have passed.
fn run(mut t: impl Transports, mut relay: Relay, case: Case) -> Run {
    let mut server = RenetServer::new(ConnectionConfig::default());
    let mut client = RenetClient::new(ConnectionConfig::default());
    let channel = case.channel;
    let reliable = channel != UNRELIABLE;
    let tick = |t: &mut dyn Transports,
                server: &mut RenetServer,
                client: &mut RenetClient,
                relay: &mut Relay,
                send: u32,
                cpu: &mut Duration|
     -> u64 {
        let start = cpu_now();
        client.update(TICK);
        t.client_update(client);
        server.update(TICK);
        t.server_update(server);
        let mut received = 0;
        while let Some(m) = server.receive_message(CLIENT_ID, channel) {
            assert_eq!(m.len(), case.len);
            received += 1;
        }
        for _ in 0..send {
            client.send_message(channel, vec![0x42; case.len]);
        }
        t.client_send(client);
        let middle = cpu_now();
        relay.pump();
        let resumed = cpu_now();
        t.server_send(server);
        *cpu += (middle - start) + (cpu_now() - resumed);
        relay.pump();
        received
    };
    let mut ignored = Duration::ZERO;
    for _ in 0..600 {
        tick(
            &mut t,
            &mut server,
            &mut client,
            &mut relay,
            0,
            &mut ignored,
        );
        if client.is_connected() && server.is_connected(CLIENT_ID) {
            break;
        }
    }
    assert!(client.is_connected(), "{}: no connection", case.name);
    relay.datagrams = 0;
    relay.bytes = 0;
    let (mut cpu, mut received, mut sent) = (Duration::ZERO, 0, 0);
    for _ in 0..SENDING_TICKS {
        received += tick(
            &mut t,
            &mut server,
            &mut client,
            &mut relay,
            case.per_tick,
            &mut cpu,
        );
        sent += u64::from(case.per_tick);
    }
    for _ in 0..60 {
        if reliable && received == sent {
            break;
        }
        received += tick(&mut t, &mut server, &mut client, &mut relay, 0, &mut cpu);
    }
    if reliable {
        assert_eq!(received, sent, "{}: reliable messages missing", case.name);
    }
    Run {
        cpu,
        datagrams: relay.datagrams,
        bytes: relay.bytes,
        sent,
        received,
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Per message: bytes (UDP payloads, both directions), datagrams, CPU ns.
fn summarize(runs: &[Run]) -> (f64, f64, f64, u64, u64) {
    let per = |f: &dyn Fn(&Run) -> f64| median(runs.iter().map(f).collect());
    (
        per(&|r| r.bytes as f64 / r.sent as f64),
        per(&|r| r.datagrams as f64 / r.sent as f64),
        per(&|r| r.cpu.as_nanos() as f64 / r.sent as f64),
        runs[0].sent,
        runs.iter().map(|r| r.received).min().unwrap_or(0),
    )
}

fn main() {
    assert_eq!(u8::from(DefaultChannel::ReliableOrdered), RELIABLE);
    assert_eq!(u8::from(DefaultChannel::Unreliable), UNRELIABLE);
    let quick = std::env::args().any(|a| a == "--quick");
    let repeats = if quick { 1 } else { 5 };
    let cases = [
        Case {
            name: "reliable 64 B x50/tick",
            channel: RELIABLE,
            len: 64,
            per_tick: 50,
        },
        Case {
            name: "unreliable 64 B x50/tick",
            channel: UNRELIABLE,
            len: 64,
            per_tick: 50,
        },
        Case {
            name: "reliable 1100 B x10/tick",
            channel: RELIABLE,
            len: 1100,
            per_tick: 10,
        },
        Case {
            name: "reliable 1200 B x10/tick",
            channel: RELIABLE,
            len: 1200,
            per_tick: 10,
        },
        Case {
            name: "reliable 16 KiB x2/tick",
            channel: RELIABLE,
            len: 16 * 1024,
            per_tick: 2,
        },
    ];
    println!(
        "{:<26} {:>8} | {:>9} {:>9} {:>6} {:>6} | {:>7} {:>7} | {:>7} {:>7} {:>5} | {:>9} {:>9} | {:>7}",
        "case (client to server)",
        "messages",
        "B/m ours",
        "B/m rn",
        "ratio",
        "+hdr",
        "dg ours",
        "dg rn",
        "ns ours",
        "ns rn",
        "ratio",
        "msg/s ours",
        "msg/s rn",
        "recv%"
    );
    for case in cases {
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in 0..repeats {
            // Alternate, so neither side always runs on a warmer machine.
            let (t, relay) = Ours::new();
            ours.push(run(t, relay, case));
            let (t, relay) = Theirs::new();
            theirs.push(run(t, relay, case));
        }
        let (b_ours, dg_ours, ns_ours, sent, recv_ours) = summarize(&ours);
        let (b_theirs, dg_theirs, ns_theirs, _, recv_theirs) = summarize(&theirs);
        // With the 28 bytes of IPv4 and UDP headers of each datagram.
        let on_wire = |bytes: f64, datagrams: f64| bytes + 28.0 * datagrams;
        println!(
            "{:<26} {:>8} | {:>9.1} {:>9.1} {:>6.3} {:>6.3} | {:>7.3} {:>7.3} | {:>7.0} {:>7.0} {:>5.2} | {:>9.0} {:>9.0} | {:>3}/{:>3}",
            case.name,
            sent,
            b_ours,
            b_theirs,
            b_ours / b_theirs,
            on_wire(b_ours, dg_ours) / on_wire(b_theirs, dg_theirs),
            dg_ours,
            dg_theirs,
            ns_ours,
            ns_theirs,
            ns_ours / ns_theirs,
            1e9 / ns_ours,
            1e9 / ns_theirs,
            recv_ours * 100 / sent,
            recv_theirs * 100 / sent
        );
    }
    println!(
        "\nB/m: UDP payload bytes per message, both directions; ratio: ours / renet_netcode; \
         +hdr: the same ratio with 28 bytes of IPv4 and UDP headers per datagram; \
         dg: datagrams per message; ns: thread CPU ns per message in renet and the transport; \
         msg/s: messages per CPU second; medians of {repeats} runs; recv%: messages that arrived, ours/theirs."
    );
}

//! Crash tests of the `server` example, run as the `netcode-server` binary
//! on a fixed loopback port: it is killed with SIGKILL at random points
//! (just after a client connected, after a random delay, while another
//! client's handshake is in flight and its token's record may be half
//! synced), often within the unix second in which it started and the token
//! was used, and restarted at once on the same port. After every restart
//! each connect token used so far is replayed from fresh sockets (and once
//! from its own address), and none may be answered, let alone connect,
//! while a token minted after the restart must connect.
//!
//! This tests STANDARD.md's *Nonce Reuse and Server Restarts*: with
//! `--token-history FILE`, the persisted connect token history (a token is
//! answered only once its record is synced, and a restarted server refuses
//! every token the file holds; the file's lock dies with the process);
//! without it, the restart rule (a restarted server refuses every token
//! that may have been minted in or before the second it started).
//!
//! `NETCODE_CRASH_SEED=N` repeats a run's random choices (each failure
//! names its seed).

use std::net::{SocketAddr, UdpSocket};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::thread::sleep;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::common::Program;

use netcode_examples::{CONNECT_TOKEN_EXPIRY, CONNECT_TOKEN_TIMEOUT, PRIVATE_KEY, PROTOCOL_ID};
use netcode_std::proto::Key;
use netcode_std::{Client, ClientEvent, ClientState, ConnectTokenBuilder, random_bytes};

/// The server under test.
const SERVER: &str = env!("CARGO_BIN_EXE_netcode-server");

/// How long each replay runs: a token the server wrongly admitted would be
/// answered within one round trip and a frame of the server's 60 Hz loop.
const REPLAY_WINDOW: Duration = Duration::from_millis(300);

/// The longest a fresh token may take to connect.
const CONNECT_LIMIT: Duration = Duration::from_secs(3);

/// The most time between a new client's first request and the kill: a
/// little over two frames of the server's loop, which cover its reading
/// the request, syncing the token's record, and sending the challenge.
const IN_FLIGHT_SPAN_MICROS: u64 = 40_000;

/// Kills with a token history file; the server restarts without waiting.
const HISTORY_KILLS: usize = 32;

/// Kills under the restart rule alone; each restart waits out its start
/// second, so these take about a second each.
const RULE_KILLS: usize = 10;

/// Iterations that must have started, used a token, been killed and
/// restarted within one unix second.
const MIN_SAME_SECOND: usize = 3;

#[test]
fn killed_server_with_a_token_history_never_answers_a_used_token_again() {
    let dir = TempDir::new("history");
    let file = dir.0.join("tokens.history");
    let tally = crash_loop("with --token-history", Some(&file), HISTORY_KILLS);
    assert!(
        tally.same_second >= MIN_SAME_SECOND,
        "only {} of {} kills were within the second of the server's start and the token's use: {tally:?}",
        tally.same_second,
        tally.kills
    );
}

#[test]
fn killed_server_under_the_restart_rule_never_answers_a_used_token_again() {
    let tally = crash_loop("without --token-history", None, RULE_KILLS);
    assert!(
        tally.same_second >= MIN_SAME_SECOND,
        "only {} of {} restarts were within the second of the token's use: {tally:?}",
        tally.same_second,
        tally.kills
    );
}

/// What a crash loop did.
#[derive(Debug, Default)]
struct Tally {
    kills: usize,
    /// Kills whose token was used, and the server killed and restarted,
    /// within one unix second (with a history file, the second the killed
    /// server started in, too).
    same_second: usize,
    /// Replays run, and those from the token's own address.
    replays: usize,
    own_address_replays: usize,
    /// Kills with a handshake in flight; of those, handshakes the dead
    /// server had answered, and unanswered ones whose token the restarted
    /// server then admitted (its record was not yet durable, so nothing
    /// had been sent under its keys).
    in_flight: usize,
    in_flight_answered: usize,
    in_flight_admitted_after_restart: usize,
    /// The slowest restart (spawn to `listening on`), and the restarts
    /// that took over 300 ms (a restart that waits out its second).
    slowest_restart: Duration,
    slow_restarts: usize,
}

/// A connect token used against the server.
struct Used {
    token: Vec<u8>,
    what: String,
    /// The port it was used from, until it is replayed from there.
    own_port: Option<u16>,
    /// Whether the server may never answer it again. Only a handshake the
    /// server had not answered when it was killed may be answered after a
    /// restart, and only with a history file: its record may not have
    /// been durable, and then no packet was ever sent under its keys.
    strict: bool,
}

/// Where the kill falls.
#[derive(Debug, Clone, Copy)]
enum Kill {
    /// As soon as a client has connected.
    Connected,
    /// A random 0-300 ms after a client connected.
    Delayed(Duration),
    /// A random time after a second client's first connection request.
    InFlight(Duration),
    /// The moment a second client's first connection request is answered:
    /// a server that answered before its record of the token was durable
    /// would most likely die with the record unwritten.
    Answered,
}

fn crash_loop(name: &str, history: Option<&Path>, kills: usize) -> Tally {
    let seed = seed();
    let mut rng = Rng(seed);
    let address = SocketAddr::from(([127, 0, 0, 1], free_port(&mut rng)));
    let run = format!("{name}, seed {seed}, server {address}");
    let epoch = Instant::now();
    let mut tally = Tally::default();
    let mut used: Vec<Used> = Vec::new();

    let (mut server, _) = start_server(address, history, &format!("{run}: first start"));
    let mut listening = unix_second(SystemTime::now());
    if let Some(file) = history {
        second_server_is_refused(file, &run);
    }

    for iteration in 0..kills {
        // Answered twice as often: it is the kill that finds a server
        // answering before its record is durable.
        let kill = match rng.below(5) {
            0 => Kill::Connected,
            1 => Kill::Delayed(Duration::from_millis(rng.below(301))),
            2 => Kill::InFlight(Duration::from_micros(rng.below(IN_FLIGHT_SPAN_MICROS))),
            _ => Kill::Answered,
        };
        let at = format!("{run}, iteration {iteration} ({kill:?})");

        // A fresh token, connected.
        let token = mint(address, &mut rng);
        let used_at = unix_second(SystemTime::now());
        let mut client = Attempt::start(&token, epoch, None);
        assert!(
            client.connect(epoch),
            "{at}: a fresh token did not connect (last state {})\n--- server\n{}",
            client.last,
            server.transcript()
        );
        used.push(Used {
            token,
            what: format!("the token used in iteration {iteration}"),
            own_port: Some(client.port()),
            strict: true,
        });

        let mut in_flight = None;
        match kill {
            Kill::Connected => {}
            Kill::Delayed(delay) => sleep(delay),
            Kill::InFlight(delay) => {
                let token = mint(address, &mut rng);
                let second = Attempt::start(&token, epoch, None);
                sleep(delay);
                in_flight = Some((token, second));
            }
            Kill::Answered => {
                let token = mint(address, &mut rng);
                let mut second = Attempt::start(&token, epoch, None);
                let begin = Instant::now();
                while !second.answered && begin.elapsed() < CONNECT_LIMIT {
                    sleep(Duration::from_micros(50));
                    second.step(epoch);
                }
                assert!(
                    second.answered,
                    "{at}: a fresh token's request was not answered (last state {})\n--- server\n{}",
                    second.last,
                    server.transcript()
                );
                in_flight = Some((token, second));
            }
        }

        let killed_at = unix_second(SystemTime::now());
        server.child.kill().expect("SIGKILL the server");
        server.child.wait().expect("reap the killed server");
        tally.kills += 1;

        if let Some((token, mut second)) = in_flight {
            // Whatever the dead server sent is in the socket's buffer now.
            for _ in 0..20 {
                second.step(epoch);
                sleep(Duration::from_millis(1));
            }
            tally.in_flight += 1;
            tally.in_flight_answered += usize::from(second.answered);
            let state = if second.answered {
                "answered"
            } else {
                "unanswered"
            };
            used.push(Used {
                token,
                what: format!("the token in flight at iteration {iteration}'s kill ({state})"),
                own_port: Some(second.port()),
                strict: history.is_none() || second.answered,
            });
        }
        // Gone before the restart, as a crashed game's clients would be.
        drop(client);

        let restart = format!("{at}: restart on the same port and file");
        let (restarted, took) = start_server(address, history, &restart);
        server = restarted;
        let restarted_at = unix_second(SystemTime::now() - took);
        tally.slowest_restart = tally.slowest_restart.max(took);
        tally.slow_restarts += usize::from(took > Duration::from_millis(300));
        let same_second = used_at == killed_at
            && killed_at == restarted_at
            && (history.is_none() || listening == used_at);
        tally.same_second += usize::from(same_second);
        listening = unix_second(SystemTime::now());

        let at = format!(
            "{at}, {} second",
            if same_second { "same" } else { "not the same" }
        );
        replay(
            &mut server,
            &mut used,
            address,
            epoch,
            &mut rng,
            &mut tally,
            &at,
        );
    }

    println!("{run}: {tally:?}");
    tally
}

/// Replays every used token after a restart, each from a fresh socket and
/// (once) from its own address, all at once, beside a fresh token: none
/// may be answered, and the fresh one must connect.
fn replay(
    server: &mut Program,
    used: &mut Vec<Used>,
    address: SocketAddr,
    epoch: Instant,
    rng: &mut Rng,
    tally: &mut Tally,
    at: &str,
) {
    let fresh_token = mint(address, rng);
    let mut fresh = Attempt::start(&fresh_token, epoch, None);
    let mut replays: Vec<(usize, &str, Attempt)> = Vec::new();
    for (index, u) in used.iter_mut().enumerate() {
        let attempt = Attempt::start(&u.token, epoch, None);
        replays.push((index, "a fresh socket", attempt));
        if let Some(port) = u.own_port.take()
            && let Some(attempt) = Attempt::try_start(&u.token, epoch, Some(port))
        {
            replays.push((index, "its own address", attempt));
            tally.own_address_replays += 1;
        }
    }
    tally.replays += replays.len();

    let begin = Instant::now();
    loop {
        fresh.step(epoch);
        for (_, _, attempt) in &mut replays {
            attempt.step(epoch);
        }
        let elapsed = begin.elapsed();
        if (fresh.connected && elapsed >= REPLAY_WINDOW) || elapsed >= CONNECT_LIMIT {
            break;
        }
        sleep(Duration::from_millis(1));
    }

    for (index, from, attempt) in &replays {
        let u = &mut used[*index];
        if u.strict {
            assert!(
                !attempt.connected,
                "{at}: {} connected again after the restart, replayed from {from} (port {}): nonce reuse\n--- server\n{}",
                u.what,
                attempt.port(),
                server.transcript()
            );
            assert!(
                !attempt.answered,
                "{at}: {} was answered again after the restart (client state {}), replayed from {from} (port {}): the server sent under the token's keys again\n--- server\n{}",
                u.what,
                attempt.last,
                attempt.port(),
                server.transcript()
            );
        } else if attempt.answered {
            // Its record was not durable, so the dead server sent nothing
            // under its keys: this is their first use. Never again.
            u.strict = true;
            u.what.push_str(", admitted after its restart");
            tally.in_flight_admitted_after_restart += 1;
        }
    }
    assert!(
        fresh.connected,
        "{at}: positive control: a token minted after the restart's `listening on` line did not connect within {CONNECT_LIMIT:?} (last state {}), so the replays prove nothing\n--- server\n{}",
        fresh.last,
        server.transcript()
    );
    used.push(Used {
        token: fresh_token,
        what: format!("{at}'s positive control token"),
        own_port: Some(fresh.port()),
        strict: true,
    });
}

/// With a history file, a second server on it fails while the first runs,
/// naming the lock: so the restarts that succeed show the lock died with
/// the killed process, not that there is none.
fn second_server_is_refused(file: &Path, run: &str) {
    let mut second = Program::start(
        "second server",
        SERVER,
        &["127.0.0.1:0", "--token-history", path_text(file)],
    );
    let status = second.finish();
    let transcript = second.transcript();
    assert!(
        !status.success() && transcript.contains("in use by another server"),
        "{run}: a second server on the same token history file was not refused ({status}):\n{transcript}"
    );
}

/// Starts the server on `address` (with the history file, if any) and
/// waits for its `listening on` line: the server, and how long it took.
fn start_server(address: SocketAddr, history: Option<&Path>, at: &str) -> (Program, Duration) {
    let address = address.to_string();
    let mut args = vec![address.as_str()];
    if let Some(file) = history {
        args.extend(["--token-history", path_text(file)]);
    }
    let begin = Instant::now();
    let mut server = Program::start("server", SERVER, &args);
    match catch_unwind(AssertUnwindSafe(|| server.line_with("listening on"))) {
        Ok(line) => {
            assert!(line.ends_with(&address), "{at}: {line}");
            (server, begin.elapsed())
        }
        Err(panic) => {
            let reason = panic
                .downcast_ref::<String>()
                .map_or("(no message)", String::as_str);
            panic!("{at}: the server did not start: {reason}");
        }
    }
}

/// A connect token for the server at `address`, with the example client's
/// key, protocol id, expiry and timeout, and a random client id.
fn mint(address: SocketAddr, rng: &mut Rng) -> Vec<u8> {
    let key = Key::from_bytes(PRIVATE_KEY);
    ConnectTokenBuilder::new(PROTOCOL_ID, &key, rng.next())
        .server_addresses([address])
        .expire_seconds(CONNECT_TOKEN_EXPIRY)
        .timeout_seconds(CONNECT_TOKEN_TIMEOUT)
        .generate()
        .expect("generate a connect token")
        .to_vec()
}

/// A client connecting with one token, and what the server answered.
struct Attempt {
    client: Client,
    /// A challenge or denial arrived: the server sent under the token's
    /// keys.
    answered: bool,
    connected: bool,
    last: ClientState,
}

impl Attempt {
    /// A client on loopback (on `port`, or a fresh one) that has sent its
    /// first connection request with `token`.
    fn start(token: &[u8], epoch: Instant, port: Option<u16>) -> Self {
        Self::try_start(token, epoch, port).expect("a loopback client socket")
    }

    /// As [`Attempt::start`]; `None` when the port is taken.
    fn try_start(token: &[u8], epoch: Instant, port: Option<u16>) -> Option<Self> {
        let bind = SocketAddr::from(([127, 0, 0, 1], port.unwrap_or(0)));
        let mut client = Client::new(bind).ok()?;
        client.update(epoch.elapsed().as_secs_f64());
        client.connect(token).expect("connect with a valid token");
        let mut attempt = Self {
            client,
            answered: false,
            connected: false,
            last: ClientState::SendingConnectionRequest,
        };
        attempt.step(epoch);
        Some(attempt)
    }

    /// Updates the client and notes every state it passed through.
    fn step(&mut self, epoch: Instant) {
        self.client.update(epoch.elapsed().as_secs_f64());
        while let Some(ClientEvent::StateChanged { to, .. }) = self.client.poll_event() {
            self.note(to);
        }
        self.note(self.client.state());
    }

    fn note(&mut self, state: ClientState) {
        use ClientState::*;
        self.answered |= matches!(
            state,
            SendingConnectionResponse
                | Connected
                | ConnectionDenied
                | ConnectionResponseTimedOut
                | ConnectionTimedOut
        );
        self.connected |= matches!(state, Connected | ConnectionTimedOut);
        self.last = state;
    }

    /// Drives the client until it connects or gives up, within
    /// [`CONNECT_LIMIT`]; whether it connected.
    fn connect(&mut self, epoch: Instant) -> bool {
        let begin = Instant::now();
        while !self.connected && self.last.code() > 0 && begin.elapsed() < CONNECT_LIMIT {
            sleep(Duration::from_millis(1));
            self.step(epoch);
        }
        self.connected
    }

    fn port(&self) -> u16 {
        self.client.port()
    }
}

/// The unix second of `time`.
fn unix_second(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .expect("a clock after 1970")
        .as_secs()
}

/// A free loopback UDP port, below the usual ephemeral range so that no
/// client socket takes it between a kill and the restart.
fn free_port(rng: &mut Rng) -> u16 {
    for _ in 0..200 {
        let port = 20_000 + rng.below(12_000) as u16;
        if UdpSocket::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    let socket = UdpSocket::bind("127.0.0.1:0").expect("a loopback UDP socket");
    socket.local_addr().expect("its address").port()
}

fn path_text(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 temporary path")
}

/// `NETCODE_CRASH_SEED`, or a random seed.
fn seed() -> u64 {
    if let Ok(text) = std::env::var("NETCODE_CRASH_SEED") {
        return text.parse().expect("NETCODE_CRASH_SEED is a number");
    }
    let mut bytes = [0; 8];
    random_bytes(&mut bytes).expect("random bytes");
    u64::from_le_bytes(bytes)
}

/// splitmix64: the test's random choices, repeatable from the seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }
}

/// A directory of its own under the temporary directory, removed (with
/// the history file and its lock) when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(what: &str) -> Self {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!(
            "netcode-crash-{what}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).expect("create a temporary directory");
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

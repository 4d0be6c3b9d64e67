//! What the tests of the server binary share: the binary run as a child
//! process (its stderr collected line by line, its exit waited for with a
//! deadline, killed if a test gives up), the key file it reads, free
//! loopback ports, and a netcode-std client that connects with a token for
//! the address the fake sidecar reports and checks its echoes.
#![allow(dead_code, unreachable_pub)]

use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use netcode_agones::netcode_std::{Client, ClientState};

/// Any wait in these tests gives up after this long.
pub const DEADLINE: Duration = Duration::from_secs(15);

/// The protocol id the tests' server runs with, as the command line has it.
pub const PROTOCOL_ID_ARG: &str = "0x1122334455667788";

/// A UDP port of 127.0.0.1 free a moment ago.
pub fn free_udp_port() -> u16 {
    let socket = UdpSocket::bind("127.0.0.1:0").expect("a free UDP port");
    socket.local_addr().expect("its address").port()
}

/// A TCP port of 127.0.0.1 free a moment ago (where no sidecar listens).
pub fn free_tcp_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free TCP port");
    listener.local_addr().expect("its address").port()
}

/// A key file holding the tests' key as 64 hex digits, removed on drop.
pub struct KeyFile(pub PathBuf);

impl KeyFile {
    pub fn new() -> Self {
        static COUNT: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "netcode-agones-test-{}-{}.key",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        let mut hex = String::new();
        for byte in test_fixtures::PRIVATE_KEY {
            let _ = write!(hex, "{byte:02x}");
        }
        std::fs::write(&path, hex + "\n").expect("write the key file");
        Self(path)
    }
}

impl Drop for KeyFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The server binary, running.
pub struct ServerProcess {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
    _key: KeyFile,
}

impl ServerProcess {
    /// Runs the server bound at 127.0.0.1:`netcode_port` with the SDK at
    /// `sdk_port`, pinging every 0.1 s, with `extra` arguments.
    pub fn start(netcode_port: u16, sdk_port: u16, extra: &[&str]) -> Self {
        let key = KeyFile::new();
        let bind = format!("127.0.0.1:{netcode_port}");
        let mut child = Command::new(env!("CARGO_BIN_EXE_netcode-agones-server"))
            .args(["--bind", &bind, "--key-file"])
            .arg(&key.0)
            .args(["--protocol-id", PROTOCOL_ID_ARG, "--health-period", "0.1"])
            .args(extra)
            .env("AGONES_SDK_GRPC_PORT", sdk_port.to_string())
            // status.address, whatever the environment running the tests says.
            .env_remove(netcode_agones::ADDRESS_TYPE_VARIABLE)
            // Everything of netcode's, and the rest from warnings up.
            .env("RUST_LOG", "warn,netcode=debug")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run netcode-agones-server");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let stderr = child.stderr.take().expect("its stderr");
        let collected = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                collected.lock().expect("the lines").push(line);
            }
        });
        Self {
            child,
            lines,
            _key: key,
        }
    }

    /// Its stderr so far.
    pub fn output(&self) -> String {
        self.lines.lock().expect("the lines").join("\n")
    }

    /// Whether a line of its stderr so far contains `text`.
    pub fn said(&self, text: &str) -> bool {
        self.lines
            .lock()
            .expect("the lines")
            .iter()
            .any(|line| line.contains(text))
    }

    /// Whether it is still running.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Waits for it to exit, at most `timeout`; panics with its output if
    /// it does not.
    pub fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for the server") {
                // Let the reader thread take the last lines.
                std::thread::sleep(Duration::from_millis(50));
                return status;
            }
            assert!(
                start.elapsed() < timeout,
                "the server did not exit within {timeout:?}; it said:\n{}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Sends it SIGTERM, as Kubernetes stops a pod.
    #[cfg(unix)]
    pub fn sigterm(&self) {
        use nix::sys::signal::{Signal, kill};
        use nix::unistd::Pid;
        let pid = i32::try_from(self.child.id()).expect("a pid");
        kill(Pid::from_raw(pid), Signal::SIGTERM).expect("send SIGTERM");
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if self.running() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The metrics page at 127.0.0.1:`port` (HTTP/1.0, read to the end), or
/// the error in words.
pub fn scrape(port: u16) -> Result<String, String> {
    use std::io::{Read, Write};
    let mut stream =
        std::net::TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(2)))
        .map_err(|e| e.to_string())?;
    stream
        .write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .map_err(|e| e.to_string())?;
    let mut page = String::new();
    stream
        .read_to_string(&mut page)
        .map_err(|e| e.to_string())?;
    Ok(page)
}

/// Scrapes every 50 ms until a line of the page is `line`; panics with
/// the last page after [`DEADLINE`].
pub fn wait_metric(port: u16, line: &str) {
    let start = Instant::now();
    loop {
        let page = scrape(port);
        if page.as_ref().is_ok_and(|p| p.lines().any(|l| l == line)) {
            return;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "no metric line {line:?}; the last scrape: {page:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A netcode-std client of the server at `server`, as a player with
/// `client_id`.
pub struct Player {
    pub client: Client,
    pub client_id: u64,
    epoch: Instant,
    sent: u64,
}

impl Player {
    /// Connects with a token (5 s timeout) listing `server`; panics if it
    /// is not connected within [`DEADLINE`].
    pub fn connect(server: SocketAddr, client_id: u64) -> Self {
        let mut client = Client::new("127.0.0.1").expect("a client socket");
        let token = test_fixtures::token(client_id, &[server]);
        client.connect(&token).expect("connect");
        let mut player = Self {
            client,
            client_id,
            epoch: Instant::now(),
            sent: 0,
        };
        player.run_until("connected", |c| c.state() == ClientState::Connected);
        player
    }

    /// Updates the client every millisecond until `done` holds; panics
    /// with `what` after [`DEADLINE`].
    pub fn run_until(&mut self, what: &str, mut done: impl FnMut(&mut Client) -> bool) {
        let start = Instant::now();
        loop {
            self.client.update(self.epoch.elapsed().as_secs_f64());
            if done(&mut self.client) {
                return;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "client {}: gave up waiting for {what} (state {:?})",
                self.client_id,
                self.client.state()
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Sends a payload and waits for its echo; panics if a wrong one
    /// comes or none does.
    pub fn echo(&mut self) {
        self.sent += 1;
        let payload =
            test_fixtures::pattern(100 + (self.sent % 900) as usize, self.client_id + self.sent);
        self.client.send_packet(&payload).expect("send a payload");
        let mut echoed = false;
        self.run_until("an echo", |client| {
            while let Some(packet) = client.receive_packet() {
                assert_eq!(packet.data(), &payload[..], "a wrong echo");
                echoed = true;
            }
            echoed
        });
    }

    /// Echoes for `duration`, one payload at a time; returns how many.
    pub fn echo_for(&mut self, duration: Duration) -> u64 {
        let start = Instant::now();
        let mut count = 0;
        while start.elapsed() < duration {
            self.echo();
            count += 1;
            std::thread::sleep(Duration::from_millis(20));
        }
        count
    }

    /// Updates the client for `duration`.
    pub fn idle(&mut self, duration: Duration) {
        let start = Instant::now();
        self.run_until("time to pass", |_| start.elapsed() >= duration);
    }
}

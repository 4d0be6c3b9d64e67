//! The harness the end-to-end tests share: the matcher program started
//! with files of its own and stopped, a real HTTP client (ureq) to ask it,
//! a bare one that sends exactly the bytes given from a chosen loopback
//! address, readers of its metrics and of its memory use, netcode servers
//! started without waiting out the restart rule, and the turns that keep
//! the storm alone on the machine.

use std::io::{BufRead, BufReader, Read};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use netcode_tokio::{Key, Server};

/// Turns at the machine. The storm measures times and memory under a load
/// it makes itself, which holds only if nothing else loads the machine (it
/// ran alone when it was a test program of its own): while it runs, no
/// other test that starts programs or servers does. Those take a shared
/// turn for their whole run; the storm takes the machine to itself.
static TURNS: RwLock<()> = RwLock::const_new(());

/// A turn shared with every other test but the storm.
pub(crate) async fn shared_turn() -> RwLockReadGuard<'static, ()> {
    TURNS.read().await
}

/// [`shared_turn`], for a test that runs off any async runtime.
pub(crate) fn shared_turn_blocking() -> RwLockReadGuard<'static, ()> {
    TURNS.blocking_read()
}

/// The machine to itself, once the tests holding a turn are done.
pub(crate) async fn whole_turn() -> RwLockWriteGuard<'static, ()> {
    TURNS.write().await
}

/// The protocol id the matcher is started with.
pub(crate) const PROTOCOL_ID: u64 = 0x1122_3344_5566_7788;
/// The key the matcher and the fleet share.
pub(crate) const KEY: [u8; 32] = [0x3c; 32];
/// The bearer secret.
pub(crate) const SECRET: &str = "correct horse battery staple";

/// Writes the secret and key files of test `name`; returns their paths.
pub(crate) fn files(name: &str, key_text: &str) -> (PathBuf, PathBuf) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let (secret, key) = (dir.join("secret"), dir.join("key"));
    std::fs::write(&secret, format!("{SECRET}\n")).unwrap();
    std::fs::write(&key, key_text).unwrap();
    (secret, key)
}

/// The key, as the key file holds it.
pub(crate) fn key_hex() -> String {
    Key::from_bytes(KEY).to_hex().to_string()
}

/// The matcher program, to run, logging at its default level whatever
/// `RUST_LOG` this process was given (the tests count its lines).
pub(crate) fn matcher() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_matcher"));
    command.env_remove("RUST_LOG");
    command
}

/// Opens `max_clients` slots on `server` without waiting out the restart
/// rule; the first unix second whose tokens it admits. Ask for a token
/// only once the wall clock is there ([`until_unix_second`]): the matcher
/// issues its tokens as of the moment it is asked.
pub(crate) fn start_nowait(server: &mut Server, max_clients: usize) -> u64 {
    server.get_mut().start_nowait(max_clients).unwrap()
}

/// Sleeps until the wall clock reaches unix second `second` (returns at
/// once if it has).
pub(crate) async fn until_unix_second(second: u64) {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    if let Some(wait) = Duration::from_secs(second).checked_sub(now) {
        tokio::time::sleep(wait).await;
    }
}

/// The matcher program, running; killed when dropped.
pub(crate) struct Running {
    child: Child,
    /// Where it listens: `http://ADDR`.
    pub(crate) url: String,
    /// Where its metrics are, `http://ADDR/metrics`, if asked for with
    /// `--metrics`.
    pub(crate) metrics: Option<String>,
}

impl Running {
    /// Starts the matcher for test `name`, listing `servers`.
    pub(crate) fn start(name: &str, servers: &[SocketAddr]) -> Self {
        Self::start_with(name, servers, &[])
    }

    /// Starts the matcher for test `name`, listing `servers`, with `more`
    /// options. Unless `more` sets it, the per-source rate limit is off:
    /// the functional tests send dozens of requests a second from one
    /// address.
    pub(crate) fn start_with(name: &str, servers: &[SocketAddr], more: &[String]) -> Self {
        let (secret, key) = files(name, &key_hex());
        let mut command = matcher();
        command
            .args([
                "--listen",
                "127.0.0.1:0",
                "--protocol-id",
                "0x1122334455667788",
            ])
            .arg("--secret-file")
            .arg(&secret)
            .arg("--key-file")
            .arg(&key);
        for server in servers {
            command.args(["--server", &server.to_string()]);
        }
        if !more.iter().any(|arg| arg == "--rate-per-source") {
            command.args(["--rate-per-source", "0"]);
        }
        command.args(more);
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        let metrics = more.iter().any(|arg| arg == "--metrics").then(|| {
            let mut line = String::new();
            stdout.read_line(&mut line).unwrap();
            line.trim()
                .strip_prefix("metrics on ")
                .unwrap_or_else(|| panic!("unexpected second line {line:?}"))
                .to_owned()
        });
        Self {
            child,
            url,
            metrics,
        }
    }

    /// Its process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The address it listens on.
    pub(crate) fn address(&self) -> SocketAddr {
        self.url
            .strip_prefix("http://")
            .and_then(|address| address.parse().ok())
            .unwrap_or_else(|| panic!("not an http://ADDR URL: {}", self.url))
    }

    /// Its metrics now, as text.
    pub(crate) fn scrape(&self) -> String {
        let url = self.metrics.as_deref().expect("started with --metrics");
        let mut response = ureq::get(url).call().expect("metrics answered");
        response.body_mut().read_to_string().unwrap()
    }

    /// Its resident memory now, in KiB (VmRSS in /proc/PID/status).
    pub(crate) fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("no VmRSS in {status}"))
    }

    /// Asks it to stop with SIGTERM; its exit status, if it stops within
    /// `limit`.
    pub(crate) fn terminate(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let sent = Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status()
            .unwrap();
        assert!(sent.success(), "kill -TERM");
        let started = std::time::Instant::now();
        while started.elapsed() < limit {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// Whether the program is still running.
    pub(crate) fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Stops the program; what it wrote on stderr.
    pub(crate) fn stop(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut text = String::new();
        if let Some(mut stderr) = self.child.stderr.take() {
            stderr.read_to_string(&mut text).unwrap();
        }
        text
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP answer: status, `WWW-Authenticate`, `Retry-After`, body.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) authenticate: Option<String>,
    pub(crate) retry_after: Option<String>,
    pub(crate) body: String,
}

/// Sends `method path` with `authorization` and `body` to `url`.
pub(crate) fn http(
    url: &str,
    method: &str,
    path: &str,
    authorization: Option<&str>,
    body: &str,
) -> Answer {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let url = format!("{url}{path}");
    let mut response = match method {
        "POST" => {
            let mut request = agent.post(&url).content_type("application/json");
            if let Some(value) = authorization {
                request = request.header("Authorization", value);
            }
            request.send(body)
        }
        _ => agent.get(&url).call(),
    }
    .expect("an HTTP answer");
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    };
    let authenticate = header("www-authenticate");
    let retry_after = header("retry-after");
    Answer {
        status: response.status().as_u16(),
        authenticate,
        retry_after,
        body: response.body_mut().read_to_string().unwrap(),
    }
}

/// A token request with the right secret.
pub(crate) fn ask(url: &str, body: &str) -> Answer {
    http(
        url,
        "POST",
        "/token",
        Some(&format!("Bearer {SECRET}")),
        body,
    )
}

/// The value of the series `name` (with its labels, as the text writes
/// them) in the metrics `text`.
pub(crate) fn metric(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {text}"))
}

/// An answer read by [`raw`]: status, headers (names in lower case) and
/// body.
#[derive(Debug)]
pub(crate) struct RawAnswer {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: String,
}

impl RawAnswer {
    /// The value of header `name` (lower case).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A connection to `to` from loopback address `from` (any port).
pub(crate) async fn connect_from(from: IpAddr, to: SocketAddr) -> tokio::net::TcpStream {
    let socket = match from {
        IpAddr::V4(_) => tokio::net::TcpSocket::new_v4(),
        IpAddr::V6(_) => tokio::net::TcpSocket::new_v6(),
    }
    .unwrap();
    socket.bind(SocketAddr::new(from, 0)).unwrap();
    socket.connect(to).await.unwrap()
}

/// Sends the bytes of `request` to `to` from `from` on a new connection
/// and reads the answer to the end (the request should say
/// `Connection: close`); `None` if the connection ends without an answer.
pub(crate) async fn raw(from: IpAddr, to: SocketAddr, request: &[u8]) -> Option<RawAnswer> {
    let mut stream = connect_from(from, to).await;
    // The server may answer and close before taking it all (431, 401).
    let _ = stream.write_all(request).await;
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes).await;
    parse_answer(&bytes)
}

/// The answer in `bytes`, if they hold one.
fn parse_answer(bytes: &[u8]) -> Option<RawAnswer> {
    let text = String::from_utf8_lossy(bytes);
    let (head, body) = text.split_once("\r\n\r\n")?;
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Some(RawAnswer {
        status,
        headers,
        body: body.to_owned(),
    })
}

/// The bytes of a token request for `client_id` presenting `secret`,
/// closing the connection after.
pub(crate) fn token_request(secret: &str, client_id: u64) -> Vec<u8> {
    let body = format!(r#"{{"protocol_id": {PROTOCOL_ID}, "client_id": {client_id}}}"#);
    format!(
        "POST /token HTTP/1.1\r\nHost: matcher\r\nAuthorization: Bearer {secret}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Raises this process's open-file limit to its hard limit (the storm
/// tests hold thousands of sockets); the limit after.
pub(crate) fn raise_fd_limit() -> u64 {
    rlimit::increase_nofile_limit(u64::MAX).unwrap()
}

/// Runs the matcher with `args` to completion.
pub(crate) fn run(args: &[&str]) -> Output {
    matcher().args(args).output().unwrap()
}

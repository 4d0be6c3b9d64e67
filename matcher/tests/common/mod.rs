//! The harness the end-to-end tests share: the matcher program started
//! with files of its own and stopped, and a real HTTP client (ureq) to
//! ask it.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

use netcode_tokio::Key;

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

/// The matcher program, to run.
pub(crate) fn matcher() -> Command {
    Command::new(env!("CARGO_BIN_EXE_matcher"))
}

/// The matcher program, running; killed when dropped.
pub(crate) struct Running {
    child: Child,
    /// Where it listens: `http://ADDR`.
    pub(crate) url: String,
}

impl Running {
    /// Starts the matcher for test `name`, listing `servers`.
    pub(crate) fn start(name: &str, servers: &[SocketAddr]) -> Self {
        Self::start_with(name, servers, &[])
    }

    /// Starts the matcher for test `name`, listing `servers`, with `more`
    /// options.
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
        command.args(more);
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        Self { child, url }
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

/// An HTTP answer: status, `WWW-Authenticate`, body.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) authenticate: Option<String>,
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
    let authenticate = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned());
    Answer {
        status: response.status().as_u16(),
        authenticate,
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

/// Runs the matcher with `args` to completion.
pub(crate) fn run(args: &[&str]) -> Output {
    matcher().args(args).output().unwrap()
}

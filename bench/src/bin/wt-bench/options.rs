//! What the commands share besides `netcode_bench::cli`'s options: the
//! `RESULT` line every measuring case prints, the
//! workspace's test key and protocol id turned into server configs and
//! connect tokens, the clients' runtime and the server's CPU option.

use std::fmt::Write as _;
use std::net::SocketAddr;

use netcode_bench::cli::Options;
use netcode_bench::fixtures::{PRIVATE_KEY, PROTOCOL_ID};
use netcode_tokio::proto::Key;
use netcode_tokio::{CONNECT_TOKEN_BYTES, ConnectTokenBuilder, ServerConfig};

/// One measuring case's `RESULT` line: `RESULT key=value ...`, in the
/// order the fields were added.
pub(crate) struct ResultLine(String);

impl ResultLine {
    /// A line for `case` with `clients` clients in round `round`.
    pub(crate) fn new(round: u32, case: &str, clients: usize) -> Self {
        Self(format!(
            "RESULT round={round} case={case} clients={clients}"
        ))
    }

    /// Adds `key=value`.
    pub(crate) fn field(mut self, key: &str, value: impl std::fmt::Display) -> Self {
        let _ = write!(self.0, " {key}={value}");
        self
    }

    /// Adds `key=value` with `decimals` decimals.
    pub(crate) fn float(self, key: &str, value: f64, decimals: usize) -> Self {
        self.field(key, format!("{value:.decimals$}"))
    }

    /// Adds the server's `key=value` fields (`stats`, as it reports them)
    /// as `srv_key=value`.
    pub(crate) fn server_stats(mut self, stats: &str) -> Self {
        for field in stats.split_whitespace() {
            if let Some((key, value)) = field.split_once('=') {
                self = self.field(&format!("srv_{key}"), value);
            }
        }
        self
    }

    /// Prints it on stdout.
    pub(crate) fn print(self) {
        println!("{}", self.0);
    }
}

/// The server's configuration: the reference tests' protocol id and key
/// (`netcode_bench`, as every other bench).
pub(crate) fn server_config() -> ServerConfig {
    ServerConfig::new(PROTOCOL_ID, Key::from_bytes(PRIVATE_KEY))
}

/// A connect token for `client_id` naming the server's UDP address (a
/// WebTransport client presents the same token: the server admits its
/// session as a virtual peer), timing out after 10 s of silence.
pub(crate) fn token(
    client_id: u64,
    server: SocketAddr,
) -> Result<[u8; CONNECT_TOKEN_BYTES], String> {
    ConnectTokenBuilder::new(PROTOCOL_ID, &Key::from_bytes(PRIVATE_KEY), client_id)
        .server_addresses([server])
        .expire_seconds(120)
        .timeout_seconds(10)
        .generate()
        .map_err(|e| format!("token for client {client_id}: {e}"))
}

/// 64 hex digits as 32 bytes.
pub(crate) fn unhex(text: &str) -> Result<[u8; 32], String> {
    let bad = || format!("not a 32-byte hex hash: {text:?}");
    if text.len() != 64 {
        return Err(bad());
    }
    let mut out = [0; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    Ok(out)
}

/// A tokio runtime for the clients: current-thread for `workers` 0, else
/// multi-thread with that many workers.
pub(crate) fn client_runtime(workers: usize) -> Result<tokio::runtime::Runtime, String> {
    let mut builder = if workers == 0 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut builder = tokio::runtime::Builder::new_multi_thread();
        builder.worker_threads(workers);
        builder
    };
    builder
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))
}

/// `--server-cpu N`: the CPU the server process is pinned to (and no
/// other), or any (`none`, the default).
pub(crate) fn server_cpu(options: &mut Options) -> Result<Option<usize>, String> {
    let text: String = options.get("server-cpu", "none".to_string())?;
    match text.as_str() {
        "none" => Ok(None),
        n => n
            .parse()
            .map(Some)
            .map_err(|_| format!("--server-cpu: a CPU number or none, not {n:?}")),
    }
}

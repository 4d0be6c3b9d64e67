//! What the example programs share: the C reference examples' constants
//! (protocol id, test key, token expiry and timeout, address, 60 Hz), their
//! payload (1200 bytes whose byte i is `i % 256`), a tally of what went
//! each way, a frame clock, their command lines (`args`), their log
//! (`logging`), Ctrl-C (`interrupt`), a client's connect token fetched
//! from a `matcher` token service ([`matcher`]), and what a failed
//! connection attempt can mean ([`explain_failed_connection`]).
//!
//! The top-level README's code blocks are compiled as this crate's doc
//! tests (`ReadmeDoctests`): it depends on every crate they use.

mod args;
mod failure;
mod interrupt;
mod logging;
pub mod matcher;
pub mod metrics;

pub use args::{Args, CommandLineError, USAGE_ERROR, no_arguments, run_program, unexpected, value};
pub use failure::explain_failed_connection;
pub use interrupt::{FORCED_EXIT, Interrupt};
pub use logging::DEFAULT_LOG_LEVEL;

/// The top-level README's code blocks, compiled (and the ones that end
/// run) as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use netcode_std::ServerEvent;

/// The protocol id of the reference's examples and tests, and its test
/// private key,
/// `606abe6ec91910ea9a6562f66f2b30e44371d62cd19927266b3c60f4b715aba1`
/// (written once, in `netcode_proto::sim::fixtures`). Anyone can read the
/// key: use it only to talk to the reference's examples.
pub use netcode_proto::sim::fixtures::{PRIVATE_KEY, PROTOCOL_ID};

/// Connect token lifetime of the reference's client: 30 s.
pub const CONNECT_TOKEN_EXPIRY: i64 = 30;

/// Connection timeout of the reference's client: 5 s.
pub const CONNECT_TOKEN_TIMEOUT: i32 = 5;

/// The reference's server address (IPv4).
pub const SERVER_ADDRESS: &str = "127.0.0.1:40000";

/// The reference server's second address (IPv6).
pub const SERVER_ADDRESS6: &str = "[::1]:40000";

/// One frame of the reference's examples: 1/60 s.
pub const FRAME: Duration = Duration::from_nanos(1_000_000_000 / 60);

/// Size of the examples' payload: the largest there is.
pub const PAYLOAD_BYTES: usize = 1200;

/// The payload every example sends: byte i is `i % 256`.
pub fn payload() -> [u8; PAYLOAD_BYTES] {
    core::array::from_fn(|i| (i % 256) as u8)
}

/// Whether `data` is exactly [`payload`].
pub fn is_payload(data: &[u8]) -> bool {
    data.len() == PAYLOAD_BYTES && data.iter().enumerate().all(|(i, b)| *b == (i % 256) as u8)
}

/// What went each way, and whether it was right.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tally {
    /// A connection was made.
    pub connected: bool,
    /// Payloads sent.
    pub sent: u64,
    /// Payloads received that were exactly [`payload`].
    pub received: u64,
    /// Payloads received that were not.
    pub bad: u64,
}

impl Tally {
    /// Counts one received payload.
    pub fn check(&mut self, data: &[u8]) {
        if is_payload(data) {
            self.received += 1;
        } else {
            self.bad += 1;
        }
    }

    /// One line for the end of a run.
    pub fn summary(&self) -> String {
        format!(
            "sent {} payloads, received {} correct and {} wrong",
            self.sent, self.received, self.bad
        )
    }

    /// Success only if a connection was made and at least one correct
    /// payload went each way, and none was wrong.
    pub fn verdict(&self) -> Result<(), String> {
        if !self.connected {
            return Err("no connection was made".into());
        }
        self.content_verdict()?;
        if self.sent == 0 {
            Err("connected, but no payload was sent".into())
        } else if self.received == 0 {
            Err("connected, but no payload was received".into())
        } else {
            Ok(())
        }
    }

    /// [`Tally::verdict`] for a run judged `in_full`, otherwise
    /// [`Tally::content_verdict`] (see [`Args::judged_in_full`]).
    pub fn judge(&self, in_full: bool) -> Result<(), String> {
        if in_full {
            self.verdict()
        } else {
            self.content_verdict()
        }
    }

    /// Success unless a payload was wrong: the verdict of an open-ended
    /// run that was interrupted (a server nobody connected to did nothing
    /// wrong).
    pub fn content_verdict(&self) -> Result<(), String> {
        match self.bad {
            0 => Ok(()),
            bad => Err(format!("{bad} payloads had the wrong content")),
        }
    }
}

/// A fixed-rate frame clock on real time.
#[derive(Debug, Clone, Copy)]
pub struct Frames {
    start: Instant,
    next: Instant,
}

impl Default for Frames {
    fn default() -> Self {
        Self::new()
    }
}

impl Frames {
    /// Starts the clock now.
    pub fn new() -> Self {
        let now = Instant::now();
        Self {
            start: now,
            next: now,
        }
    }

    /// Seconds since the clock started: the time passed to `update`.
    pub fn seconds(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// Sleeps until the next frame (60 Hz).
    pub fn sleep(&mut self) {
        self.next += FRAME;
        let now = Instant::now();
        if self.next > now {
            std::thread::sleep(self.next - now);
        } else {
            self.next = now;
        }
    }
}

/// Prints a server's `server listening on ADDRESS [and ADDRESS2]` line
/// (which the examples' tests read for the port) and flushes it out.
pub fn print_listening(public: SocketAddr, secondary: Option<SocketAddr>) {
    match secondary {
        Some(second) => println!("server listening on {public} and {second}"),
        None => println!("server listening on {public}"),
    }
    let _ = std::io::stdout().flush();
}

/// One line for a server event, as the reference's server prints it:
/// `client 3 connected (id 00000000000000ab, 127.0.0.1:50000)` or
/// `client 3 disconnected (timed out)`.
pub fn describe(event: &ServerEvent) -> String {
    match *event {
        ServerEvent::ClientConnected {
            client_index,
            client_id,
            address,
        } => {
            let from = address.map_or("loopback".into(), |a| a.to_string());
            format!("client {client_index} connected (id {client_id:016x}, {from})")
        }
        ServerEvent::ClientDisconnected {
            client_index,
            reason,
            ..
        } => format!("client {client_index} disconnected ({reason})"),
    }
}

/// The exit code of a run: success, or `error: reason` on one line of
/// standard error and a failure code.
pub fn finish(result: Result<(), String>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(reason) => {
            eprintln!("error: {reason}");
            ExitCode::FAILURE
        }
    }
}

/// Lowercase hex of `bytes`.
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes of a hex string (either case, even length).
pub fn from_hex(text: &str) -> Result<Vec<u8>, String> {
    if !text.len().is_multiple_of(2) {
        return Err("hex text has an odd length".into());
    }
    (0..text.len())
        .step_by(2)
        .map(|i| {
            text.get(i..i + 2)
                .and_then(|pair| u8::from_str_radix(pair, 16).ok())
                .ok_or_else(|| format!("not hex at offset {i}"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_and_hex() {
        assert!(is_payload(&payload()));
        let mut wrong = payload();
        wrong[700] ^= 1;
        assert!(!is_payload(&wrong));
        assert!(!is_payload(&payload()[..1199]));
        assert_eq!(from_hex(&to_hex(&[0, 0xab, 255])).unwrap(), [0, 0xab, 255]);
        assert!(from_hex("abc").is_err());
        assert!(from_hex("zz").is_err());
    }

    #[test]
    fn verdicts() {
        let mut tally = Tally::default();
        assert!(tally.verdict().is_err());
        tally.connected = true;
        tally.sent = 1;
        assert!(tally.verdict().is_err());
        tally.check(&payload());
        assert!(tally.verdict().is_ok());
        tally.check(b"nope");
        assert!(tally.verdict().is_err());
    }
}

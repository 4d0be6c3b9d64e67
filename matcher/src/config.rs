//! What the matcher is told at start: its command-line options (among
//! them the servers that also take browsers, and the limits that keep it
//! up under abuse), and the secret and key files they name, read into a
//! [`Matcher`].

use std::fs;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser};
use netcode_std::Key;

use crate::fleet::{FleetOptions, FleetSource};
use crate::issue::Matcher;
use crate::webtransport::WebTransportSpec;

/// A token service for a fleet of netcode dedicated servers: answers
/// `POST /token` from callers holding the shared bearer secret with a
/// connect token (base64, in JSON) listing the configured servers.
#[derive(Debug, Parser)]
#[command(name = "matcher", version)]
pub struct Options {
    /// Address to listen on for HTTP (port 0: any free port; the address
    /// bound is printed on the first line of output).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,

    /// File holding the bearer secret callers must present
    /// (`Authorization: Bearer <secret>`); surrounding whitespace is
    /// ignored.
    #[arg(long, value_name = "PATH")]
    pub secret_file: PathBuf,

    /// File holding the netcode private key shared with the dedicated
    /// servers, as 64 hex digits.
    #[arg(long, value_name = "PATH")]
    pub key_file: PathBuf,

    /// A dedicated server's public address, as its connect tokens must list
    /// it (repeat for each server; tokens list up to 32, starting at a
    /// different server for each request).
    /// Not needed when game servers are allocated from an Agones fleet
    /// (`--allocator-url`), which then serves the native clients' requests.
    #[arg(
        long = "server",
        value_name = "ADDR",
        required_unless_present = "allocator_url"
    )]
    pub servers: Vec<SocketAddr>,

    /// A server that also takes browsers over WebTransport (repeat for
    /// each): `UDP_ADDR=URL`, where UDP_ADDR is one of the --server
    /// addresses and URL the https:// URL of its WebTransport endpoint,
    /// then, for a self-signed certificate, `#hash-file=PATH` (a file
    /// holding its SHA-256 hash as 64 hex digits, read at each request so
    /// that rotations are followed) or `#hash=HEX64` (a fixed hash); with
    /// neither, a certificate browsers trust. Example:
    /// 127.0.0.1:40000=https://127.0.0.1:40001/netcode#hash-file=/run/netcode/hash
    #[arg(long = "webtransport", value_name = "SPEC", value_parser = WebTransportSpec::parse)]
    pub webtransport: Vec<WebTransportSpec>,

    /// A protocol id the fleet serves, decimal or 0x-prefixed hex (repeat
    /// for several); requests for others get 404.
    #[arg(long = "protocol-id", value_name = "ID", required = true, value_parser = parse_id)]
    pub protocol_ids: Vec<u64>,

    /// Seconds a token stays valid.
    #[arg(long, default_value_t = 30)]
    pub expire: u32,

    /// Seconds of silence after which client and server give up on each
    /// other.
    #[arg(long, default_value_t = 5)]
    pub timeout: u16,

    /// Address to serve Prometheus metrics on (`GET /metrics`), apart from
    /// the token listener; off unless given (port 0: any free port; the
    /// address bound is printed on the second line of output, as
    /// `metrics on http://ADDR/metrics`).
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<SocketAddr>,

    /// The limits that keep the service up when abused.
    #[command(flatten)]
    pub limits: LimitOptions,

    /// Game servers allocated from an Agones fleet, one per token, instead
    /// of the static `--server` list.
    #[command(flatten)]
    pub fleet: FleetOptions,
}

/// The limits on what callers may hold and ask for: connections, the time
/// each part of a request may take, and requests per second (durations in
/// seconds, fractions allowed).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Limits")]
pub struct LimitOptions {
    /// Most connections open at once (default: 4096, or fewer when the
    /// file-descriptor limit, raised to its hard limit at start, leaves
    /// less room). When full, a new connection takes the place of the
    /// oldest one not in the middle of a request (idle, or still sending
    /// its header); if every connection is mid-request it is closed at
    /// once.
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,

    /// Seconds a connection has, from its opening or the end of its
    /// previous answer, to send a request's whole header; slower ones are
    /// closed.
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = parse_seconds)]
    pub header_read_timeout: Duration,

    /// Seconds a connection may stay silent, from its opening or the end of
    /// its previous answer, before it is closed (keep-alive).
    #[arg(long, value_name = "SECS", default_value = "5", value_parser = parse_seconds)]
    pub idle_timeout: Duration,

    /// Seconds a request has, once its header is in, to send its body and
    /// be answered; past that it gets 408.
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = parse_seconds)]
    pub request_timeout: Duration,

    /// Requests per second one source address may make, sustained (IPv6
    /// addresses counted by their /64); beyond it, 429 with Retry-After.
    /// 0 turns this limit off.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub rate_per_source: u32,

    /// Requests one source address may make at once after a quiet spell
    /// (default: twice --rate-per-source).
    #[arg(long, value_name = "N")]
    pub burst_per_source: Option<u32>,

    /// Token requests per second callers presenting the bearer secret may
    /// make together, sustained; beyond it, 429 with Retry-After. 0 turns
    /// this limit off.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub rate_per_secret: u32,

    /// Token requests callers presenting the bearer secret may make at once
    /// after a quiet spell (default: twice --rate-per-secret).
    #[arg(long, value_name = "N")]
    pub burst_per_secret: Option<u32>,

    /// Seconds between two reports on stderr of the same limit biting: the
    /// first time it bites is reported at once, the times after are
    /// counted and reported together.
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = parse_seconds)]
    pub limit_log_interval: Duration,
}

/// A positive duration written in seconds, fractions allowed (`2`, `0.5`).
pub fn parse_seconds(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|e| format!("{text:?} is not a number of seconds: {e}"))?;
    if !(seconds > 0.0 && seconds <= 86_400.0) {
        return Err(format!(
            "{text:?}: expected more than 0 and at most 86400 seconds"
        ));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// An id written in decimal or as 0x-prefixed hex.
pub fn parse_id(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.map_err(|e| format!("{text:?} is not a 64-bit id in decimal or 0x hex: {e}"))
}

impl Options {
    /// Reads the secret and key files and checks the rest: a [`Matcher`]
    /// ready to issue tokens, or what is wrong, in words.
    pub fn load(&self) -> Result<Matcher, String> {
        let read = |path: &PathBuf| {
            fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
        };
        let secret = read(&self.secret_file)?.trim().to_owned();
        if secret.is_empty() {
            return Err(format!("{} holds no secret", self.secret_file.display()));
        }
        let key: Key = read(&self.key_file)?
            .trim()
            .parse()
            .map_err(|e| format!("{}: {e}", self.key_file.display()))?;
        let fleet = FleetSource::from_options(&self.fleet)?;
        Ok(Matcher::new(
            secret,
            key,
            self.servers.clone(),
            self.protocol_ids.clone(),
            self.expire,
            self.timeout,
        )
        .with_webtransport(self.webtransport.clone())?
        .with_fleet(fleet))
    }
}

/// The options of a command line holding the required arguments (a
/// secret and a key file, one server, protocol id 1) and then `more`.
#[cfg(test)]
pub(crate) fn options_with(more: &[&str]) -> Result<Options, clap::Error> {
    const REQUIRED: [&str; 9] = [
        "matcher",
        "--secret-file",
        "s",
        "--key-file",
        "k",
        "--server",
        "127.0.0.1:40000",
        "--protocol-id",
        "1",
    ];
    Options::try_parse_from(REQUIRED.iter().chain(more))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        // Names used twice across the flattened groups, and the like.
        Options::command().debug_assert();
    }

    #[test]
    fn ids_are_decimal_or_hex_and_nothing_else() {
        assert_eq!(parse_id("42"), Ok(42));
        assert_eq!(parse_id("0x1122334455667788"), Ok(0x1122_3344_5566_7788));
        assert_eq!(parse_id("0XFF"), Ok(255));
        assert_eq!(parse_id("18446744073709551615"), Ok(u64::MAX));
        for bad in ["", "-1", "0x", "18446744073709551616", "12a", "0x1g", "1.5"] {
            assert!(parse_id(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn seconds_are_positive_and_may_be_fractions() {
        assert_eq!(parse_seconds("2"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_seconds(" 0.25 "), Ok(Duration::from_millis(250)));
        for bad in ["", "0", "-1", "x", "NaN", "inf", "86401"] {
            assert!(parse_seconds(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_limits_parse_and_are_in_the_help() {
        let options = options_with(&[
            "--max-connections",
            "100",
            "--header-read-timeout",
            "1.5",
            "--idle-timeout",
            "0.5",
            "--request-timeout",
            "3",
            "--rate-per-source",
            "0",
            "--burst-per-secret",
            "7",
            "--metrics",
            "127.0.0.1:0",
        ])
        .unwrap();
        let limits = &options.limits;
        assert_eq!(limits.max_connections, Some(100));
        assert_eq!(limits.header_read_timeout, Duration::from_millis(1500));
        assert_eq!(limits.idle_timeout, Duration::from_millis(500));
        assert_eq!(limits.request_timeout, Duration::from_secs(3));
        assert_eq!(
            (limits.rate_per_source, limits.burst_per_secret),
            (0, Some(7))
        );
        assert_eq!(options.metrics, Some("127.0.0.1:0".parse().unwrap()));
        let help = Options::try_parse_from(["matcher", "--help"])
            .unwrap_err()
            .to_string();
        for option in [
            "--max-connections",
            "--header-read-timeout",
            "--idle-timeout",
            "--request-timeout",
            "--rate-per-source",
            "--burst-per-source",
            "--rate-per-secret",
            "--burst-per-secret",
            "--limit-log-interval",
            "--metrics",
            "[default: 10]",
        ] {
            assert!(help.contains(option), "--help mentions {option}");
        }
    }

    #[test]
    fn the_options_parse_and_help_is_there() {
        let options = Options::try_parse_from([
            "matcher",
            "--secret-file",
            "s",
            "--key-file",
            "k",
            "--server",
            "127.0.0.1:40000",
            "--server",
            "[::1]:40000",
            "--protocol-id",
            "0x10",
            "--webtransport",
            "[::1]:40000=https://[::1]:40001/netcode#hash-file=/run/hash",
            "--webtransport",
            "127.0.0.1:40000=https://localhost:40001/netcode",
        ])
        .unwrap();
        assert_eq!(options.servers.len(), 2);
        let ports: Vec<u16> = options
            .webtransport
            .iter()
            .map(|s| s.server.port())
            .collect();
        assert_eq!(ports, [40000, 40000]);
        assert_eq!(options.protocol_ids, [16]);
        assert_eq!((options.expire, options.timeout), (30, 5));
        let limits = &options.limits;
        assert_eq!(limits.max_connections, None);
        assert_eq!(
            (
                limits.header_read_timeout,
                limits.idle_timeout,
                limits.request_timeout
            ),
            (
                Duration::from_secs(10),
                Duration::from_secs(5),
                Duration::from_secs(10)
            )
        );
        assert_eq!((limits.rate_per_source, limits.rate_per_secret), (20, 1000));
        assert_eq!(
            (limits.burst_per_source, limits.burst_per_secret),
            (None, None)
        );
        assert_eq!(options.metrics, None);
        let bad =
            options_with(&["--webtransport", "127.0.0.1:40000=http://a/netcode"]).unwrap_err();
        assert_eq!(bad.kind(), clap::error::ErrorKind::ValueValidation);
        assert!(bad.to_string().contains("https://"), "{bad}");
        let help = Options::try_parse_from(["matcher", "--help"]).unwrap_err();
        assert_eq!(help.kind(), clap::error::ErrorKind::DisplayHelp);
        let missing = Options::try_parse_from(["matcher", "--secret-file", "s"]).unwrap_err();
        assert_eq!(
            missing.kind(),
            clap::error::ErrorKind::MissingRequiredArgument
        );
    }
}

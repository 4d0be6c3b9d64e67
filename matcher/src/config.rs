//! What the matcher is told at start: its command-line options (among
//! them the servers that also take browsers, the limits that keep it up
//! under abuse, and the Agones fleet to allocate from), and the secret and
//! key files they name, read into a [`Matcher`]; the [`FleetSource`] its
//! fleet options describe.

use std::fs;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use clap::Parser;
use netcode_std::{Key, KeyError};

use crate::fleet::{FleetConfigError, FleetOptions, FleetSource};
use crate::issue::{BrowserServersError, Matcher};
use crate::limits::LimitOptions;
use crate::parse::parse_id;
use crate::webtransport::{WebSocketSpec, WebTransportSpec};

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

    /// The WebSocket fallback of a --webtransport server (repeat for
    /// each): `UDP_ADDR=URL`, URL `wss://` (or `ws://` for local tries).
    /// A browser's answer then carries it beside the WebTransport URL, for
    /// browsers and networks WebTransport cannot reach. Example:
    /// 127.0.0.1:40000=ws://127.0.0.1:40002/netcode
    #[arg(long = "websocket", value_name = "SPEC", value_parser = WebSocketSpec::parse)]
    pub websocket: Vec<WebSocketSpec>,

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

/// Why the matcher cannot start with the options it was given.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The secret or key file cannot be read.
    #[error("cannot read {}: {error}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        error: io::Error,
    },
    /// The secret file holds only whitespace.
    #[error("{} holds no secret", .0.display())]
    NoSecret(PathBuf),
    /// The key file does not hold a key as 64 hex digits.
    #[error("{}: {error}", .path.display())]
    Key {
        /// The file.
        path: PathBuf,
        /// What is wrong with its text.
        error: KeyError,
    },
    /// The servers given to take browsers do not fit the fleet.
    #[error(transparent)]
    BrowserServers(#[from] BrowserServersError),
}

/// The text of the file at `path`.
fn read(path: &Path) -> Result<String, ConfigError> {
    fs::read_to_string(path).map_err(|error| ConfigError::Read {
        path: path.to_owned(),
        error,
    })
}

impl Options {
    /// Reads the secret and key files and checks the rest: a [`Matcher`]
    /// ready to issue tokens, or what is wrong.
    pub fn load(&self) -> Result<Matcher, ConfigError> {
        let secret = read(&self.secret_file)?.trim().to_owned();
        if secret.is_empty() {
            return Err(ConfigError::NoSecret(self.secret_file.clone()));
        }
        let key: Key = read(&self.key_file)?
            .trim()
            .parse()
            .map_err(|error| ConfigError::Key {
                path: self.key_file.clone(),
                error,
            })?;
        Ok(Matcher::new(
            secret,
            key,
            self.servers.clone(),
            self.protocol_ids.clone(),
            self.expire,
            self.timeout,
        )
        .with_webtransport(self.webtransport.clone())?
        .with_websockets(self.websocket.clone())?)
    }

    /// The Agones fleet native clients' servers are allocated from, if
    /// `--allocator-url` is given (reading its certificate files).
    pub fn fleet_source(&self) -> Result<Option<FleetSource>, FleetConfigError> {
        FleetSource::from_options(&self.fleet)
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
    use std::time::Duration;

    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        // Names used twice across the flattened groups, and the like.
        Options::command().debug_assert();
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

//! The server's command line: what `--help` prints, and its parsing into
//! [`Args`], with a message naming the option for every mistake.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use lexopt::prelude::*;
use netcode_agones::netcode_std::MAX_CLIENTS;

/// What `--help` prints.
pub(crate) const USAGE: &str = "\
netcode-agones-server: a dedicated netcode server on Agones (an echo server:
every payload goes back to its sender)

usage: netcode-agones-server --bind ADDRESS --key-file FILE --protocol-id ID [options]

required:
  --bind ADDRESS         where the UDP socket binds: the container port,
                         e.g. 0.0.0.0:7000; the server calls itself by the
                         address Agones reports (status.address and the
                         port named by --port-name), which tokens list
  --key-file FILE        the netcode private key: 64 hex digits (the file
                         the token service's --key-file reads)
  --protocol-id ID       the protocol id, decimal or 0x hex

options:
  --port-name NAME       the GameServer port clients use (default netcode)
  --address-type TYPE    call the server by the node address of this type
                         in status.addresses (ExternalIP, InternalIP,
                         ExternalDNS, InternalDNS, Hostname, ...) rather
                         than status.address (Agones: ExternalDNS, else
                         ExternalIP, else InternalDNS, else InternalIP); a
                         DNS name is resolved. The matcher must use the
                         same: both read NETCODE_ADDRESS_TYPE when the
                         option is not given
  --max-clients N        slots, 1 to 4096 (default 64)
  --webtransport ADDRESS take browsers too: a WebTransport endpoint bound
                         at ADDRESS (the container's UDP port for it, e.g.
                         0.0.0.0:7001), reached at the GameServer port
                         named by --webtransport-port-name; its URL and
                         certificate hash are published as the annotations
                         netcode-webtransport-url and netcode-cert-sha256
                         (the hash again whenever the certificate is
                         replaced, every 7 days) and the label
                         netcode-webtransport=true
  --webtransport-port-name NAME
                         the GameServer port browsers use (default
                         webtransport)
  --shutdown-when-empty  after allocation, call Shutdown and exit once the
                         last player has left
  --match-seconds N      call Shutdown and exit N seconds after allocation
  --sdk-timeout SECONDS  how long to wait for the Agones sidecar at start
                         (and for the status to name the address); then
                         exit 1 (default 30)
  --health-period SECONDS
                         how often the game loop pings Agones (default 1)
  --players-list NAME    the GameServer list that holds the connected
                         players' client ids (default players; an empty
                         NAME tracks no players)
  --annotation KEY=VALUE an annotation to publish besides the netcode ones
                         (repeatable); Agones stores it as
                         agones.dev/sdk-KEY
  --metrics ADDRESS      serve Prometheus metrics at http://ADDRESS/metrics
  -h, --help             print this help

The SDK's port is AGONES_SDK_GRPC_PORT (default 9357). RUST_LOG sets the
log level (error, warn, info (default), debug, trace) or filters
(RUST_LOG=netcode_agones=debug).

SIGTERM, SIGINT or SIGHUP: every client gets disconnect packets, Shutdown
is called if the sidecar answers, and the server exits 0 (a second signal
exits at once, 130). When the match ends by rule, it exits 0 once Shutdown
is acknowledged, 1 if it never is. Exit 1 on a failed start, 2 on a bad
command line.
";

/// The parsed command line.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Args {
    pub(crate) bind: SocketAddr,
    pub(crate) key_file: PathBuf,
    pub(crate) protocol_id: u64,
    pub(crate) port_name: String,
    pub(crate) address_type: Option<String>,
    pub(crate) webtransport: Option<SocketAddr>,
    pub(crate) webtransport_port_name: String,
    pub(crate) max_clients: usize,
    pub(crate) shutdown_when_empty: bool,
    pub(crate) match_time: Option<Duration>,
    pub(crate) sdk_timeout: Duration,
    pub(crate) health_period: Duration,
    pub(crate) players_list: Option<String>,
    pub(crate) annotations: Vec<(String, String)>,
    pub(crate) metrics: Option<SocketAddr>,
}

/// Parses `args` (without the program name): `Ok(None)` for `--help`.
pub(crate) fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Option<Args>, String> {
    let mut parser = lexopt::Parser::from_args(args);
    let (mut bind, mut key_file, mut protocol_id) = (None, None, None);
    let mut parsed = Args {
        bind: SocketAddr::from(([0, 0, 0, 0], 0)),
        key_file: PathBuf::new(),
        protocol_id: 0,
        port_name: "netcode".into(),
        address_type: None,
        webtransport: None,
        webtransport_port_name: "webtransport".into(),
        max_clients: 64,
        shutdown_when_empty: false,
        match_time: None,
        sdk_timeout: Duration::from_secs(30),
        health_period: Duration::from_secs(1),
        players_list: Some("players".into()),
        annotations: Vec::new(),
        metrics: None,
    };
    while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
        let name = match arg {
            Long(name) => format!("--{name}"),
            Short(c) => format!("-{c}"),
            Value(value) => return Err(format!("unexpected argument {value:?}")),
        };
        let mut value = || value_of(&mut parser, &name);
        match name.as_str() {
            "-h" | "--help" => return Ok(None),
            "--bind" => bind = Some(address(&name, &value()?)?),
            "--key-file" => key_file = Some(PathBuf::from(value()?)),
            "--protocol-id" => {
                protocol_id = Some(parse_id(&value()?).map_err(|e| format!("{name}: {e}"))?);
            }
            "--port-name" => {
                parsed.port_name = value()?;
                if parsed.port_name.is_empty() {
                    return Err(format!("{name}: the name is empty"));
                }
            }
            "--address-type" => {
                let kind = value()?;
                if kind.trim().is_empty() {
                    return Err(format!("{name}: the type is empty"));
                }
                parsed.address_type = Some(kind);
            }
            "--webtransport" => parsed.webtransport = Some(address(&name, &value()?)?),
            "--webtransport-port-name" => {
                parsed.webtransport_port_name = value()?;
                if parsed.webtransport_port_name.is_empty() {
                    return Err(format!("{name}: the name is empty"));
                }
            }
            "--max-clients" => {
                let text = value()?;
                parsed.max_clients = text
                    .parse()
                    .ok()
                    .filter(|n| (1..=MAX_CLIENTS).contains(n))
                    .ok_or_else(|| {
                        format!("{name}: {text:?} is not a slot count from 1 to {MAX_CLIENTS}")
                    })?;
            }
            "--shutdown-when-empty" => parsed.shutdown_when_empty = true,
            "--match-seconds" => parsed.match_time = Some(seconds(&name, &value()?)?),
            "--sdk-timeout" => parsed.sdk_timeout = seconds(&name, &value()?)?,
            "--health-period" => parsed.health_period = seconds(&name, &value()?)?,
            "--players-list" => {
                let list = value()?;
                parsed.players_list = (!list.is_empty()).then_some(list);
            }
            "--annotation" => {
                let text = value()?;
                let (key, annotation) = text
                    .split_once('=')
                    .ok_or_else(|| format!("{name}: {text:?} is not KEY=VALUE"))?;
                netcode_agones::check_key(key).map_err(|e| format!("{name}: key {e}"))?;
                parsed
                    .annotations
                    .push((key.to_owned(), annotation.to_owned()));
            }
            "--metrics" => parsed.metrics = Some(address(&name, &value()?)?),
            _ => return Err(format!("unknown option {name}")),
        }
    }
    let missing = |option: &str| format!("{option} is required");
    parsed.bind = bind.ok_or_else(|| missing("--bind"))?;
    parsed.key_file = key_file.ok_or_else(|| missing("--key-file"))?;
    parsed.protocol_id = protocol_id.ok_or_else(|| missing("--protocol-id"))?;
    Ok(Some(parsed))
}

/// The value of the option `name`, as UTF-8.
fn value_of(parser: &mut lexopt::Parser, name: &str) -> Result<String, String> {
    parser
        .value()
        .map_err(|e| format!("{name}: {e}"))?
        .into_string()
        .map_err(|v| format!("{name}: {v:?} is not UTF-8"))
}

/// A socket address, `IP:PORT`.
fn address(option: &str, text: &str) -> Result<SocketAddr, String> {
    text.parse()
        .map_err(|_| format!("{option}: {text:?} is not an IP:PORT address"))
}

/// A positive number of seconds, decimals allowed.
fn seconds(option: &str, text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .filter(|s| *s > 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| format!("{option}: {text:?} is not a positive number of seconds"))
}

/// A 64-bit id in decimal or `0x` hex.
fn parse_id(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.map_err(|e| format!("{text:?} is not a 64-bit id in decimal or 0x hex: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_strs(args: &[&str]) -> Result<Option<Args>, String> {
        parse(args.iter().map(OsString::from))
    }

    const REQUIRED: [&str; 6] = [
        "--bind",
        "0.0.0.0:7000",
        "--key-file",
        "/etc/netcode/key",
        "--protocol-id",
        "0x1122334455667788",
    ];

    #[test]
    fn the_deployment_command_line() {
        let mut args = REQUIRED.to_vec();
        args.extend([
            "--port-name",
            "game",
            "--address-type",
            "InternalIP",
            "--webtransport",
            "0.0.0.0:7001",
            "--webtransport-port-name",
            "browsers",
            "--max-clients",
            "16",
            "--shutdown-when-empty",
            "--match-seconds",
            "600",
            "--sdk-timeout",
            "2.5",
            "--annotation",
            "netcode-cert-sha256=ab:cd",
            "--players-list",
            "",
            "--metrics",
            "0.0.0.0:9100",
        ]);
        let parsed = parse_strs(&args).unwrap().unwrap();
        assert_eq!(parsed.bind, "0.0.0.0:7000".parse().unwrap());
        assert_eq!(parsed.key_file, PathBuf::from("/etc/netcode/key"));
        assert_eq!(parsed.protocol_id, 0x1122_3344_5566_7788);
        assert_eq!(parsed.port_name, "game");
        assert_eq!(parsed.address_type.as_deref(), Some("InternalIP"));
        assert_eq!(parsed.webtransport, Some("0.0.0.0:7001".parse().unwrap()));
        assert_eq!(parsed.webtransport_port_name, "browsers");
        assert_eq!(parsed.max_clients, 16);
        assert!(parsed.shutdown_when_empty);
        assert_eq!(parsed.match_time, Some(Duration::from_secs(600)));
        assert_eq!(parsed.sdk_timeout, Duration::from_millis(2500));
        assert_eq!(
            parsed.annotations,
            [("netcode-cert-sha256".to_owned(), "ab:cd".to_owned())]
        );
        assert_eq!(parsed.players_list, None);
        assert_eq!(parsed.metrics, Some("0.0.0.0:9100".parse().unwrap()));
    }

    #[test]
    fn defaults_and_help() {
        let parsed = parse_strs(&REQUIRED).unwrap().unwrap();
        assert_eq!(parsed.port_name, "netcode");
        assert_eq!(parsed.max_clients, 64);
        assert!(!parsed.shutdown_when_empty);
        assert_eq!(parsed.match_time, None);
        assert_eq!(parsed.sdk_timeout, Duration::from_secs(30));
        assert_eq!(parsed.players_list.as_deref(), Some("players"));
        assert_eq!(parse_strs(&["--help"]).unwrap(), None);
        assert_eq!(parse_id("12345").unwrap(), 12345);
    }

    #[test]
    fn mistakes_name_their_option() {
        let cases: &[(&[&str], &str)] = &[
            (
                &["--key-file", "k", "--protocol-id", "1"],
                "--bind is required",
            ),
            (
                &["--bind", "x", "--key-file", "k", "--protocol-id", "1"],
                "--bind",
            ),
            (
                &[
                    "--bind",
                    "0.0.0.0:1",
                    "--key-file",
                    "k",
                    "--protocol-id",
                    "0xzz",
                ],
                "--protocol-id",
            ),
            (&["--max-clients", "0"], "--max-clients"),
            (&["--max-clients", "5000"], "--max-clients"),
            (&["--match-seconds", "-1"], "--match-seconds"),
            (&["--sdk-timeout", "0"], "--sdk-timeout"),
            (&["--annotation", "novalue"], "--annotation"),
            (&["--annotation", "bad key=1"], "--annotation"),
            (&["--port-name", ""], "--port-name"),
            (&["--frobnicate"], "frobnicate"),
            (&["stray"], "stray"),
        ];
        for (args, needle) in cases {
            let error = parse_strs(args).unwrap_err();
            assert!(error.contains(needle), "{args:?}: {error}");
        }
    }
}

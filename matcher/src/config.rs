//! What the matcher is told at start: its command-line options (among
//! them the servers that also take browsers), and the secret and key files
//! they name, read into a [`Matcher`].

use std::fs;
use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Parser;
use netcode_std::Key;

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
    #[arg(long = "server", value_name = "ADDR", required = true)]
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
        Matcher::new(
            secret,
            key,
            self.servers.clone(),
            self.protocol_ids.clone(),
            self.expire,
            self.timeout,
        )
        .with_webtransport(self.webtransport.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let bad = Options::try_parse_from([
            "matcher",
            "--secret-file",
            "s",
            "--key-file",
            "k",
            "--server",
            "127.0.0.1:40000",
            "--protocol-id",
            "1",
            "--webtransport",
            "127.0.0.1:40000=http://a/netcode",
        ])
        .unwrap_err();
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

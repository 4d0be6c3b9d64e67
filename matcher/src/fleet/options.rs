//! The command-line options of the fleet source (`--allocator-*`), their
//! value parsers and why those refuse a value, and the list of options
//! given out of place.

use std::path::PathBuf;
use std::time::Duration;

use reqwest::Url;

use crate::parse::parse_seconds;

/// Where game servers come from when the matcher allocates them from an
/// Agones fleet, one per token, instead of listing a static set: the
/// allocator service's URL, what to ask it for, and the certificates of
/// the mutual TLS it requires. Without `--allocator-url` the fleet source
/// is off and the other options must not be given (those with defaults
/// aside).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Agones fleet (allocator service)")]
pub struct FleetOptions {
    /// The Agones allocator service to allocate a `Ready` game server from
    /// for each token: https:// (mutual TLS, as Agones runs it; needs
    /// --allocator-ca, --allocator-client-cert and --allocator-client-key)
    /// or http:// (an allocator run with TLS off, for tests only). Example:
    /// `https://agones-allocator.agones-system.svc:443`
    #[arg(id = "allocator_url", long = "allocator-url", value_name = "URL", value_parser = parse_url)]
    pub allocator_url: Option<Url>,

    /// The namespace the fleet's game servers run in.
    #[arg(
        id = "allocator_namespace",
        long = "allocator-namespace",
        value_name = "NS",
        default_value = "default"
    )]
    pub namespace: String,

    /// A label the allocated game server must carry, as KEY=VALUE (repeat
    /// for several; all must match). Example: agones.dev/fleet=netcode
    #[arg(id = "allocator_selector", long = "allocator-selector", value_name = "KEY=VALUE", value_parser = parse_label)]
    pub selectors: Vec<(String, String)>,

    /// The name of the game server port (in the Fleet's `ports`) that
    /// netcode clients connect to.
    #[arg(
        id = "allocator_port_name",
        long = "allocator-port-name",
        value_name = "NAME",
        default_value = "netcode"
    )]
    pub port_name: String,

    /// Which of the allocated server's `addresses` the token names, by
    /// type (ExternalIP, InternalIP, ExternalDNS, InternalDNS, Hostname,
    /// ...; case-insensitive). Without it, the answer's `address` (Agones:
    /// the node's ExternalDNS, else ExternalIP, else InternalDNS, else
    /// InternalIP). netcode-agones-server must call itself by the same
    /// (its `--address-type`; both read NETCODE_ADDRESS_TYPE): a server
    /// accepts only tokens naming the address it announces. A DNS name is
    /// resolved, and its lowest IPv4 address (else IPv6) taken, as the
    /// server does.
    #[arg(
        id = "allocator_address_type",
        long = "allocator-address-type",
        value_name = "TYPE",
        env = "NETCODE_ADDRESS_TYPE"
    )]
    pub address_type: Option<String>,

    /// PEM file of the client certificate (and any intermediates) the
    /// matcher presents to the allocator; it must be signed by a CA in the
    /// allocator's `allocator-client-ca` secret.
    #[arg(
        id = "allocator_client_cert",
        long = "allocator-client-cert",
        value_name = "PATH"
    )]
    pub client_cert: Option<PathBuf>,

    /// PEM file of that certificate's private key (PKCS#8, PKCS#1 or
    /// SEC1).
    #[arg(
        id = "allocator_client_key",
        long = "allocator-client-key",
        value_name = "PATH"
    )]
    pub client_key: Option<PathBuf>,

    /// PEM file of the CA certificate(s) the allocator's server
    /// certificate must chain to (Agones: the `allocator-tls-ca` secret);
    /// no other roots are trusted.
    #[arg(id = "allocator_ca", long = "allocator-ca", value_name = "PATH")]
    pub ca: Option<PathBuf>,

    /// Seconds an allocation may take, connection and TLS handshake
    /// included, before the request fails with 503 (decimals allowed).
    #[arg(id = "allocator_timeout", long = "allocator-timeout", value_name = "SECONDS", default_value = "5", value_parser = parse_seconds)]
    pub timeout: Duration,
}

impl FleetOptions {
    /// Options for the allocator at `url` with the defaults of the command
    /// line (namespace `default`, port name `netcode`, 5 s, no selectors,
    /// no certificates): a start for programs and tests that set the rest
    /// field by field.
    pub fn new(url: Url) -> Self {
        Self {
            allocator_url: Some(url),
            namespace: "default".into(),
            selectors: Vec::new(),
            port_name: "netcode".into(),
            address_type: None,
            client_cert: None,
            client_key: None,
            ca: None,
            timeout: Duration::from_secs(5),
        }
    }

    /// The options that make no sense without `--allocator-url`, by flag,
    /// when given.
    pub(crate) fn given_without_url(&self) -> Vec<&'static str> {
        [
            ("--allocator-selector", !self.selectors.is_empty()),
            ("--allocator-address-type", self.address_type.is_some()),
            ("--allocator-client-cert", self.client_cert.is_some()),
            ("--allocator-client-key", self.client_key.is_some()),
            ("--allocator-ca", self.ca.is_some()),
        ]
        .into_iter()
        .filter_map(|(flag, given)| given.then_some(flag))
        .collect()
    }
}

/// Why text is not an allocator URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// Not a URL at all.
    #[error("{text:?} is not a URL: {why}")]
    NotAUrl {
        /// The text.
        text: String,
        /// Why it does not parse, as the URL parser says.
        why: String,
    },
    /// Neither http:// nor https://.
    #[error("{0:?}: the allocator is reached over https:// (or http:// with TLS off)")]
    Scheme(String),
    /// No host.
    #[error("{0:?} names no host")]
    NoHost(String),
    /// A query or a fragment.
    #[error("{0:?}: no query or fragment, please")]
    QueryOrFragment(String),
}

/// Why text is not a `KEY=VALUE` label.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LabelError {
    /// No `=`.
    #[error("{0:?} is not KEY=VALUE")]
    NotKeyValue(String),
    /// Nothing before the `=`.
    #[error("{0:?} has an empty key")]
    EmptyKey(String),
}

/// An http:// or https:// URL with a host, and no query or fragment.
pub fn parse_url(text: &str) -> Result<Url, UrlError> {
    let url = Url::parse(text.trim()).map_err(|e| UrlError::NotAUrl {
        text: text.to_owned(),
        why: e.to_string(),
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(UrlError::Scheme(text.to_owned()));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(UrlError::NoHost(text.to_owned()));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(UrlError::QueryOrFragment(text.to_owned()));
    }
    Ok(url)
}

/// `KEY=VALUE`, a non-empty key (surrounding whitespace ignored).
pub fn parse_label(text: &str) -> Result<(String, String), LabelError> {
    let (key, value) = text
        .split_once('=')
        .ok_or_else(|| LabelError::NotKeyValue(text.to_owned()))?;
    let (key, value) = (key.trim(), value.trim());
    if key.is_empty() {
        return Err(LabelError::EmptyKey(text.to_owned()));
    }
    Ok((key.to_owned(), value.to_owned()))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Command {
        #[command(flatten)]
        fleet: FleetOptions,
    }

    #[test]
    fn defaults_leave_the_fleet_off() {
        let options = Command::try_parse_from(["matcher"]).unwrap().fleet;
        assert!(options.allocator_url.is_none());
        assert_eq!(options.namespace, "default");
        assert_eq!(options.port_name, "netcode");
        assert_eq!(options.timeout, Duration::from_secs(5));
        assert!(options.given_without_url().is_empty());
    }

    #[test]
    fn every_option_parses() {
        let options = Command::try_parse_from([
            "matcher",
            "--allocator-url",
            "https://agones-allocator.agones-system.svc:443",
            "--allocator-namespace",
            "games",
            "--allocator-selector",
            "agones.dev/fleet=netcode",
            "--allocator-selector",
            "region = eu",
            "--allocator-port-name",
            "udp",
            "--allocator-address-type",
            "ExternalIP",
            "--allocator-client-cert",
            "c.pem",
            "--allocator-client-key",
            "k.pem",
            "--allocator-ca",
            "ca.pem",
            "--allocator-timeout",
            "0.25",
        ])
        .unwrap()
        .fleet;
        let url = options.allocator_url.as_ref().unwrap();
        assert_eq!(url.host_str(), Some("agones-allocator.agones-system.svc"));
        assert_eq!(options.namespace, "games");
        assert_eq!(
            options.selectors,
            [
                ("agones.dev/fleet".to_owned(), "netcode".to_owned()),
                ("region".to_owned(), "eu".to_owned())
            ]
        );
        assert_eq!(options.port_name, "udp");
        assert_eq!(options.address_type.as_deref(), Some("ExternalIP"));
        assert_eq!(options.timeout, Duration::from_millis(250));
        assert_eq!(options.given_without_url().len(), 5);
    }

    #[test]
    fn bad_values_are_refused() {
        for (flag, bad) in [
            ("--allocator-url", "ftp://x"),
            ("--allocator-url", "not a url"),
            ("--allocator-url", "https://a/?q=1"),
            ("--allocator-selector", "novalue"),
            ("--allocator-selector", "=v"),
            ("--allocator-timeout", "0"),
            ("--allocator-timeout", "-1"),
            ("--allocator-timeout", "NaN"),
            ("--allocator-timeout", "1e9"),
        ] {
            let error = Command::try_parse_from(["matcher", &format!("{flag}={bad}")]).unwrap_err();
            assert_eq!(
                error.kind(),
                clap::error::ErrorKind::ValueValidation,
                "{flag} {bad}"
            );
        }
    }
}

//! What a [`WebTransport`](crate::WebTransport) endpoint is built from:
//! where it listens, the path its sessions ask for, its limits, and the
//! certificate browsers check (self-signed and pinned by hash, or the
//! operator's own).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use wtransport::Identity;
use wtransport::tls::self_signed::time::{Duration as CertificateDuration, OffsetDateTime};

/// The longest validity browsers accept for a certificate pinned by its
/// hash (`serverCertificateHashes`): 14 days, the W3C WebTransport rule.
pub const MAX_PINNED_VALIDITY_DAYS: u32 = 14;

/// How far before "now" a generated certificate becomes valid, so that a
/// browser whose clock runs a little behind the server's still accepts it.
/// Taken from the 14 days, not added to them.
pub const CLOCK_SKEW_ALLOWANCE: Duration = Duration::from_secs(60 * 60);

/// The certificate an endpoint presents.
#[derive(Debug)]
pub enum Certificate {
    /// A fresh self-signed ECDSA P-256 certificate for these names (host
    /// names or IP addresses, such as `"localhost"` and `"127.0.0.1"`),
    /// valid for [`MAX_PINNED_VALIDITY_DAYS`] from an hour ago. Browsers
    /// accept it only when the page pins its hash
    /// ([`WebTransport::certificate_hash`](crate::WebTransport::certificate_hash)).
    /// The endpoint replaces it with a new one, and a new hash, every
    /// [`WebTransportConfig::rotate_every`] (7 days by default), so a
    /// server may run for ever; sessions open at a rotation go on.
    SelfSigned(Vec<String>),
    /// The operator's certificate chain and private key, for example
    /// loaded with [`wtransport::Identity::load_pemfiles`] (then browsers
    /// check it against their trust store and no hash is needed). Replace
    /// it before it expires with
    /// [`WebTransport::set_identity`](crate::WebTransport::set_identity).
    Identity(Identity),
}

/// How a [`WebTransport`](crate::WebTransport) endpoint listens.
#[derive(Debug)]
pub struct WebTransportConfig {
    /// The UDP address QUIC listens on, such as `127.0.0.1:0` (port 0
    /// takes any free port) or `[::]:443`.
    pub bind: SocketAddr,
    /// The path sessions must ask for, such as `"/netcode"`; requests for
    /// any other path are answered 404 and counted.
    pub path: String,
    /// The certificate to present.
    pub certificate: Certificate,
    /// Sessions open at most (accepted or being accepted); requests beyond
    /// are answered 429 and counted. Default 1024.
    pub max_sessions: usize,
    /// QUIC connections in their handshake at most; connection attempts
    /// beyond are refused before any cryptography and counted. Default
    /// 256.
    pub max_handshakes: usize,
    /// How long a connection may take from its first packet to its
    /// session request. Default 5 s.
    pub handshake_timeout: Duration,
    /// How long a session may stay without sending a datagram (its first
    /// one, or the next: a connected netcode client sends at least 10 a
    /// second) before it is closed and counted silent. Default 10 s, twice
    /// netcode's default timeout.
    pub silence_timeout: Duration,
    /// How often a self-signed certificate is replaced. Default 7 days;
    /// at most [`MAX_PINNED_VALIDITY_DAYS`] less a day is used.
    pub rotate_every: Duration,
    /// A file the endpoint keeps the current certificate's hash in (64
    /// lowercase hex digits and a newline, replaced atomically at each
    /// rotation), for a token service on the same machine or a shared
    /// volume to hand out (the `matcher`'s `--webtransport` option reads
    /// it). Default none.
    pub hash_file: Option<PathBuf>,
}

impl WebTransportConfig {
    /// Sessions at `https://<host>:<port of bind>/netcode` with a
    /// self-signed certificate for `names`, and the default limits.
    pub fn self_signed(bind: SocketAddr, names: &[&str]) -> Self {
        Self::new(
            bind,
            Certificate::SelfSigned(names.iter().map(|name| name.to_string()).collect()),
        )
    }

    /// Sessions at path `/netcode` of `bind` with `certificate`, and the
    /// default limits.
    pub fn new(bind: SocketAddr, certificate: Certificate) -> Self {
        Self {
            bind,
            path: "/netcode".into(),
            certificate,
            max_sessions: 1024,
            max_handshakes: 256,
            handshake_timeout: Duration::from_secs(5),
            silence_timeout: Duration::from_secs(10),
            rotate_every: Duration::from_secs(7 * 24 * 60 * 60),
            hash_file: None,
        }
    }

    /// The interval self-signed certificates are actually replaced at:
    /// [`rotate_every`](Self::rotate_every), at least a minute and at most
    /// a day short of the validity browsers allow.
    pub(crate) fn rotation_interval(&self) -> Duration {
        let longest = Duration::from_secs(u64::from(MAX_PINNED_VALIDITY_DAYS - 1) * 24 * 60 * 60);
        self.rotate_every.clamp(Duration::from_secs(60), longest)
    }
}

/// A new self-signed ECDSA P-256 certificate for `names`, valid from
/// [`CLOCK_SKEW_ALLOWANCE`] ago for [`MAX_PINNED_VALIDITY_DAYS`] in all:
/// what browsers accept with the hash pinned. Fails if a name is neither a
/// valid host name nor an IP address.
pub fn self_signed_identity(names: &[String]) -> Result<Identity, InvalidName> {
    let skew = CertificateDuration::seconds(CLOCK_SKEW_ALLOWANCE.as_secs() as i64);
    let not_before = OffsetDateTime::now_utc() - skew;
    let not_after = not_before + CertificateDuration::days(i64::from(MAX_PINNED_VALIDITY_DAYS));
    Identity::self_signed_builder()
        .subject_alt_names(names)
        .validity_period(not_before, not_after)
        .build()
        .map_err(|_| InvalidName(names.join(", ")))
}

/// A name for a self-signed certificate that is neither a host name nor an
/// IP address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidName(pub String);

impl std::fmt::Display for InvalidName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "not a host name or IP address for a certificate: {}",
            self.0
        )
    }
}

impl std::error::Error for InvalidName {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_certificates_fit_what_browsers_pin() {
        let identity = self_signed_identity(&["localhost".into(), "127.0.0.1".into()]).unwrap();
        let chain = identity.certificate_chain().as_slice();
        assert_eq!(chain.len(), 1);
        // A second certificate is another certificate: another hash.
        let again = self_signed_identity(&["localhost".into()]).unwrap();
        assert_ne!(
            chain[0].hash().as_ref(),
            again.certificate_chain().as_slice()[0].hash().as_ref()
        );
    }

    #[test]
    fn rotation_stays_inside_the_validity() {
        let mut config = WebTransportConfig::self_signed("127.0.0.1:0".parse().unwrap(), &[]);
        config.rotate_every = Duration::from_secs(30 * 24 * 60 * 60);
        assert_eq!(
            config.rotation_interval(),
            Duration::from_secs(13 * 24 * 60 * 60)
        );
        config.rotate_every = Duration::ZERO;
        assert_eq!(config.rotation_interval(), Duration::from_secs(60));
    }
}

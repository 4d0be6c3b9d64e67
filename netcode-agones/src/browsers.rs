//! Browsers beside UDP: a WebTransport endpoint (`netcode-webtransport`)
//! attached to the netcode server as its relay of virtual peers, so
//! browsers take the same slots with the same connect tokens. Its public
//! URL (the GameServer port named `webtransport`, by default, at the
//! public host) and its certificate's SHA-256 hash are published as
//! annotations for the token service to hand out with each token, and the
//! hash is published again whenever the endpoint replaces its
//! certificate.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use agones::{GameServer, Sdk};
use netcode_webtransport::{WebTransport, WebTransportConfig};

use crate::TARGET;
use crate::announce::CERT_HASH_ANNOTATION;
use crate::error::{AddressError, StartError, describe};

/// Annotation: the URL browsers open their WebTransport session at,
/// `https://HOST:PORT/netcode` (`agones.dev/sdk-netcode-webtransport-url`).
pub const WEBTRANSPORT_URL_ANNOTATION: &str = "netcode-webtransport-url";

/// Label: `true` on a server that takes browsers, for allocations made
/// for a browser to select on (`agones.dev/sdk-netcode-webtransport`).
pub const WEBTRANSPORT_LABEL: &str = "netcode-webtransport";

/// How often the game loop looks for a new certificate.
const ROTATION_CHECK: Duration = Duration::from_secs(1);

/// Where the WebTransport endpoint listens and how it is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BrowserOptions {
    /// The UDP address QUIC binds: the container port (`0.0.0.0:7001`).
    pub bind: SocketAddr,
    /// The GameServer port browsers reach it at (default `webtransport`).
    pub port_name: String,
    /// How often the self-signed certificate is replaced (default 7
    /// days, as `netcode-webtransport` does).
    pub rotate_every: Duration,
}

impl BrowserOptions {
    /// Options with the defaults above for an endpoint bound at `bind`.
    pub fn new(bind: SocketAddr) -> Self {
        Self {
            bind,
            port_name: "webtransport".into(),
            rotate_every: Duration::from_secs(7 * 24 * 60 * 60),
        }
    }
}

/// The public port of the GameServer port `port_name`.
pub(crate) fn public_port(gameserver: &GameServer, port_name: &str) -> Result<u16, AddressError> {
    let ports = gameserver
        .status
        .as_ref()
        .map(|s| &s.ports[..])
        .unwrap_or_default();
    let port = ports
        .iter()
        .find(|p| p.name == port_name)
        .ok_or_else(|| AddressError::NoPort {
            name: port_name.to_owned(),
            available: ports.iter().map(|p| p.name.clone()).collect(),
        })?;
    u16::try_from(port.port)
        .ok()
        .filter(|&n| n != 0)
        .ok_or_else(|| AddressError::InvalidPort {
            name: port_name.to_owned(),
            port: port.port,
        })
}

/// The URL browsers open sessions at: `host` (an IP address, bracketed
/// for IPv6) and `port`, at the endpoint's path.
pub(crate) fn url(public: SocketAddr, port: u16) -> String {
    format!("https://{}/netcode", SocketAddr::new(public.ip(), port))
}

/// A running endpoint and what was last published of it.
pub(crate) struct Browsers {
    endpoint: WebTransport,
    sdk: Sdk,
    runtime: tokio::runtime::Handle,
    /// The hash the sidecar last acknowledged (shared with the task that
    /// publishes it).
    published: Arc<Mutex<[u8; 32]>>,
    /// Whether a publication is under way.
    publishing: Arc<Mutex<bool>>,
    checked_at: Option<Instant>,
}

impl Browsers {
    /// Binds the endpoint with a self-signed certificate for the public
    /// address. Runs on the runtime the SDK calls run on.
    pub(crate) async fn bind(
        options: &BrowserOptions,
        public: SocketAddr,
        sdk: Sdk,
    ) -> Result<Self, StartError> {
        let host = public.ip().to_string();
        let mut config = WebTransportConfig::self_signed(options.bind, &[host.as_str()]);
        config.rotate_every = options.rotate_every;
        let endpoint =
            WebTransport::bind(config)
                .await
                .map_err(|error| StartError::WebTransport {
                    bind: options.bind,
                    error,
                })?;
        let published = Arc::new(Mutex::new(endpoint.certificate_hash()));
        Ok(Self {
            endpoint,
            sdk,
            runtime: tokio::runtime::Handle::current(),
            published,
            publishing: Arc::new(Mutex::new(false)),
            checked_at: None,
        })
    }

    /// The endpoint.
    pub(crate) fn endpoint(&self) -> &WebTransport {
        &self.endpoint
    }

    /// From the game loop: once a second, publishes the certificate's hash
    /// again if the endpoint has replaced the certificate (or a failed
    /// publication is due again), on the runtime, without waiting.
    pub(crate) fn tick(&mut self, now: Instant) {
        if self
            .checked_at
            .is_some_and(|at| now.saturating_duration_since(at) < ROTATION_CHECK)
        {
            return;
        }
        self.checked_at = Some(now);
        let current = self.endpoint.certificate_hash();
        if *lock(&self.published) == current {
            return;
        }
        {
            let mut publishing = lock(&self.publishing);
            if *publishing {
                return;
            }
            *publishing = true;
        }
        let mut sdk = self.sdk.clone();
        let (published, publishing) = (self.published.clone(), self.publishing.clone());
        let hex = self.endpoint.certificate_hash_hex();
        self.runtime.spawn(async move {
            match sdk.set_annotation(CERT_HASH_ANNOTATION, hex.as_str()).await {
                Ok(()) => {
                    log::info!(target: TARGET, "new WebTransport certificate published: {hex}");
                    *lock(&published) = current;
                }
                Err(error) => log::warn!(
                    target: TARGET,
                    "the new WebTransport certificate's hash was not published (tried again \
                     in a second): {}",
                    describe(&error)
                ),
            }
            *lock(&publishing) = false;
        });
    }
}

impl std::fmt::Debug for Browsers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Browsers")
            .field("endpoint", &self.endpoint)
            .field("checked_at", &self.checked_at)
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_the_public_ip_at_the_public_port() {
        assert_eq!(
            url("203.0.113.7:7342".parse().unwrap(), 7343),
            "https://203.0.113.7:7343/netcode"
        );
        assert_eq!(
            url("[2001:db8::7]:7342".parse().unwrap(), 7001),
            "https://[2001:db8::7]:7001/netcode"
        );
    }
}

//! Game servers allocated from an Agones fleet, one per connect token.
//!
//! Instead of listing a static set of servers, the matcher can ask the
//! Agones allocator service for a `Ready` game server of a fleet and issue
//! a token naming that one server. [`FleetSource`] does the asking:
//! `POST /gameserverallocation` on the allocator (its REST API; the JSON
//! is written and read in `wire.rs`), which marks the game server
//! `Allocated` and answers with its address and ports. The address (see
//! [`FleetOptions::address_type`]) and the port named `netcode`
//! (configurable: the host port Agones gave the container port, on the
//! node the game server runs on) are the [`Allocated::server`] a token
//! names. The token route does the rest: it has the
//! [`Matcher`](crate::Matcher) issue the token; neither knows the other.
//!
//! Production runs the allocator with mutual TLS: the matcher presents a
//! client certificate signed by a CA the allocator trusts
//! (`allocator-client-ca`) and checks the allocator's server certificate
//! against the CA it is given (`allocator-tls-ca`), and nothing else.
//! Plain `http://` is accepted for an allocator run with TLS off (tests).
//!
//! The HTTP client is reqwest on rustls with the ring provider: a
//! maintained client with pooled keep-alive connections (one TLS handshake
//! serves many allocations), client certificates from PEM, and no
//! built-in roots in this configuration; ring is already in the tree and
//! needs no cmake or nasm, as aws-lc would.
//!
//! Failures are typed ([`AllocateError`]), each with the HTTP status and
//! `Retry-After` a token service should answer with: no free server (the
//! allocator's 429) and an unreachable or slow allocator are 503, an
//! allocator answering wrongly 502. The whole allocation, connection, TLS
//! and name resolution included, is bounded by `--allocator-timeout`.

mod error;
mod options;
mod wire;

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE};

pub use error::{AllocateError, FleetConfigError};
pub use options::{FleetOptions, LabelError, UrlError, parse_label, parse_url};
/// The URL type of [`FleetOptions::allocator_url`] (the `url` crate's,
/// through reqwest).
pub use reqwest::Url;

/// The largest allocator answer read: a real one is well under 2 KiB.
pub const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// The allocator's path for REST allocations.
const ALLOCATION_PATH: &str = "gameserverallocation";

/// A game server the allocator handed out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allocated {
    /// Where netcode clients reach it: the address and port a token names.
    pub server: SocketAddr,
    /// The `GameServer`'s name, for logs.
    pub game_server_name: String,
    /// The node it runs on, for logs.
    pub node_name: String,
    /// Where a browser reaches it, for an allocation made for a browser
    /// ([`FleetSource::allocate_for_browser`]).
    pub browser: Option<BrowserEndpoint>,
}

/// Where a browser opens its WebTransport session on an allocated server:
/// what `netcode-agones-server --webtransport` publishes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrowserEndpoint {
    /// The URL (`https://HOST:PORT/netcode`).
    pub url: String,
    /// The certificate's SHA-256 hash, 64 hex digits, to pin.
    pub certificate_hash: String,
}

/// The label a server that takes browsers sets through the SDK, as the
/// allocator sees it: allocations for browsers select on it.
pub const BROWSER_LABEL: &str = "agones.dev/sdk-netcode-webtransport";
/// The annotation with the URL browsers open, as the allocator reports it.
pub const BROWSER_URL_ANNOTATION: &str = "agones.dev/sdk-netcode-webtransport-url";
/// The annotation with the certificate's hash, as the allocator reports it.
pub const BROWSER_HASH_ANNOTATION: &str = "agones.dev/sdk-netcode-cert-sha256";

/// Labels and annotations the allocator puts on the game server it
/// allocates (the request's `metadata`), for instance to tell the server
/// something about the match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllocationMetadata {
    /// Labels to add, by key.
    pub labels: BTreeMap<String, String>,
    /// Annotations to add, by key.
    pub annotations: BTreeMap<String, String>,
}

/// A client of the Agones allocator service, configured from
/// [`FleetOptions`]; cheap to share (`Arc`) between requests.
#[derive(Debug)]
pub struct FleetSource {
    client: reqwest::Client,
    endpoint: Url,
    namespace: String,
    match_labels: BTreeMap<String, String>,
    port_name: String,
    address_type: Option<String>,
    timeout: Duration,
}

impl FleetSource {
    /// The fleet source `options` describe, reading its certificate files:
    /// `None` when no `--allocator-url` is given (and none of the options
    /// that need it), or what is wrong.
    pub fn from_options(options: &FleetOptions) -> Result<Option<Self>, FleetConfigError> {
        let Some(url) = &options.allocator_url else {
            let stray = options.given_without_url();
            if stray.is_empty() {
                return Ok(None);
            }
            return Err(FleetConfigError::WithoutUrl(stray));
        };
        if options.port_name.trim().is_empty() {
            return Err(FleetConfigError::EmptyPortName);
        }
        let https = url.scheme() == "https";
        let mut builder = reqwest::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .https_only(https)
            // The allocator is reached directly: no proxy from the
            // environment, no redirects.
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(options.timeout)
            .timeout(options.timeout)
            .user_agent(concat!("netcode-matcher/", env!("CARGO_PKG_VERSION")));
        if https {
            let Some(ca) = &options.ca else {
                return Err(FleetConfigError::NoCa(url.to_string()));
            };
            for certificate in read_ca(ca)? {
                builder = builder.add_root_certificate(certificate);
            }
            match (&options.client_cert, &options.client_key) {
                (Some(cert), Some(key)) => builder = builder.identity(read_identity(cert, key)?),
                (None, None) => {}
                _ => return Err(FleetConfigError::HalfIdentity),
            }
        } else if options.ca.is_some()
            || options.client_cert.is_some()
            || options.client_key.is_some()
        {
            return Err(FleetConfigError::CertificatesOnHttp(url.to_string()));
        }
        let client = builder
            .build()
            .map_err(|e| FleetConfigError::Client(chain(&e)))?;
        Ok(Some(Self {
            client,
            endpoint: endpoint(url),
            namespace: options.namespace.clone(),
            match_labels: options.selectors.iter().cloned().collect(),
            port_name: options.port_name.clone(),
            address_type: options.address_type.clone(),
            timeout: options.timeout,
        }))
    }

    /// The URL allocations are posted to.
    pub fn endpoint(&self) -> &Url {
        &self.endpoint
    }

    /// Allocates a `Ready` game server matching the selectors.
    pub async fn allocate(&self) -> Result<Allocated, AllocateError> {
        self.allocate_with(&AllocationMetadata::default()).await
    }

    /// Allocates a `Ready` game server matching the selectors that takes
    /// browsers (its [`BROWSER_LABEL`] is `true`), with the URL and
    /// certificate hash it publishes.
    pub async fn allocate_for_browser(&self) -> Result<Allocated, AllocateError> {
        let mut match_labels = self.match_labels.clone();
        match_labels.insert(BROWSER_LABEL.into(), "true".into());
        tokio::time::timeout(
            self.timeout,
            self.ask(&match_labels, &AllocationMetadata::default(), true),
        )
        .await
        .unwrap_or(Err(AllocateError::Timeout(self.timeout)))
    }

    /// Allocates a `Ready` game server matching the selectors, putting
    /// `metadata` on it.
    pub async fn allocate_with(
        &self,
        metadata: &AllocationMetadata,
    ) -> Result<Allocated, AllocateError> {
        tokio::time::timeout(self.timeout, self.ask(&self.match_labels, metadata, false))
            .await
            .unwrap_or(Err(AllocateError::Timeout(self.timeout)))
    }

    /// One allocation request and the reading of its answer, unbounded in
    /// time (the caller bounds it).
    async fn ask(
        &self,
        match_labels: &BTreeMap<String, String>,
        metadata: &AllocationMetadata,
        for_browser: bool,
    ) -> Result<Allocated, AllocateError> {
        let body = wire::request_body(
            &self.namespace,
            match_labels,
            &metadata.labels,
            &metadata.annotations,
        );
        let response = self
            .client
            .post(self.endpoint.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json")
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| self.transport_error(&e))?;
        let status = response.status();
        let answer = self.read_capped(response).await?;
        if status.as_u16() == 429 {
            return Err(AllocateError::NoServerAvailable);
        }
        if !status.is_success() {
            return Err(AllocateError::Refused {
                status: status.as_u16(),
                message: excerpt(&answer),
            });
        }
        let answer = wire::parse_answer(&answer).map_err(AllocateError::BadAnswer)?;
        let unusable = |why: String| {
            AllocateError::BadAnswer(format!(
                "game server {:?} on node {:?}: {why}",
                answer.game_server_name, answer.node_name
            ))
        };
        let port = self.port(&answer).map_err(unusable)?;
        let host = self.host(&answer).map_err(unusable)?;
        let server = resolve(host, port).await.map_err(unusable)?;
        let browser = if for_browser {
            let annotation = |key: &str| {
                answer
                    .annotations
                    .get(key)
                    .filter(|value| !value.trim().is_empty())
                    .cloned()
                    .ok_or_else(|| unusable(format!("no annotation {key:?} (it takes browsers)")))
            };
            Some(BrowserEndpoint {
                url: annotation(BROWSER_URL_ANNOTATION)?,
                certificate_hash: annotation(BROWSER_HASH_ANNOTATION)?,
            })
        } else {
            None
        };
        Ok(Allocated {
            server,
            game_server_name: answer.game_server_name,
            node_name: answer.node_name,
            browser,
        })
    }

    /// The answer's body, at most [`MAX_ANSWER_BYTES`].
    async fn read_capped(&self, mut response: reqwest::Response) -> Result<Vec<u8>, AllocateError> {
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| self.transport_error(&e))?
        {
            if body.len() + chunk.len() > MAX_ANSWER_BYTES {
                return Err(AllocateError::BadAnswer(format!(
                    "the answer is longer than {MAX_ANSWER_BYTES} bytes"
                )));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    /// A failure to exchange the request and answer, typed.
    fn transport_error(&self, error: &reqwest::Error) -> AllocateError {
        if error.is_timeout() {
            AllocateError::Timeout(self.timeout)
        } else {
            AllocateError::Unreachable(chain(error))
        }
    }

    /// The number of the port named as configured.
    fn port(&self, answer: &wire::Answer) -> Result<u16, String> {
        let Some((_, number)) = answer
            .ports
            .iter()
            .find(|(name, _)| *name == self.port_name)
        else {
            let names: Vec<&str> = answer.ports.iter().map(|(name, _)| name.as_str()).collect();
            return Err(format!(
                "no port named {:?} (its ports: {names:?})",
                self.port_name
            ));
        };
        number
            .and_then(|n| u16::try_from(n).ok())
            .filter(|&n| n != 0)
            .ok_or_else(|| format!("port {:?} is not a port number: {number:?}", self.port_name))
    }

    /// The host a token names: the address of the configured type, or the
    /// answer's `address`.
    fn host<'a>(&self, answer: &'a wire::Answer) -> Result<&'a str, String> {
        let host = match &self.address_type {
            Some(wanted) => answer
                .addresses
                .iter()
                .find(|(kind, address)| kind.eq_ignore_ascii_case(wanted) && !address.is_empty())
                .map(|(_, address)| address.as_str())
                .ok_or_else(|| {
                    let kinds: Vec<&str> = answer
                        .addresses
                        .iter()
                        .map(|(kind, _)| kind.as_str())
                        .collect();
                    format!("no address of type {wanted:?} (its addresses: {kinds:?}; set --allocator-address-type or NETCODE_ADDRESS_TYPE)")
                })?,
            None => answer.address.as_str(),
        };
        let host = host.trim();
        if host.is_empty() {
            return Err("no address".into());
        }
        Ok(host)
    }
}

/// `url` with the allocation path appended, unless it ends with it.
fn endpoint(url: &Url) -> Url {
    let mut endpoint = url.clone();
    let path = url.path().trim_end_matches('/');
    if !path.ends_with(&format!("/{ALLOCATION_PATH}")) {
        endpoint.set_path(&format!("{path}/{ALLOCATION_PATH}"));
    }
    endpoint
}

/// `host` (an IP address, bracketed or not, or a name to resolve) and
/// `port` as a socket address; a name's lowest IPv4 address, else its
/// lowest IPv6 one.
async fn resolve(host: &str, port: u16) -> Result<SocketAddr, String> {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    let found = tokio::net::lookup_host((bare, port))
        .await
        .map_err(|e| {
            format!(
                "address {host:?} does not resolve: {e} (choose an IP address type with --allocator-address-type or NETCODE_ADDRESS_TYPE)"
            )
        })?;
    // The lowest IPv4 address, else the lowest IPv6 one: the rule
    // netcode-agones-server follows for its own name (`pick_resolved`), so
    // that the token names the address the server calls itself by.
    found
        .min_by_key(|address| (address.is_ipv6(), address.ip()))
        .ok_or_else(|| format!("address {host:?} resolves to nothing"))
}

/// The CA certificates in the PEM file at `path` (at least one).
fn read_ca(path: &Path) -> Result<Vec<reqwest::Certificate>, FleetConfigError> {
    let pem = read(path)?;
    let certificates = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| {
        FleetConfigError::NotCertificates {
            path: path.to_owned(),
            why: chain(&e),
        }
    })?;
    if certificates.is_empty() {
        return Err(FleetConfigError::NoCertificate(path.to_owned()));
    }
    Ok(certificates)
}

/// The client identity in the PEM files at `cert` and `key`.
fn read_identity(cert: &Path, key: &Path) -> Result<reqwest::Identity, FleetConfigError> {
    let mut pem = read(key)?;
    pem.push(b'\n');
    pem.extend_from_slice(&read(cert)?);
    reqwest::Identity::from_pem(&pem).map_err(|e| FleetConfigError::NotIdentity {
        cert: cert.to_owned(),
        key: key.to_owned(),
        why: chain(&e),
    })
}

/// The bytes of the file at `path`, or why not.
fn read(path: &Path) -> Result<Vec<u8>, FleetConfigError> {
    std::fs::read(path).map_err(|error| FleetConfigError::Read {
        path: path.to_owned(),
        error,
    })
}

/// An error and its sources, joined: reqwest's own message rarely says
/// what went wrong underneath.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The start of an error answer, for a message: at most 200 characters,
/// control characters replaced.
fn excerpt(body: &[u8]) -> String {
    String::from_utf8_lossy(body)
        .chars()
        .take(200)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .trim()
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_is_the_allocation_path_once() {
        for (given, expected) in [
            ("https://a.b:443", "https://a.b/gameserverallocation"),
            ("https://a.b:8443/", "https://a.b:8443/gameserverallocation"),
            ("http://a/x/", "http://a/x/gameserverallocation"),
            (
                "http://a/gameserverallocation",
                "http://a/gameserverallocation",
            ),
        ] {
            let url = parse_url(given).unwrap();
            assert_eq!(endpoint(&url).as_str(), expected, "{given}");
        }
    }

    #[test]
    fn configuration_mistakes_are_reported() {
        let https = parse_url("https://allocator:443").unwrap();
        let http = parse_url("http://127.0.0.1:1").unwrap();
        let mut stray = FleetOptions::new(http.clone());
        stray.allocator_url = None;
        stray.ca = Some("ca.pem".into());
        let refused =
            |options: &FleetOptions| FleetSource::from_options(options).unwrap_err().to_string();
        assert!(refused(&stray).contains("--allocator-ca given without --allocator-url"));
        let no_ca = FleetOptions::new(https.clone());
        assert!(refused(&no_ca).contains("needs --allocator-ca"));
        let mut missing_ca_file = FleetOptions::new(https.clone());
        missing_ca_file.ca = Some("/nonexistent/matcher/ca.pem".into());
        assert!(refused(&missing_ca_file).contains("cannot read /nonexistent/matcher/ca.pem"));
        let mut certs_on_http = FleetOptions::new(http.clone());
        certs_on_http.client_cert = Some("c.pem".into());
        assert!(refused(&certs_on_http).contains("apply only to https://"));

        let mut no_port = FleetOptions::new(http.clone());
        no_port.port_name = " ".into();
        assert!(matches!(
            FleetSource::from_options(&no_port),
            Err(FleetConfigError::EmptyPortName)
        ));
        let mut off = FleetOptions::new(http.clone());
        off.allocator_url = None;
        assert!(FleetSource::from_options(&off).unwrap().is_none());
        let on = FleetSource::from_options(&FleetOptions::new(http)).unwrap();
        assert_eq!(
            on.unwrap().endpoint().as_str(),
            "http://127.0.0.1:1/gameserverallocation"
        );
    }

    #[tokio::test]
    async fn hosts_are_addresses_or_resolved_names() {
        assert_eq!(
            resolve("10.1.2.3", 7000).await.unwrap(),
            "10.1.2.3:7000".parse().unwrap()
        );
        assert_eq!(
            resolve("[2001:db8::1]", 7000).await.unwrap(),
            "[2001:db8::1]:7000".parse().unwrap()
        );
        assert_eq!(
            resolve("2001:db8::1", 7001).await.unwrap(),
            "[2001:db8::1]:7001".parse().unwrap()
        );
        let local = resolve("localhost", 7002).await.unwrap();
        assert!(local.ip().is_loopback(), "{local}");
        assert_eq!(local.port(), 7002);
    }

    #[test]
    fn excerpts_are_short_and_printable() {
        assert_eq!(excerpt(b"  no\nway\x07 "), "no way");
        assert_eq!(excerpt(&[b'x'; 1000]).len(), 200);
    }
}

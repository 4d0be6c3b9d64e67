//! Issuing connect tokens: who may ask (the bearer secret), for which
//! protocols, and which servers each token lists (STANDARD.md, "Connect
//! token"; the tokens themselves are netcode-std's): the fleet, for UDP
//! clients, or the one server a browser reaches over WebTransport.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};

use netcode_std::constants::{CONNECT_TOKEN_BYTES, MAX_SERVERS_PER_CONNECT};
use netcode_std::{ConnectTokenBuilder, Key, TokenBuildError};

use crate::secret::Secret;
use crate::webtransport::{Browsers, NoChoice, WebSocketSpec, WebTransportSpec};

/// The matcher's state: its secret, the key it shares with the fleet, the
/// fleet's addresses (and which of its servers take browsers) and the
/// protocols it serves.
///
/// It issues tokens for the servers it is told of: its own list, or one
/// server given by the caller ([`issue_for`](Self::issue_for)), such as the
/// one an Agones fleet allocated ([`FleetSource`](crate::FleetSource)); it
/// knows nothing of where that server came from.
#[derive(Debug)]
pub struct Matcher {
    secret: Secret,
    key: Key,
    servers: Vec<SocketAddr>,
    protocol_ids: Vec<u64>,
    expire_seconds: u32,
    timeout_seconds: u16,
    /// Where the next token's list of servers starts.
    next_server: AtomicUsize,
    /// The servers that also take browsers over WebTransport.
    browsers: Browsers,
    /// The WebSocket fallbacks of some of them.
    websockets: Vec<WebSocketSpec>,
}

/// A connect token for a browser, and where the browser takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrowserToken {
    /// The connect token, listing only the server at
    /// [`url`](Self::url) (by its UDP address).
    pub token: [u8; CONNECT_TOKEN_BYTES],
    /// The server's public UDP address, the one the token lists.
    pub server: SocketAddr,
    /// The URL the browser opens a WebTransport session at.
    pub url: String,
    /// The SHA-256 hash of the server's certificate, 64 lowercase hex
    /// digits, for the browser to pin (`serverCertificateHashes`); `None`
    /// for a certificate browsers trust by themselves.
    pub certificate_hash: Option<String>,
    /// The URL of the server's WebSocket fallback, if it has one.
    pub websocket_url: Option<String>,
}

/// Why no token was issued for a request that was otherwise fine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IssueError {
    /// The fleet does not serve this protocol id.
    #[error("no servers for protocol id {0:#x}")]
    UnknownProtocol(u64),
    /// The token could not be made (the operating system's random source
    /// failed, or the configuration holds an unusable address).
    #[error("could not make a token: {0}")]
    Build(TokenBuildError),
    /// A browser asked, and no server of the fleet takes browsers.
    #[error("no server of this fleet takes browsers (WebTransport)")]
    NoBrowserServers,
    /// A browser asked, and no server that takes browsers has a
    /// certificate hash to hand out now (their hash files are unreadable
    /// or malformed).
    #[error("no server taking browsers (WebTransport) is available now: try again later")]
    NoBrowserServerAvailable,
}

/// Why the servers given to take browsers do not fit the fleet.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BrowserServersError {
    /// A spec names a server that is not in the fleet's list.
    #[error("--webtransport {spec}: {} is not one of the --server addresses", .spec.server)]
    NotInFleet {
        /// The spec.
        spec: WebTransportSpec,
    },
    /// Two specs name the same server.
    #[error("--webtransport: {0} is given more than once")]
    Repeated(SocketAddr),
    /// A WebSocket spec names a server that takes no browsers over
    /// WebTransport (the fallback is handed out with a WebTransport
    /// server's answer).
    #[error("--websocket {spec}: {} is not one of the --webtransport servers", .spec.server)]
    WebSocketWithoutWebTransport {
        /// The spec.
        spec: WebSocketSpec,
    },
    /// Two WebSocket specs name the same server.
    #[error("--websocket: {0} is given more than once")]
    RepeatedWebSocket(SocketAddr),
}

impl Matcher {
    /// A matcher accepting `secret`, sealing tokens with `key` for
    /// `protocol_ids`, listing `servers`, valid for `expire_seconds`, with
    /// connections timing out after `timeout_seconds` of silence.
    pub fn new(
        secret: String,
        key: Key,
        servers: Vec<SocketAddr>,
        protocol_ids: Vec<u64>,
        expire_seconds: u32,
        timeout_seconds: u16,
    ) -> Self {
        Self {
            secret: Secret::new(secret),
            key,
            servers,
            protocol_ids,
            expire_seconds,
            timeout_seconds,
            next_server: AtomicUsize::new(0),
            browsers: Browsers::default(),
            websockets: Vec::new(),
        }
    }

    /// The same matcher, giving browsers the servers of `specs`; fails if
    /// one names a server not in the fleet, or a server twice.
    pub fn with_webtransport(
        mut self,
        specs: Vec<WebTransportSpec>,
    ) -> Result<Self, BrowserServersError> {
        for (i, spec) in specs.iter().enumerate() {
            if !self.servers.contains(&spec.server) {
                return Err(BrowserServersError::NotInFleet { spec: spec.clone() });
            }
            if specs[..i].iter().any(|other| other.server == spec.server) {
                return Err(BrowserServersError::Repeated(spec.server));
            }
        }
        self.browsers = Browsers::new(specs);
        Ok(self)
    }

    /// The same matcher, handing browsers the WebSocket fallbacks of
    /// `specs` beside their servers' WebTransport URLs; fails if one names
    /// a server that takes no browsers over WebTransport, or a server
    /// twice. Call after [`with_webtransport`](Self::with_webtransport).
    pub fn with_websockets(
        mut self,
        specs: Vec<WebSocketSpec>,
    ) -> Result<Self, BrowserServersError> {
        for (i, spec) in specs.iter().enumerate() {
            if !self.browsers.serves(spec.server) {
                return Err(BrowserServersError::WebSocketWithoutWebTransport {
                    spec: spec.clone(),
                });
            }
            if specs[..i].iter().any(|other| other.server == spec.server) {
                return Err(BrowserServersError::RepeatedWebSocket(spec.server));
            }
        }
        self.websockets = specs;
        Ok(self)
    }

    /// Whether `presented` is the secret, compared in constant time.
    pub fn authorized(&self, presented: &[u8]) -> bool {
        self.secret.matches(presented)
    }

    /// The secret, for the checks made before a request reaches it.
    pub(crate) fn secret(&self) -> &Secret {
        &self.secret
    }

    /// How long the tokens it issues stay valid, in seconds.
    pub fn expire_seconds(&self) -> u32 {
        self.expire_seconds
    }

    /// A connect token for `client_id` on protocol `protocol_id`.
    pub fn issue(
        &self,
        protocol_id: u64,
        client_id: u64,
    ) -> Result<[u8; CONNECT_TOKEN_BYTES], IssueError> {
        if !self.protocol_ids.contains(&protocol_id) {
            return Err(IssueError::UnknownProtocol(protocol_id));
        }
        self.token(protocol_id, client_id, self.next_servers())
    }

    /// Whether the matcher issues tokens for protocol `protocol_id`.
    pub fn serves_protocol(&self, protocol_id: u64) -> bool {
        self.protocol_ids.contains(&protocol_id)
    }

    /// A connect token for `client_id` on protocol `protocol_id` listing
    /// exactly `servers`, in that order, instead of the configured ones:
    /// for instance the one game server a fleet allocated for this client.
    /// An empty list, or one longer than 32, is [`IssueError::Build`].
    pub fn issue_for(
        &self,
        protocol_id: u64,
        client_id: u64,
        servers: &[SocketAddr],
    ) -> Result<[u8; CONNECT_TOKEN_BYTES], IssueError> {
        if !self.serves_protocol(protocol_id) {
            return Err(IssueError::UnknownProtocol(protocol_id));
        }
        self.token(protocol_id, client_id, servers.to_vec())
    }

    /// A connect token for a browser with `client_id` on protocol
    /// `protocol_id`, listing one server that takes browsers: the next
    /// one along (browsers spread over them), skipping any whose
    /// certificate hash cannot be read now (each logged as a warning).
    pub fn issue_webtransport(
        &self,
        protocol_id: u64,
        client_id: u64,
    ) -> Result<BrowserToken, IssueError> {
        if !self.protocol_ids.contains(&protocol_id) {
            return Err(IssueError::UnknownProtocol(protocol_id));
        }
        let chosen = self
            .browsers
            .choose(|spec, why| {
                log::warn!("{} is unavailable to browsers for now: {why}", spec.server);
            })
            .map_err(|e| match e {
                NoChoice::NoneConfigured => IssueError::NoBrowserServers,
                NoChoice::NoneAvailable => IssueError::NoBrowserServerAvailable,
            })?;
        Ok(BrowserToken {
            token: self.token(protocol_id, client_id, vec![chosen.server])?,
            server: chosen.server,
            url: chosen.url,
            certificate_hash: chosen.certificate_hash,
            websocket_url: self
                .websockets
                .iter()
                .find(|spec| spec.server == chosen.server)
                .map(|spec| spec.url.clone()),
        })
    }

    /// Whether any server of the fleet takes browsers.
    pub fn takes_browsers(&self) -> bool {
        !self.browsers.is_empty()
    }

    /// A token listing `servers`.
    fn token(
        &self,
        protocol_id: u64,
        client_id: u64,
        servers: Vec<SocketAddr>,
    ) -> Result<[u8; CONNECT_TOKEN_BYTES], IssueError> {
        ConnectTokenBuilder::new(protocol_id, &self.key, client_id)
            .server_addresses(servers)
            .expire_seconds(i64::from(self.expire_seconds))
            .timeout_seconds(i32::from(self.timeout_seconds))
            .generate()
            .map_err(IssueError::Build)
    }

    /// The servers the next token lists, in the order a client tries them:
    /// up to 32, starting one further along the fleet for each token, so
    /// that first tries spread over every server.
    pub fn next_servers(&self) -> Vec<SocketAddr> {
        let count = self.servers.len();
        if count == 0 {
            return Vec::new();
        }
        let start = self.next_server.fetch_add(1, Ordering::Relaxed) % count;
        let listed = count.min(MAX_SERVERS_PER_CONNECT);
        (0..listed)
            .map(|i| self.servers[(start + i) % count])
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use netcode_std::ConnectToken;

    use super::*;
    use crate::webtransport::CertificateHash;

    fn matcher(servers: usize) -> Matcher {
        let servers = (0..servers)
            .map(|i| SocketAddr::from(([127, 0, 0, 1], 40000 + i as u16)))
            .collect();
        Matcher::new(
            "s3cret".into(),
            Key::from_bytes([1; 32]),
            servers,
            vec![7],
            30,
            5,
        )
    }

    #[test]
    fn lists_rotate_and_never_exceed_a_token() {
        let m = matcher(3);
        let first: Vec<u16> = m.next_servers().iter().map(|a| a.port()).collect();
        let second: Vec<u16> = m.next_servers().iter().map(|a| a.port()).collect();
        assert_eq!(first, [40000, 40001, 40002]);
        assert_eq!(second, [40001, 40002, 40000]);
        let big = matcher(40);
        for _ in 0..41 {
            let list = big.next_servers();
            assert_eq!(list.len(), MAX_SERVERS_PER_CONNECT);
            let mut ports: Vec<u16> = list.iter().map(|a| a.port()).collect();
            ports.sort_unstable();
            ports.dedup();
            assert_eq!(ports.len(), MAX_SERVERS_PER_CONNECT, "no server twice");
        }
    }

    #[test]
    fn tokens_are_for_known_protocols_and_the_right_secret() {
        let m = matcher(2);
        assert!(m.authorized(b"s3cret"));
        for wrong in [&b""[..], b"s3cre", b"s3cret ", b"S3CRET"] {
            assert!(!m.authorized(wrong), "{wrong:?}");
        }
        assert_eq!(m.issue(8, 1), Err(IssueError::UnknownProtocol(8)));
        let token = ConnectToken::read(&m.issue(7, 99).unwrap()).unwrap();
        assert_eq!(token.protocol_id, 7);
        assert_eq!(token.server_addresses.len(), 2);
        assert_eq!(token.timeout_seconds, 5);
        assert_eq!(token.expire_timestamp - token.create_timestamp, 30);
    }

    #[test]
    fn tokens_can_name_given_servers_instead_of_the_configured_ones() {
        let m = matcher(3);
        assert!(m.serves_protocol(7));
        assert!(!m.serves_protocol(8));
        let allocated = SocketAddr::from(([192, 0, 2, 7], 7123));
        let token = ConnectToken::read(&m.issue_for(7, 5, &[allocated]).unwrap()).unwrap();
        assert_eq!(token.server_addresses.len(), 1);
        assert_eq!(token.server_addresses[0], allocated);
        assert_eq!(
            m.issue_for(8, 5, &[allocated]),
            Err(IssueError::UnknownProtocol(8))
        );
        assert!(matches!(m.issue_for(7, 5, &[]), Err(IssueError::Build(_))));
        let too_many = vec![allocated; MAX_SERVERS_PER_CONNECT + 1];
        assert!(matches!(
            m.issue_for(7, 5, &too_many),
            Err(IssueError::Build(_))
        ));
        // The rotation over the configured servers is left alone.
        assert_eq!(m.next_servers()[0].port(), 40000);
    }

    fn browser_spec(port: u16, certificate: CertificateHash) -> WebTransportSpec {
        WebTransportSpec {
            server: SocketAddr::from(([127, 0, 0, 1], port)),
            url: format!("https://127.0.0.1:{}/netcode", port + 100),
            certificate,
        }
    }

    #[test]
    fn browsers_get_one_server_of_those_that_take_them_in_turn() {
        assert_eq!(
            matcher(2).issue_webtransport(7, 1),
            Err(IssueError::NoBrowserServers)
        );
        assert!(!matcher(2).takes_browsers());
        let hash = "ef".repeat(32);
        let m = matcher(3)
            .with_webtransport(vec![
                browser_spec(40000, CertificateHash::Trusted),
                browser_spec(40002, CertificateHash::Fixed(hash.clone())),
            ])
            .unwrap();
        assert!(m.takes_browsers());
        assert_eq!(
            m.issue_webtransport(8, 1),
            Err(IssueError::UnknownProtocol(8))
        );
        let mut ports = Vec::new();
        for client_id in 0..4 {
            let issued = m.issue_webtransport(7, client_id).unwrap();
            let token = ConnectToken::read(&issued.token).unwrap();
            assert_eq!(token.server_addresses.len(), 1);
            assert_eq!(token.server_addresses[0], issued.server);
            let port = issued.server.port();
            assert_eq!(
                issued.url,
                format!("https://127.0.0.1:{}/netcode", port + 100)
            );
            let expected = (port == 40002).then(|| hash.clone());
            assert_eq!(issued.certificate_hash, expected);
            ports.push(port);
        }
        assert_eq!(ports, [40000, 40002, 40000, 40002]);
        // UDP clients still get the whole fleet.
        assert_eq!(m.next_servers().len(), 3);

        let broken = matcher(1)
            .with_webtransport(vec![browser_spec(
                40000,
                CertificateHash::File("/nonexistent/matcher/hash".into()),
            )])
            .unwrap();
        assert_eq!(
            broken.issue_webtransport(7, 1),
            Err(IssueError::NoBrowserServerAvailable)
        );
    }

    #[test]
    fn browser_servers_must_be_in_the_fleet_once() {
        let outside =
            matcher(2).with_webtransport(vec![browser_spec(40005, CertificateHash::Trusted)]);
        assert!(
            outside
                .unwrap_err()
                .to_string()
                .contains("not one of the --server addresses")
        );
        let twice = matcher(2).with_webtransport(vec![
            browser_spec(40001, CertificateHash::Trusted),
            browser_spec(40001, CertificateHash::Fixed("00".repeat(32))),
        ]);
        let twice = twice.unwrap_err();
        assert_eq!(
            twice,
            BrowserServersError::Repeated("127.0.0.1:40001".parse().unwrap())
        );
        assert!(twice.to_string().contains("more than once"));
    }

    #[test]
    fn a_browsers_answer_carries_its_servers_websocket_fallback() {
        let websocket = |port: u16| WebSocketSpec {
            server: SocketAddr::from(([127, 0, 0, 1], port)),
            url: format!("ws://127.0.0.1:{}/netcode", port + 200),
        };
        let with_browsers = || {
            matcher(2)
                .with_webtransport(vec![
                    browser_spec(40000, CertificateHash::Trusted),
                    browser_spec(40001, CertificateHash::Trusted),
                ])
                .unwrap()
        };
        let m = with_browsers()
            .with_websockets(vec![websocket(40001)])
            .unwrap();
        let mut seen = Vec::new();
        for _ in 0..2 {
            let issued = m.issue_webtransport(7, 1).unwrap();
            seen.push((issued.server.port(), issued.websocket_url));
        }
        seen.sort();
        assert_eq!(
            seen,
            [
                (40000, None),
                (40001, Some("ws://127.0.0.1:40201/netcode".to_owned()))
            ]
        );
        // Only for a server that takes browsers over WebTransport, once.
        assert_eq!(
            matcher(2)
                .with_websockets(vec![websocket(40000)])
                .unwrap_err(),
            BrowserServersError::WebSocketWithoutWebTransport {
                spec: websocket(40000)
            }
        );
        assert_eq!(
            with_browsers()
                .with_websockets(vec![websocket(40000), websocket(40000)])
                .unwrap_err(),
            BrowserServersError::RepeatedWebSocket(websocket(40000).server)
        );
    }
}

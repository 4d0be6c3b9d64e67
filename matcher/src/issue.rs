//! Issuing connect tokens: who may ask (the bearer secret), for which
//! protocols, and which servers each token lists (STANDARD.md, "Connect
//! token"; the tokens themselves are netcode-std's).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};

use netcode_std::constants::{CONNECT_TOKEN_BYTES, MAX_SERVERS_PER_CONNECT};
use netcode_std::{ConnectTokenBuilder, Key, TokenBuildError};
use subtle::ConstantTimeEq;

/// The matcher's state: its secret, the key it shares with the fleet, the
/// fleet's addresses and the protocols it serves.
#[derive(Debug)]
pub struct Matcher {
    secret: String,
    key: Key,
    servers: Vec<SocketAddr>,
    protocol_ids: Vec<u64>,
    expire_seconds: u32,
    timeout_seconds: u16,
    /// Where the next token's list of servers starts.
    next_server: AtomicUsize,
}

/// Why no token was issued for a request that was otherwise fine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IssueError {
    /// The fleet does not serve this protocol id.
    UnknownProtocol(u64),
    /// The token could not be made (the operating system's random source
    /// failed, or the configuration holds an unusable address).
    Build(TokenBuildError),
}

impl std::fmt::Display for IssueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::UnknownProtocol(id) => write!(f, "no servers for protocol id {id:#x}"),
            Self::Build(e) => write!(f, "could not make a token: {e}"),
        }
    }
}

impl std::error::Error for IssueError {}

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
            secret,
            key,
            servers,
            protocol_ids,
            expire_seconds,
            timeout_seconds,
            next_server: AtomicUsize::new(0),
        }
    }

    /// Whether `presented` is the secret, compared in constant time.
    pub fn authorized(&self, presented: &[u8]) -> bool {
        self.secret.as_bytes().ct_eq(presented).into()
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
        ConnectTokenBuilder::new(protocol_id, &self.key, client_id)
            .server_addresses(self.next_servers())
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
}

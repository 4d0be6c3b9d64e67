//! Connect token generation for web backends: [`ConnectTokenBuilder`].

use std::net::SocketAddr;

use crate::address::{AddressParseError, ToAddress};

use netcode_proto::Key;
use netcode_proto::constants::{CONNECT_TOKEN_BYTES, USER_DATA_BYTES};
use netcode_proto::token::{ConnectTokenParams, TokenError, generate_connect_token};

use crate::random::os_random;
use crate::time::unix_time;

/// Why [`ConnectTokenBuilder::generate`] failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TokenBuildError {
    /// Public server address number `index` (from 0) is not an address.
    #[error("public server address {index}: {error}")]
    PublicAddress {
        /// Its position in the list.
        index: usize,
        /// Why.
        #[source]
        error: AddressParseError,
    },
    /// Internal server address number `index` (from 0) is not an address.
    #[error("internal server address {index}: {error}")]
    InternalAddress {
        /// Its position in the list.
        index: usize,
        /// Why.
        #[source]
        error: AddressParseError,
    },
    /// The token could not be made: no addresses, more than 32, or public
    /// and internal lists of different lengths.
    #[error("{0}")]
    Token(#[from] TokenError),
}

/// Builds a connect token from address strings (in the C library's syntax,
/// see [`parse_address`](crate::parse_address)) or parsed addresses, with
/// the reference's defaults: 30 s expiry, 5 s timeout, zero user data.
///
/// ```
/// use netcode_std::{ConnectTokenBuilder, proto::Key};
///
/// let key = Key::from_bytes([7; 32]);
/// let token: [u8; 2048] = ConnectTokenBuilder::new(0x1122_3344_5566_7788, &key, 42)
///     .server_addresses(["127.0.0.1:40000", "[::1]:40000"])
///     .expire_seconds(60)
///     .timeout_seconds(10)
///     .generate()
///     .unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct ConnectTokenBuilder<'a> {
    protocol_id: u64,
    private_key: &'a Key,
    client_id: u64,
    public: Result<Vec<SocketAddr>, TokenBuildError>,
    internal: Option<Result<Vec<SocketAddr>, TokenBuildError>>,
    expire_seconds: i64,
    timeout_seconds: i32,
    user_data: [u8; USER_DATA_BYTES],
    issued_at: Option<u64>,
}

impl<'a> ConnectTokenBuilder<'a> {
    /// A token for `client_id`, sealed with `private_key`, with no server
    /// addresses yet.
    pub fn new(protocol_id: u64, private_key: &'a Key, client_id: u64) -> Self {
        Self {
            protocol_id,
            private_key,
            client_id,
            public: Ok(Vec::new()),
            internal: None,
            expire_seconds: 30,
            timeout_seconds: 5,
            user_data: [0; USER_DATA_BYTES],
            issued_at: None,
        }
    }

    /// The servers the client tries, in order (1 to 32).
    pub fn server_addresses<A: ToAddress>(
        mut self,
        addresses: impl IntoIterator<Item = A>,
    ) -> Self {
        self.public = parse_all(addresses, |index, error| TokenBuildError::PublicAddress {
            index,
            error,
        });
        self
    }

    /// The addresses the servers know themselves by, one per public
    /// address, when they differ from the public ones (NAT, proxies).
    pub fn internal_server_addresses<A: ToAddress>(
        mut self,
        addresses: impl IntoIterator<Item = A>,
    ) -> Self {
        self.internal = Some(parse_all(addresses, |index, error| {
            TokenBuildError::InternalAddress { index, error }
        }));
        self
    }

    /// Lifetime in seconds; negative means the token never expires.
    pub fn expire_seconds(mut self, seconds: i64) -> Self {
        self.expire_seconds = seconds;
        self
    }

    /// Connection timeout in seconds; negative disables timeouts.
    pub fn timeout_seconds(mut self, seconds: i32) -> Self {
        self.timeout_seconds = seconds;
        self
    }

    /// Application data for the server.
    pub fn user_data(mut self, user_data: &[u8; USER_DATA_BYTES]) -> Self {
        self.user_data = *user_data;
        self
    }

    /// The unix second the token is issued at, from which its expiry
    /// counts (by default the system clock's when it is generated): for a
    /// backend that keeps time its own way, or one that issues tokens for
    /// a server from the second the server admits them
    /// ([`Server::start_nowait`](crate::Server::start_nowait)).
    pub fn issued_at(mut self, unix_seconds: u64) -> Self {
        self.issued_at = Some(unix_seconds);
        self
    }

    /// Issues the 2048-byte token, stamped with the current unix time (or
    /// [`issued_at`](Self::issued_at)'s), with its nonce and keys from the
    /// operating system's CSPRNG.
    pub fn generate(&self) -> Result<[u8; CONNECT_TOKEN_BYTES], TokenBuildError> {
        let public = self.public.as_ref().map_err(|e| *e)?;
        let internal = match &self.internal {
            Some(list) => Some(list.as_ref().map_err(|e| *e)?.as_slice()),
            None => None,
        };
        let params = ConnectTokenParams {
            protocol_id: self.protocol_id,
            private_key: self.private_key,
            client_id: self.client_id,
            public_addresses: public,
            internal_addresses: internal,
            create_timestamp: self.issued_at.unwrap_or_else(unix_time),
            expire_seconds: self.expire_seconds,
            timeout_seconds: self.timeout_seconds,
            user_data: &self.user_data,
        };
        Ok(generate_connect_token(&params, &mut os_random())?.write()?)
    }
}

fn parse_all<A: ToAddress>(
    addresses: impl IntoIterator<Item = A>,
    error: impl Fn(usize, AddressParseError) -> TokenBuildError,
) -> Result<Vec<SocketAddr>, TokenBuildError> {
    addresses
        .into_iter()
        .enumerate()
        .map(|(i, a)| a.to_address().map_err(|e| error(i, e)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use netcode_proto::{ConnectToken, PrivateConnectToken};

    #[test]
    fn generated_token_reads_back_with_fresh_keys() {
        let key = Key::from_bytes([9; 32]);
        let addresses: [SocketAddr; 1] = ["127.0.0.1:40000".parse().unwrap()];
        let builder = ConnectTokenBuilder::new(0x1122_3344_5566_7788, &key, 42)
            .server_addresses(addresses)
            .expire_seconds(30)
            .timeout_seconds(5);
        let a = ConnectToken::read(&builder.generate().unwrap()).unwrap();
        let b = ConnectToken::read(&builder.generate().unwrap()).unwrap();
        assert_eq!(a.expire_timestamp - a.create_timestamp, 30);
        assert_eq!(&a.server_addresses[..], &addresses);
        assert_ne!(a.nonce, b.nonce, "every token gets a fresh nonce");
        assert_ne!(a.client_to_server_key, b.client_to_server_key);
        assert!(
            a.create_timestamp > 1_700_000_000,
            "stamped with the wall clock"
        );
    }

    #[test]
    fn refuses_empty_and_oversized_address_lists() {
        let key = Key::from_bytes([9; 32]);
        let many = vec!["127.0.0.1:1".parse::<SocketAddr>().unwrap(); 33];
        for addresses in [&many[..0], &many[..]] {
            let result = ConnectTokenBuilder::new(1, &key, 1)
                .server_addresses(addresses.iter().copied())
                .generate();
            assert!(
                matches!(result, Err(TokenBuildError::Token(_))),
                "{} addresses: {result:?}",
                addresses.len()
            );
        }
        let result = ConnectTokenBuilder::new(1, &key, 1)
            .server_addresses(many[..32].iter().copied())
            .generate();
        assert!(result.is_ok(), "32 addresses: {result:?}");
    }

    /// Every input the builder takes reaches the token: internal addresses
    /// (sealed in the private part), user data, timeout, a negative expiry
    /// and the second of issue.
    #[test]
    fn builder_seals_internal_addresses_user_data_and_issue_time() {
        let key = Key::from_bytes([9; 32]);
        let public: [SocketAddr; 2] = [
            "203.0.113.7:40000".parse().unwrap(),
            "[2001:db8::7]:40000".parse().unwrap(),
        ];
        let internal: [SocketAddr; 2] = [
            "10.0.0.7:40000".parse().unwrap(),
            "[fd00::7]:40000".parse().unwrap(),
        ];
        let user_data = std::array::from_fn(|i| i as u8);
        let bytes = ConnectTokenBuilder::new(7, &key, 42)
            .server_addresses(public)
            .internal_server_addresses(internal)
            .expire_seconds(-1)
            .timeout_seconds(-1)
            .user_data(&user_data)
            .issued_at(1_234_567)
            .generate()
            .unwrap();
        let token = ConnectToken::read(&bytes).unwrap();
        assert_eq!(&token.server_addresses[..], &public);
        assert_eq!(token.create_timestamp, 1_234_567);
        assert_eq!(token.expire_timestamp, u64::MAX, "never expires");
        assert_eq!(token.timeout_seconds, -1);
        let mut sealed = token.private_data;
        let private = PrivateConnectToken::decrypt(
            &mut sealed,
            token.protocol_id,
            token.expire_timestamp,
            &token.nonce,
            &key,
        )
        .unwrap();
        assert_eq!(&private.server_addresses[..], &internal);
        assert_eq!(private.user_data, user_data);
        assert_eq!(private.client_id, 42);
        assert_eq!(private.timeout_seconds, -1);
    }

    #[test]
    fn builder_takes_address_strings() {
        let key = Key::from_bytes([9; 32]);
        let bytes = ConnectTokenBuilder::new(7, &key, 42)
            .server_addresses(["127.0.0.1:40000", "[::1]:40001"])
            .expire_seconds(45)
            .timeout_seconds(3)
            .generate()
            .unwrap();
        let token = ConnectToken::read(&bytes).unwrap();
        let expected: [SocketAddr; 2] = [
            "127.0.0.1:40000".parse().unwrap(),
            "[::1]:40001".parse().unwrap(),
        ];
        assert_eq!(&token.server_addresses[..], &expected);
        assert_eq!(token.expire_timestamp - token.create_timestamp, 45);
        assert_eq!(token.timeout_seconds, 3);
        assert_eq!(token.protocol_id, 7);
    }

    #[test]
    fn builder_reports_which_address_is_bad() {
        let key = Key::from_bytes([9; 32]);
        let result = ConnectTokenBuilder::new(7, &key, 42)
            .server_addresses(["127.0.0.1:40000", "127.0.0.1:40k"])
            .generate();
        assert_eq!(
            result,
            Err(TokenBuildError::PublicAddress {
                index: 1,
                error: AddressParseError::InvalidPort
            })
        );
        let none: [&str; 0] = [];
        let result = ConnectTokenBuilder::new(7, &key, 42)
            .server_addresses(none)
            .generate();
        assert!(matches!(result, Err(TokenBuildError::Token(_))));
        let result = ConnectTokenBuilder::new(7, &key, 42)
            .server_addresses(["127.0.0.1:1"])
            .internal_server_addresses(["127.0.0.2:1", "127.0.0.3:1"])
            .generate();
        assert!(matches!(result, Err(TokenBuildError::Token(_))));
    }
}

//! What netcode-mio adds to netcode-std's server and client: construction
//! on sockets registered with a mio [`Registry`], readable events, and
//! deregistration. Everything else is the `netcode_std` type's own API.

use std::io;
use std::net::SocketAddr;

use mio::{Registry, Token};
use netcode_std::{ClientConfig, CreateError, Family, ServerConfig, ToAddress};

use crate::socket::{self, RegisteredSocket};
use crate::{Client, Server};

/// A [`Server`] or [`Client`] whose sockets are registered with a mio
/// [`Registry`]: bring it into scope to construct one and hand it its
/// readable events.
///
/// The server or client never blocks and has no thread: the caller's
/// [`mio::Poll`] sleeps for at most its `poll_timeout`, then hands readable
/// events to [`handle_readable`](Self::handle_readable) and calls `update`.
pub trait Registered: Sized {
    /// What the constructor takes besides addresses: [`ServerConfig`] or
    /// [`ClientConfig`].
    type Config;

    /// A stopped server (or disconnected client) on one address, its socket
    /// registered with `registry` for readable events under `token`.
    ///
    /// Sockets are set up as `netcode_std::Server::new` and
    /// `netcode_std::Client::with_config` set them up (a server binds the
    /// unspecified address at the public address's port unless its config
    /// says otherwise; port 0 binds an ephemeral port). A failed
    /// registration is [`CreateError::Register`].
    fn new(
        address: impl ToAddress,
        config: Self::Config,
        registry: &Registry,
        token: Token,
    ) -> Result<Self, CreateError>;

    /// Dual stack: one IPv4 and one IPv6 address (in either order), one
    /// socket for each, registered under `token_v4` and `token_v6` (which
    /// may be the same token).
    fn new_dual(
        address: impl ToAddress,
        address2: impl ToAddress,
        config: Self::Config,
        registry: &Registry,
        token_v4: Token,
        token_v6: Token,
    ) -> Result<Self, CreateError>;

    /// Reads and handles the datagrams waiting on the socket registered
    /// under `token`, at the caller's `time` in seconds (the clock passed
    /// to `update`). Call it for every event the poll reports; returns
    /// whether `token` is one of this server's or client's (for an event of
    /// another source it does nothing and returns false).
    ///
    /// mio's events are edge-triggered: this reads until the socket has no
    /// more, or the per-call limit, after which `poll_timeout` is zero
    /// until the next `update` reads the rest. A client reads only the
    /// socket of its server's family, as in the reference; the other one's
    /// events are acknowledged and ignored.
    fn handle_readable(&mut self, token: Token, time: f64) -> bool;

    /// Stops `registry` from reporting these sockets. A server still
    /// sends, and `update` still reads its sockets. Dropping the server or
    /// client closes them, which deregisters them too.
    fn deregister(&mut self, registry: &Registry) -> io::Result<()>;
}

/// The families of `sockets` whose token is `token`.
fn families_of(
    token: Token,
    socket: impl Fn(Family) -> Option<Token>,
) -> impl Iterator<Item = Family> {
    [Family::V4, Family::V6]
        .into_iter()
        .filter(move |f| socket(*f) == Some(token))
}

/// The constructors of [`Registered`], the same for both types: the host's
/// `bind_with` with the sockets adopted into the registry.
macro_rules! registered_constructors {
    ($config:ty) => {
        type Config = $config;

        fn new(
            address: impl ToAddress,
            config: $config,
            registry: &Registry,
            token: Token,
        ) -> Result<Self, CreateError> {
            let adopt = socket::adopt(registry, token, token);
            Self::bind_with(address, None::<SocketAddr>, config, adopt)
        }

        fn new_dual(
            address: impl ToAddress,
            address2: impl ToAddress,
            config: $config,
            registry: &Registry,
            token_v4: Token,
            token_v6: Token,
        ) -> Result<Self, CreateError> {
            let adopt = socket::adopt(registry, token_v4, token_v6);
            Self::bind_with(address, Some(address2), config, adopt)
        }

        fn deregister(&mut self, registry: &Registry) -> io::Result<()> {
            socket::deregister(registry, self.sockets_mut())
        }
    };
}

impl Registered for Server {
    registered_constructors!(ServerConfig);

    fn handle_readable(&mut self, token: Token, time: f64) -> bool {
        let families: heapless::Vec<Family, 2> =
            families_of(token, |f| self.socket(f).map(RegisteredSocket::token)).collect();
        for family in &families {
            self.drain_socket(time, *family);
        }
        !families.is_empty()
    }
}

impl Registered for Client {
    registered_constructors!(ClientConfig);

    fn handle_readable(&mut self, token: Token, time: f64) -> bool {
        let ours = families_of(token, |f| self.socket(f).map(RegisteredSocket::token))
            .next()
            .is_some();
        if ours {
            self.drain_socket(time);
        }
        ours
    }
}

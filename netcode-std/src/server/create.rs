//! Making a server: on sockets it binds itself ([`Server::new`],
//! [`Server::new_dual`]), on a transport's sockets it binds and hands over
//! ([`Server::bind_with`]), or on sockets a transport makes without any
//! bind ([`Server::with_sockets`]); one assembly for all.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};

use netcode_proto::server::{HeapStorage, Server as Core, ServerConfig as CoreConfig};
use netcode_proto::stats::Stats;

use super::history::HistoryFile;
use super::io::ServerIo;
use super::{BindMode, MIN_TABLE_SLOTS, SERVER_POOL_LIMIT, Server, ServerConfig};
use crate::address::ToAddress;
use crate::clock::Clock;
use crate::error::{CreateError, Family};
use crate::link::{Inbox, Link, Outbox};
use crate::random::os_random;
use crate::transport::{self, BATCH_DATAGRAMS, Socket, SocketOptions, Sockets};

impl Server<UdpSocket> {
    /// A stopped server on one public address, for example
    /// `"127.0.0.1:40000"` or `"[::1]:40000"`: the address clients reach
    /// it at, which connect tokens list. The unspecified address
    /// (`0.0.0.0`, `::`) is no such address and is refused
    /// ([`CreateError::UnspecifiedPublicAddress`]).
    ///
    /// As in the reference, the socket binds the unspecified address of the
    /// address's family (`0.0.0.0` or `::`) at its port, and the address
    /// itself is what connect tokens must list; [`BindMode::Exact`] in the
    /// config binds the address itself instead. Port 0 binds an ephemeral
    /// port, which then becomes the public address's port (see
    /// [`public_address`](Self::public_address)).
    pub fn new(address: impl ToAddress, config: ServerConfig) -> Result<Self, CreateError> {
        Self::bind_with(address, None::<SocketAddr>, config, transport::keep_std)
    }

    /// A stopped dual-stack server: one IPv4 and one IPv6 public address
    /// (in either order), one socket for each (the IPv6 one `IPV6_V6ONLY`).
    /// Tokens may list either address; each client is answered from the
    /// socket of its own family.
    pub fn new_dual(
        address: impl ToAddress,
        address2: impl ToAddress,
        config: ServerConfig,
    ) -> Result<Self, CreateError> {
        Self::bind_with(address, Some(address2), config, transport::keep_std)
    }
}

impl<S: Socket> Server<S> {
    /// A stopped server on the public address `address` (and, for dual
    /// stack, `address2`, of the other family), with its sockets created
    /// and bound as [`Server::new`] and [`Server::new_dual`] do and then
    /// handed to `adopt` to become the transport's sockets (see
    /// [`transport`](crate::transport)). An error from `adopt` is
    /// [`CreateError::Register`].
    pub fn bind_with<A: ToAddress, B: ToAddress>(
        address: A,
        address2: Option<B>,
        config: ServerConfig,
        adopt: impl FnMut(Family, UdpSocket) -> io::Result<S>,
    ) -> Result<Self, CreateError> {
        let (first, second) = public_addresses(address, address2, &config)?;
        let options = SocketOptions {
            buffer_bytes: config.socket_buffer_bytes,
            packet_tagging: config.packet_tagging,
        };
        let bind = |a: SocketAddr| match config.bind_mode {
            BindMode::Unspecified => unspecified(a),
            BindMode::Exact => a,
        };
        let sockets = Sockets::bind(bind(first), second.map(bind), &options, adopt)?;
        Self::assemble(first, second, config, sockets)
    }

    /// A stopped server on the public address `address` (and, for dual
    /// stack, `address2`, of the other family) whose sockets `make`
    /// returns, called with each address's family and the address itself,
    /// and nothing bound: for transports whose sockets are not the
    /// system's (a relay, a platform's peer-to-peer sockets, the C
    /// library's send and receive callbacks), whose addresses need not be
    /// local. Each socket's local address, and so [`local_addr`](Self::local_addr)
    /// and [`port`](Self::port), is the address it was made for; the
    /// config's socket options and bind mode do not apply. An error from
    /// `make` is [`CreateError::CreateSocket`]. The public addresses are
    /// checked as by [`Server::new`].
    pub fn with_sockets<A: ToAddress, B: ToAddress>(
        address: A,
        address2: Option<B>,
        config: ServerConfig,
        make: impl FnMut(Family, SocketAddr) -> io::Result<S>,
    ) -> Result<Self, CreateError> {
        let (first, second) = public_addresses(address, address2, &config)?;
        let sockets = Sockets::adopt(first, second, make)?;
        Self::assemble(first, second, config, sockets)
    }

    /// A stopped server with public addresses `first` (and `second`) on
    /// `sockets`; a port 0 in a public address becomes its socket's port.
    fn assemble(
        first: SocketAddr,
        second: Option<SocketAddr>,
        config: ServerConfig,
        sockets: Sockets<S>,
    ) -> Result<Self, CreateError> {
        let bound_port = |a: SocketAddr| {
            let port = sockets.local_addr(Family::of(&a)).map_or(0, |l| l.port());
            SocketAddr::new(a.ip(), port)
        };
        let mut core_config = CoreConfig::new(
            config.protocol_id,
            config.private_key.clone(),
            bound_port(first),
        );
        core_config.secondary_address = second.map(bound_port);
        core_config.max_connect_token_lifetime = config.max_connect_token_lifetime;
        let core = Core::new(core_config.clone(), HeapStorage::new(MIN_TABLE_SLOTS))
            .map_err(|_| CreateError::AllocateServer)?;
        let history = config
            .token_history_file
            .as_deref()
            .map(HistoryFile::open)
            .transpose()?;
        let link = Link::new(sockets, Outbox::new(BATCH_DATAGRAMS));
        Ok(Self {
            core,
            core_config,
            io: ServerIo::new(link, history, SERVER_POOL_LIMIT),
            inbox: Inbox::new(BATCH_DATAGRAMS),
            clock: Clock::new(),
            retired: Stats::new(),
            rng: os_random(),
        })
    }
}

/// Parses a server's public address and optional second one, refusing the
/// unspecified address, which no client can be sent to (unless the config
/// allows it).
fn public_addresses<A: ToAddress, B: ToAddress>(
    address: A,
    address2: Option<B>,
    config: &ServerConfig,
) -> Result<(SocketAddr, Option<SocketAddr>), CreateError> {
    let (first, second) = transport::parse_addresses(address, address2)?;
    if config.allow_unspecified_public_address {
        return Ok((first, second));
    }
    if let Some(address) = std::iter::once(first)
        .chain(second)
        .find(|a| a.ip().is_unspecified())
    {
        return Err(CreateError::UnspecifiedPublicAddress { address });
    }
    Ok((first, second))
}

/// The reference binds the unspecified address of the public address's
/// family, at its port.
fn unspecified(address: SocketAddr) -> SocketAddr {
    let ip = match address {
        SocketAddr::V4(_) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        SocketAddr::V6(_) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
    };
    SocketAddr::new(ip, address.port())
}

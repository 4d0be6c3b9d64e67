//! The seam between [`Server`](crate::Server) / [`Client`](crate::Client)
//! and the sockets under them, for transports that wait on sockets their
//! own way.
//!
//! Both types are generic over the [`Socket`] they send and receive
//! through. The default is [`std::net::UdpSocket`], which every plain
//! constructor (`Server::new`, `Client::new_dual`, ...) uses, so code that
//! never names the parameter never sees it. A transport with its own
//! sockets (`netcode-mio` registers them with a `mio::Registry`) builds a
//! server or client with [`Server::bind_with`](crate::Server::bind_with) or
//! [`Client::bind_with`](crate::Client::bind_with):
//!
//! 1. the addresses are parsed and the sockets created, configured and
//!    bound exactly as for `std` (buffer sizes halved on rejection down to
//!    256 KiB, `IPV6_V6ONLY`, packet tagging, non-blocking);
//! 2. each bound socket is handed to the transport's `adopt` function, with
//!    its address family, to be wrapped in the transport's own socket type
//!    (and registered with its event loop); an error there is
//!    [`CreateError::Register`](crate::CreateError::Register).
//!
//! Everything after that is the same code for every transport: the
//! protocol core, the clock, the payload queues and their buffer pool, the
//! event queue and the counters. The transport then says when a socket is
//! readable ([`Server::drain_socket`](crate::Server::drain_socket),
//! [`Client::drain_socket`](crate::Client::drain_socket)) and asks how long
//! it may sleep ([`Server::poll_timeout`](crate::Server::poll_timeout),
//! [`Client::poll_timeout`](crate::Client::poll_timeout)); the sockets stay
//! reachable through `socket` / `socket_mut` for what only the transport
//! knows how to do, such as deregistering them.
//!
//! ```
//! use std::io;
//! use std::net::{SocketAddr, UdpSocket};
//! use netcode_std::transport::Socket;
//! use netcode_std::{Family, Server, ServerConfig, proto::Key};
//!
//! /// A socket that counts what it sends.
//! #[derive(Debug)]
//! struct Counted {
//!     socket: UdpSocket,
//!     sent: std::cell::Cell<u64>,
//! }
//!
//! impl Socket for Counted {
//!     fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<usize> {
//!         self.sent.set(self.sent.get() + 1);
//!         self.socket.send_to(datagram, to)
//!     }
//!     fn recv_from(&self, buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
//!         self.socket.recv_from(buffer)
//!     }
//! }
//!
//! let config = ServerConfig::new(1, Key::from_bytes([3; 32]));
//! let adopt = |_family: Family, socket: UdpSocket| {
//!     Ok(Counted { socket, sent: Default::default() })
//! };
//! let mut server = Server::bind_with("127.0.0.1:0", None::<&str>, config, adopt)?;
//! server.start(4)?;
//! assert_eq!(server.socket(Family::V4).map(|s| s.sent.get()), Some(0));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::io;
use std::net::{SocketAddr, UdpSocket};

/// A non-blocking datagram socket a [`Server`](crate::Server) or
/// [`Client`](crate::Client) sends and receives through.
///
/// Implementations forward to a UDP socket that was created by
/// `bind_with` (see the [module documentation](self)), so it is already
/// bound, configured and non-blocking.
pub trait Socket: fmt::Debug {
    /// Sends one datagram to `to` without blocking. An error is counted
    /// (`send_errors`) and the datagram is lost, as UDP allows.
    fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<usize>;

    /// Reads one datagram into `buffer` without blocking: its length and
    /// sender, or [`io::ErrorKind::WouldBlock`] when none is waiting.
    fn recv_from(&self, buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)>;
}

impl Socket for UdpSocket {
    fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<usize> {
        UdpSocket::send_to(self, datagram, to)
    }

    fn recv_from(&self, buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        UdpSocket::recv_from(self, buffer)
    }
}

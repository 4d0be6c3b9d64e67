//! Everything between [`Server`](crate::Server) / [`Client`](crate::Client)
//! and the sockets under them: the [`Socket`] seam, the sockets the host
//! creates, and its batched datagram I/O.
//!
//! The files, by concern:
//!
//! * this file: the [`Socket`] trait, the default socket
//!   ([`std::net::UdpSocket`]) and what a batch is made of;
//! * `udp.rs`: creating and binding one UDP socket as the C reference does
//!   (buffer sizes, `IPV6_V6ONLY`, packet tagging, non-blocking), and the
//!   options a client or server sets on its sockets;
//! * `sockets.rs`: a client's or server's set of sockets, one per address
//!   family plus a server's relay, and the path a datagram takes;
//! * `datagrams.rs` (with `linux.rs`, the `recvmmsg` / `sendmmsg` calls):
//!   [`send_batch`] and [`recv_batch`], the one place that does datagram
//!   I/O;
//! * `wait.rs`: the blocking wait of the `std` client and server until a
//!   socket is readable;
//! * `relay.rs`: virtual peers, which reach a server through a relay
//!   rather than its UDP sockets;
//! * `memory` (feature `sim`): an in-memory network behind the seam.
//!
//! ## The seam
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
//! A transport whose sockets are not the system's (a relay, a platform's
//! peer-to-peer sockets, a C program's send and receive callbacks) builds
//! with [`Server::with_sockets`](crate::Server::with_sockets) or
//! [`Client::with_sockets`](crate::Client::with_sockets) instead: nothing
//! is created or bound; its `make` function returns a socket for each
//! address, whose local address is that address.
//!
//! Everything after that is the same code for every transport: the
//! protocol core, the clock, the payload queues and their buffer pool, the
//! event queue, the batches of datagrams and the counters. The transport
//! then says when a socket is readable
//! ([`Server::drain_socket`](crate::Server::drain_socket),
//! [`Client::drain_socket`](crate::Client::drain_socket)) and asks how long
//! it may sleep ([`Server::poll_timeout`](crate::Server::poll_timeout),
//! [`Client::poll_timeout`](crate::Client::poll_timeout)); the sockets stay
//! reachable through `socket` / `sockets_mut` for what only the transport
//! knows how to do, such as deregistering them.
//!
//! ## Batches, in one place
//!
//! The host reads datagrams in batches of up to [`BATCH_DATAGRAMS`] and
//! sends the datagrams one call produces (or one
//! [`Server::batch`](crate::Server::batch) scope) together, through
//! [`recv_batch`] and [`send_batch`]: the one place that does datagram I/O,
//! on any [`Socket`]. Where the platform batches (Linux and Android) and
//! the socket lends its descriptor ([`Socket::descriptor`]), a batch is one
//! `recvmmsg` / `sendmmsg` system call; otherwise, and if the kernel
//! refuses those calls (`ENOSYS`, as under some sandboxes, after which the
//! process uses the fallback for good), one `recv_from` / `send_to` per
//! datagram. A socket type therefore supplies its own single-datagram
//! calls, its descriptor, and its runtime's readiness ([`Socket::io`]:
//! tokio's socket runs each batch inside `try_io`), and nothing more.
//!
//! ```
//! use std::io;
//! use std::net::{SocketAddr, UdpSocket};
//! use netcode_std::transport::Socket;
//! use netcode_std::{Family, Server, ServerConfig, proto::Key};
//!
//! /// A socket that counts the datagrams it sends, one per call.
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
//! server.start_nowait(4)?;
//! assert_eq!(server.socket(Family::V4).map(|s| s.sent.get()), Some(0));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod datagrams;
#[cfg(any(target_os = "linux", target_os = "android"))]
mod linux;
#[cfg(feature = "sim")]
pub mod memory;
mod relay;
mod sockets;
pub(crate) mod udp;
mod wait;

use std::fmt;
use std::io;
use std::net::{SocketAddr, UdpSocket};

use netcode_proto::constants::MAX_PACKET_BYTES;

pub(crate) use datagrams::{passes_over, sends_batches};
pub use datagrams::{recv_batch, send_batch};
pub use relay::{VIRTUAL_PEERS, is_virtual, virtual_address};
pub(crate) use sockets::{Path, Sockets};
pub(crate) use udp::{SocketOptions, keep_std, parse_addresses};
pub(crate) use wait::wait;

/// The most datagrams the host reads or sends in one batch (one system
/// call where the platform batches). Larger batches measured no gain.
pub const BATCH_DATAGRAMS: usize = 32;

/// A receive buffer: room for the largest datagram netcode sends or reads.
/// A longer datagram is truncated to this, and then dropped by the protocol
/// as malformed.
pub type DatagramBuffer = [u8; MAX_PACKET_BYTES];

/// One datagram to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transmit<'a> {
    /// Where it goes.
    pub to: SocketAddr,
    /// Its bytes.
    pub datagram: &'a [u8],
}

/// Where one received datagram came from and how long it is; the bytes are
/// in the buffer of the same position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Received {
    /// Its length in bytes (at most the buffer's).
    pub len: usize,
    /// Its sender.
    pub from: SocketAddr,
}

impl Default for Received {
    fn default() -> Self {
        Self {
            len: 0,
            from: SocketAddr::from(([0, 0, 0, 0], 0)),
        }
    }
}

/// Which way a batch goes, for [`Socket::io`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Datagrams leave.
    Send,
    /// Datagrams are read.
    Receive,
}

/// A non-blocking datagram socket a [`Server`](crate::Server) or
/// [`Client`](crate::Client) sends and receives through: the socket's own
/// single-datagram calls, and optionally its descriptor and its runtime's
/// readiness. The batching is the host's ([`send_batch`],
/// [`recv_batch`]).
///
/// Implementations wrap a UDP socket that was created by `bind_with` (see
/// the [module documentation](self)), so it is already bound, configured
/// and non-blocking; or stand for one, as the in-memory transport's
/// sockets do (`memory`, feature `sim`).
pub trait Socket: fmt::Debug {
    /// Sends one datagram to `to` without blocking. An error is counted
    /// (`send_errors`) and the datagram is lost, as UDP allows.
    fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<usize>;

    /// Reads one datagram into `buffer` without blocking: its length and
    /// sender, or [`io::ErrorKind::WouldBlock`] when none is waiting.
    fn recv_from(&self, buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)>;

    /// The socket's descriptor, lent for the host's batched system calls
    /// where the platform has them (Linux and Android: `recvmmsg` /
    /// `sendmmsg`). `None`, the default, sends and reads one datagram per
    /// call with [`send_to`](Self::send_to) and
    /// [`recv_from`](Self::recv_from).
    #[cfg(unix)]
    fn descriptor(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        None
    }

    /// Runs `batch`, one batched read or send of the host's on this socket,
    /// the way the socket's runtime needs, and returns what it returned.
    /// The default runs it. An event loop that tracks readiness runs it
    /// where a [`io::ErrorKind::WouldBlock`] clears the readiness it saw
    /// (tokio's `try_io`): the host reports a read that left the socket
    /// empty as `WouldBlock` to `batch`'s caller here, whatever it read.
    fn io(
        &self,
        direction: Direction,
        batch: &mut dyn FnMut() -> io::Result<usize>,
    ) -> io::Result<usize> {
        let _ = direction;
        batch()
    }
}

/// The default socket of [`Server`](crate::Server) and
/// [`Client`](crate::Client), and of every plain constructor
/// (`Server::new`, `Client::new_dual`, ...): on Linux and Android it reads
/// and sends in batches, one `recvmmsg` / `sendmmsg` per
/// [`BATCH_DATAGRAMS`]; elsewhere one datagram per call.
impl Socket for UdpSocket {
    fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<usize> {
        UdpSocket::send_to(self, datagram, to)
    }

    fn recv_from(&self, buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        UdpSocket::recv_from(self, buffer)
    }

    #[cfg(unix)]
    fn descriptor(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        Some(std::os::fd::AsFd::as_fd(self))
    }
}

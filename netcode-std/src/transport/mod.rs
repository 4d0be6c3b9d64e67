//! The seam between [`Server`](crate::Server) / [`Client`](crate::Client)
//! and the sockets under them.
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
//! event queue, the batches of datagrams and the counters. The transport
//! then says when a socket is readable
//! ([`Server::drain_socket`](crate::Server::drain_socket),
//! [`Client::drain_socket`](crate::Client::drain_socket)) and asks how long
//! it may sleep ([`Server::poll_timeout`](crate::Server::poll_timeout),
//! [`Client::poll_timeout`](crate::Client::poll_timeout)); the sockets stay
//! reachable through `socket` / `sockets_mut` for what only the transport
//! knows how to do, such as deregistering them.
//!
//! ## Batches
//!
//! The host reads datagrams in batches of up to [`BATCH_DATAGRAMS`] and
//! sends the datagrams one call produces (or one
//! [`Server::batch`](crate::Server::batch) scope) together, through
//! [`Socket::recv_batch`] and [`Socket::send_batch`]. Their default
//! implementations loop over `recv_from` and `send_to`, so a custom socket
//! only writes those two. On Linux and Android, [`StdSocket`] (and
//! `netcode-mio`'s socket) override them with one `recvmmsg` / `sendmmsg`
//! system call per batch ([`linux`]); if the kernel refuses those calls
//! (`ENOSYS`, as under some sandboxes), the process falls back to one call
//! per datagram for good.
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

#[cfg(any(target_os = "linux", target_os = "android"))]
pub mod linux;
pub mod memory;

use std::fmt;
use std::io;
use std::net::{SocketAddr, UdpSocket};

use netcode_proto::constants::MAX_PACKET_BYTES;

use crate::error::Family;

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

/// A non-blocking datagram socket a [`Server`](crate::Server) or
/// [`Client`](crate::Client) sends and receives through.
///
/// Implementations forward to a UDP socket that was created by
/// `bind_with` (see the [module documentation](self)), so it is already
/// bound, configured and non-blocking. Only [`send_to`](Self::send_to)
/// and [`recv_from`](Self::recv_from) are required.
pub trait Socket: fmt::Debug {
    /// Sends one datagram to `to` without blocking. An error is counted
    /// (`send_errors`) and the datagram is lost, as UDP allows.
    fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<usize>;

    /// Reads one datagram into `buffer` without blocking: its length and
    /// sender, or [`io::ErrorKind::WouldBlock`] when none is waiting.
    fn recv_from(&self, buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)>;

    /// Sends a leading run of `datagrams` without blocking and returns how
    /// many left (at least one), or the error of the first, which is then
    /// not sent. The host calls it again for the rest; a datagram whose
    /// send fails is counted and skipped.
    ///
    /// The default sends one at a time with [`send_to`](Self::send_to).
    fn send_batch(&self, datagrams: &[Transmit<'_>]) -> io::Result<usize> {
        send_each(self, datagrams)
    }

    /// Reads up to `min(buffers.len(), received.len())` waiting datagrams
    /// without blocking, the `i`th into `buffers[i]` with its length and
    /// sender in `received[i]`, and returns how many (at least one), or the
    /// error of the first read: [`io::ErrorKind::WouldBlock`] when none is
    /// waiting. Fewer than asked means the socket had no more waiting.
    ///
    /// The default reads one at a time with [`recv_from`](Self::recv_from).
    fn recv_batch(
        &self,
        buffers: &mut [DatagramBuffer],
        received: &mut [Received],
    ) -> io::Result<usize> {
        recv_each(self, buffers, received)
    }
}

/// [`Socket::send_batch`] one datagram at a time.
fn send_each<S: Socket + ?Sized>(socket: &S, datagrams: &[Transmit<'_>]) -> io::Result<usize> {
    for (i, t) in datagrams.iter().enumerate() {
        if let Err(e) = socket.send_to(t.datagram, t.to) {
            return if i == 0 { Err(e) } else { Ok(i) };
        }
    }
    Ok(datagrams.len())
}

/// [`Socket::recv_batch`] one datagram at a time. An error after the first
/// datagram ends the batch; the next call meets the socket's state afresh.
fn recv_each<S: Socket + ?Sized>(
    socket: &S,
    buffers: &mut [DatagramBuffer],
    received: &mut [Received],
) -> io::Result<usize> {
    let mut count = 0;
    for (buffer, meta) in buffers.iter_mut().zip(received.iter_mut()) {
        match socket.recv_from(buffer) {
            Ok((len, from)) => {
                *meta = Received { len, from };
                count += 1;
            }
            Err(e) if count == 0 => return Err(e),
            Err(_) => break,
        }
    }
    Ok(count)
}

/// A plain `std` socket sends and receives one datagram per call: use
/// [`StdSocket`] (the default socket of [`Server`](crate::Server) and
/// [`Client`](crate::Client)) for batches.
impl Socket for UdpSocket {
    fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<usize> {
        UdpSocket::send_to(self, datagram, to)
    }

    fn recv_from(&self, buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        UdpSocket::recv_from(self, buffer)
    }
}

/// A [`std::net::UdpSocket`] that knows its address family: the socket of
/// `Server::new`, `Client::new` and their siblings. On Linux and Android it
/// reads and sends in batches, one `recvmmsg` / `sendmmsg` per
/// [`BATCH_DATAGRAMS`]; elsewhere one datagram per call. It dereferences to
/// the `std` socket for its address and options.
#[derive(Debug)]
pub struct StdSocket {
    socket: UdpSocket,
    family: Family,
}

impl StdSocket {
    /// Wraps a bound, non-blocking socket of address family `family`.
    pub fn new(family: Family, socket: UdpSocket) -> Self {
        Self { socket, family }
    }

    /// Its address family.
    pub fn family(&self) -> Family {
        self.family
    }

    /// The `std` socket inside.
    pub fn into_inner(self) -> UdpSocket {
        self.socket
    }
}

impl core::ops::Deref for StdSocket {
    type Target = UdpSocket;

    fn deref(&self) -> &UdpSocket {
        &self.socket
    }
}

#[cfg(unix)]
impl std::os::fd::AsFd for StdSocket {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.socket.as_fd()
    }
}

impl Socket for StdSocket {
    fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<usize> {
        self.socket.send_to(datagram, to)
    }

    fn recv_from(&self, buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.socket.recv_from(buffer)
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn send_batch(&self, datagrams: &[Transmit<'_>]) -> io::Result<usize> {
        linux::send_batch(self, datagrams)
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn recv_batch(
        &self,
        buffers: &mut [DatagramBuffer],
        received: &mut [Received],
    ) -> io::Result<usize> {
        linux::recv_batch(self, self.family, buffers, received)
    }
}

//! A tokio UDP socket registered with the runtime's reactor: the [`Socket`]
//! the server and client run on, and how netcode-std's freshly bound
//! sockets become one.
//!
//! The host's socket calls are synchronous and non-blocking; tokio's are
//! too when made through `try_io`, which also keeps the reactor's readiness
//! flags right: a read that finds the socket empty clears the readable
//! flag, so the driver sleeps until the reactor sees new datagrams instead
//! of waking at once.

use std::io;
use std::net::SocketAddr;

use netcode_std::Family;
use netcode_std::transport::{Direction, Socket};
use tokio::io::Interest;
use tokio::net::UdpSocket;

/// One of a [`Server`](crate::Server)'s or [`Client`](crate::Client)'s
/// sockets: a [`tokio::net::UdpSocket`] registered with the reactor of the
/// runtime it was made in. It lends the host its descriptor, so on Linux
/// and Android the host reads and sends in batches (one `recvmmsg` /
/// `sendmmsg` per 32 datagrams), and runs each batch inside tokio's
/// `try_io`, which keeps the reactor's readiness right.
#[derive(Debug)]
pub struct TokioSocket {
    socket: UdpSocket,
    family: Family,
}

impl TokioSocket {
    /// Its address family.
    pub fn family(&self) -> Family {
        self.family
    }

    /// The tokio socket, for its address and options. Reading from it
    /// directly steals datagrams from the server or client.
    pub fn get_ref(&self) -> &UdpSocket {
        &self.socket
    }

    /// Sends through `send` at once, whatever the reactor knows. Through
    /// `try_io` when the reactor has seen the socket writable, so that a
    /// full send buffer clears that flag; directly when it has not yet
    /// reported the socket at all (as just after registration), since UDP
    /// sends are never waited for and a datagram refused unseen would be
    /// lost for nothing.
    fn send_now(&self, send: &mut dyn FnMut() -> io::Result<usize>) -> io::Result<usize> {
        let mut tried = false;
        let result = self.socket.try_io(Interest::WRITABLE, || {
            tried = true;
            send()
        });
        match result {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock && !tried => send(),
            result => result,
        }
    }
}

impl Socket for TokioSocket {
    /// A plain non-blocking send: the host runs it inside [`io`](Self::io).
    fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<usize> {
        let to = socket2::SockAddr::from(to);
        socket2::SockRef::from(&self.socket).send_to(datagram, &to)
    }

    /// Reads only what the reactor has seen arrive: until it reports the
    /// socket readable this is [`io::ErrorKind::WouldBlock`] without a
    /// system call.
    fn recv_from(&self, buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.socket.try_recv_from(buffer)
    }

    #[cfg(unix)]
    fn descriptor(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        Some(std::os::fd::AsFd::as_fd(&self.socket))
    }

    /// Reads inside `try_io(READABLE)`: a read that leaves the socket empty
    /// (the host says so with `WouldBlock`) clears the readable flag, so the
    /// driver sleeps until the reactor sees new datagrams rather than waking
    /// once more for a read that finds nothing. Sends go inside
    /// `try_io(WRITABLE)` once the reactor has seen the socket writable,
    /// and straight out before that (a datagram refused unseen would be
    /// lost for nothing).
    fn io(
        &self,
        direction: Direction,
        batch: &mut dyn FnMut() -> io::Result<usize>,
    ) -> io::Result<usize> {
        match direction {
            Direction::Receive => self.socket.try_io(Interest::READABLE, batch),
            Direction::Send => self.send_now(batch),
        }
    }
}

/// The `adopt` function for `bind_with`: takes each socket netcode-std
/// created (bound, configured and non-blocking) into the current tokio
/// runtime's reactor. Outside a runtime that is an error, not a panic.
pub(crate) fn adopt(family: Family, socket: std::net::UdpSocket) -> io::Result<TokioSocket> {
    tokio::runtime::Handle::try_current().map_err(io::Error::other)?;
    Ok(TokioSocket {
        socket: UdpSocket::from_std(socket)?,
        family,
    })
}

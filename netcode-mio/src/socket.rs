//! A mio UDP socket registered with the caller's registry under the
//! caller's token: the [`Socket`] the server and client run on.

use std::io;
use std::net::SocketAddr;

use mio::net::UdpSocket;
use mio::{Interest, Registry, Token};
use netcode_std::Family;
use netcode_std::transport::Socket;

/// One of a [`Server`](crate::Server)'s or [`Client`](crate::Client)'s
/// sockets: a [`mio::net::UdpSocket`] registered for readable events under
/// the caller's [`Token`]. It lends the host its descriptor, so on Linux
/// and Android the host reads and sends in batches (one `recvmmsg` /
/// `sendmmsg` per 32 datagrams), as on `std`'s sockets.
#[derive(Debug)]
pub struct RegisteredSocket {
    socket: UdpSocket,
    token: Token,
    family: Family,
}

impl RegisteredSocket {
    /// The token its readable events carry.
    pub fn token(&self) -> Token {
        self.token
    }

    /// Its address family.
    pub fn family(&self) -> Family {
        self.family
    }

    /// The mio socket, for its address and options. Reading from it
    /// directly steals datagrams from the server or client.
    pub fn get_ref(&self) -> &UdpSocket {
        &self.socket
    }
}

/// Readiness is mio's edge-triggered kind: the host drains a readable
/// socket until it would block, so nothing wraps its calls.
impl Socket for RegisteredSocket {
    fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<usize> {
        self.socket.send_to(datagram, to)
    }

    fn recv_from(&self, buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.socket.recv_from(buffer)
    }

    #[cfg(unix)]
    fn descriptor(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        Some(std::os::fd::AsFd::as_fd(&self.socket))
    }
}

/// The `adopt` function for `bind_with`: takes each socket netcode-std
/// created (bound, configured and non-blocking) into mio and registers it
/// for readable events with the token of its family.
pub(crate) fn adopt(
    registry: &Registry,
    token_v4: Token,
    token_v6: Token,
) -> impl FnMut(Family, std::net::UdpSocket) -> io::Result<RegisteredSocket> + '_ {
    move |family, socket| {
        let token = match family {
            Family::V4 => token_v4,
            Family::V6 => token_v6,
        };
        let mut socket = UdpSocket::from_std(socket);
        registry.register(&mut socket, token, Interest::READABLE)?;
        Ok(RegisteredSocket {
            socket,
            token,
            family,
        })
    }
}

/// Stops `registry` from reporting the events of a server's or client's
/// `sockets`.
pub(crate) fn deregister<'a>(
    registry: &Registry,
    sockets: impl Iterator<Item = &'a mut RegisteredSocket>,
) -> io::Result<()> {
    for socket in sockets {
        registry.deregister(&mut socket.socket)?;
    }
    Ok(())
}

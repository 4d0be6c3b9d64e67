//! The sockets under a C client or server: a UDP socket, or, in override
//! mode (`override_send_and_receive`), the config's send and receive
//! callbacks ([`CallbackSocket`]), with no socket at all.

use std::ffi::{c_int, c_void};
use std::io;
use std::net::{SocketAddr, UdpSocket};

use netcode_std::transport::Socket;

use crate::abi::{ReceivePacketOverride, SendPacketOverride, netcode_address_t};
use crate::address::{from_socket_addr, to_socket_addr};
use crate::logging;

/// Datagrams the receive callback may return that are not datagrams (no
/// valid sender, a length out of range) before a read gives up until the
/// next update.
const MAX_SKIPPED_PER_READ: usize = 64;

/// A client's or server's socket.
#[derive(Debug)]
pub(crate) enum HostSocket {
    /// A UDP socket (batched system calls where the platform has them).
    Udp(UdpSocket),
    /// Override mode: the config's callbacks.
    Callbacks(CallbackSocket),
}

/// Override mode's socket: sends call `send_packet_override(context, to,
/// data, bytes)`; reads call `receive_packet_override(context, from,
/// buffer, max)` until it returns 0.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CallbackSocket {
    /// The config's `callback_context`.
    pub(crate) context: *mut c_void,
    /// The config's send override.
    pub(crate) send: SendPacketOverride,
    /// The config's receive override.
    pub(crate) receive: ReceivePacketOverride,
}

impl Socket for HostSocket {
    fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<usize> {
        match self {
            Self::Udp(socket) => socket.send_to(datagram, to),
            Self::Callbacks(callbacks) => callbacks.send_to(datagram, to),
        }
    }

    fn recv_from(&self, buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        match self {
            Self::Udp(socket) => socket.recv_from(buffer),
            Self::Callbacks(callbacks) => callbacks.recv_from(buffer),
        }
    }

    #[cfg(unix)]
    fn descriptor(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        match self {
            Self::Udp(socket) => Some(std::os::fd::AsFd::as_fd(socket)),
            Self::Callbacks(_) => None,
        }
    }
}

impl CallbackSocket {
    fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<usize> {
        let mut to = from_socket_addr(to);
        let bytes = c_int::try_from(datagram.len()).map_err(|_| io::ErrorKind::InvalidInput)?;
        // SAFETY: the config's send override, which C promises takes its
        // context, an address to read, and `bytes` bytes to read; all three
        // are ours and stay valid for the call. It runs while a call holds
        // the object's state; a call it makes into the same object is
        // refused (`Object::enter`), so nothing aliases that borrow.
        unsafe { (self.send)(self.context, &mut to, datagram.as_ptr(), bytes) };
        Ok(datagram.len())
    }

    fn recv_from(&self, buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        let max = c_int::try_from(buffer.len()).unwrap_or(c_int::MAX);
        for _ in 0..MAX_SKIPPED_PER_READ {
            let mut from = netcode_address_t::ZERO;
            // SAFETY: the config's receive override, which C promises writes
            // at most `max` (at most `buffer.len()`) bytes into `buffer` and
            // one address into `from`, both ours, valid and writable for the
            // call. It runs while a call holds the object's state; a call it
            // makes into the same object is refused (`Object::enter`), so
            // nothing aliases that borrow.
            let bytes =
                unsafe { (self.receive)(self.context, &mut from, buffer.as_mut_ptr(), max) };
            if bytes <= 0 {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let Ok(len) = usize::try_from(bytes) else {
                continue;
            };
            if len > buffer.len() {
                logging::error(format_args!(
                    "receive_packet_override returned {bytes} bytes, more than the {max} allowed; datagram dropped"
                ));
                continue;
            }
            match to_socket_addr(&from) {
                Some(sender) => return Ok((len, sender)),
                None => logging::error(format_args!(
                    "receive_packet_override returned a datagram with no valid sender address (type {}); dropped",
                    from.type_
                )),
            }
        }
        Err(io::ErrorKind::WouldBlock.into())
    }
}

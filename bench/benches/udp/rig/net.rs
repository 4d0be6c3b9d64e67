//! Sockets and polling of the UDP run: the plain sockets of the renetcode
//! loops and the floor, the two socket types the rows compare (batched and
//! one datagram per call, both on `netcode_std::transport::Socket`), the
//! poll wrapper, and the file-descriptor check for many clients.

use std::io::{self, ErrorKind};
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use netcode_mio::mio::net::UdpSocket;
use netcode_mio::mio::{Events, Interest, Poll, Registry, Token};
use netcode_mio::netcode_std::transport::Socket;

/// Longest a loop sleeps in its poll, so it notices the end of a run.
pub(super) const MAX_WAIT: Duration = Duration::from_millis(1);

/// Socket buffers of the bench's own sockets: what netcode-std and
/// netcode-official ask for.
const SOCKET_BUFFER_BYTES: usize = 4 << 20;

/// File descriptors a run needs beside one per client: the server's socket,
/// the polls, perf's pipe, the standard streams, with room to spare.
const SPARE_DESCRIPTORS: usize = 64;

/// A non-blocking UDP socket bound to `ip` (an ephemeral port) with 4 MiB
/// buffers, registered for readable events under `token`.
pub(super) fn udp_socket(registry: &Registry, token: Token, ip: Ipv4Addr) -> io::Result<UdpSocket> {
    use socket2::{Domain, Protocol, Type};
    let socket = socket2::Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))?;
    socket.set_send_buffer_size(SOCKET_BUFFER_BYTES)?;
    socket.set_recv_buffer_size(SOCKET_BUFFER_BYTES)?;
    socket.set_nonblocking(true)?;
    socket.bind(&SocketAddr::from((ip, 0)).into())?;
    let mut socket = UdpSocket::from_std(socket.into());
    registry.register(&mut socket, token, Interest::READABLE)?;
    Ok(socket)
}

/// Whether a socket read should go on after `error`: ICMP noise reported
/// as a refused or reset connection, or a signal (would-block ends it).
pub(super) fn retry(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        ErrorKind::ConnectionRefused | ErrorKind::ConnectionReset | ErrorKind::Interrupted
    )
}

/// Polls, retrying when a signal interrupts.
pub(super) fn poll(poll: &mut Poll, events: &mut Events, timeout: Duration) -> Result<(), String> {
    match poll.poll(events, Some(timeout)) {
        Err(e) if e.kind() != ErrorKind::Interrupted => Err(format!("poll failed: {e}")),
        _ => Ok(()),
    }
}

/// A registered mio socket that lends the host its descriptor, so the
/// host's batched calls (`transport::send_batch` / `recv_batch`: one
/// `recvmmsg` / `sendmmsg` per 32 datagrams) run on it: the floor's server
/// and the bare clients.
#[derive(Debug)]
pub(super) struct BatchedSocket(pub(super) UdpSocket);

impl Socket for BatchedSocket {
    fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<usize> {
        self.0.send_to(datagram, to)
    }

    fn recv_from(&self, buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.0.recv_from(buffer)
    }

    #[cfg(unix)]
    fn descriptor(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        Some(std::os::fd::AsFd::as_fd(&self.0))
    }
}

/// A registered mio socket with only the two required methods of
/// `transport::Socket` and no descriptor, so the host sends and receives
/// one datagram per system call: the one-per-call row.
#[derive(Debug)]
pub(super) struct PerCallSocket(pub(super) UdpSocket);

impl Socket for PerCallSocket {
    fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<usize> {
        self.0.send_to(datagram, to)
    }

    fn recv_from(&self, buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.0.recv_from(buffer)
    }
}

/// Fails when the process may not open a socket per client (Linux:
/// `/proc/self/limits`; elsewhere unchecked).
pub(super) fn check_descriptors(clients: usize) -> Result<(), String> {
    let Some(limit) = descriptor_limit() else {
        return Ok(());
    };
    let needed = clients + SPARE_DESCRIPTORS;
    if needed > limit {
        return Err(format!(
            "{clients} clients need about {needed} file descriptors, and the limit is {limit} \
             (raise it with `ulimit -n`)"
        ));
    }
    Ok(())
}

/// The soft limit on open files, where the OS says.
fn descriptor_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

//! UDP sockets as the C reference sets them up, and the receive loop's rules.
//!
//! Creation order follows the reference: socket, `IPV6_V6ONLY` for IPv6
//! (dual stack is two sockets), `SO_SNDBUF` then `SO_RCVBUF` (halving on
//! rejection, giving up below 256 KiB), bind, non-blocking, packet tagging.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use socket2::{Domain, Protocol, Socket, Type};

use crate::address::ToAddress;
use crate::error::{CreateError, Family};
use crate::stats::TransportStats;
use crate::transport::Socket as DatagramSocket;

/// The reference's socket send and receive buffer size: 4 MiB each.
pub const DEFAULT_SOCKET_BUFFER_BYTES: usize = 4 * 1024 * 1024;

/// Buffer sizes are halved on rejection until they would drop below this
/// (256 KiB), as in the reference; then socket creation fails.
pub const MIN_SOCKET_BUFFER_BYTES: usize = 256 * 1024;

/// The type-of-service byte the reference writes when packet tagging is on:
/// 46, to `IP_TOS` (IPv4) or `IPV6_TCLASS` (IPv6).
///
/// This is the reference's value, kept for identical behaviour: as a TOS
/// byte, 46 is DSCP 11 with ECN bits `10`. Expedited Forwarding proper (DSCP
/// 46) would be the byte 184 (`46 << 2`). Networks that honour DSCP treat
/// the two differently; most home networks ignore both.
pub const PACKET_TAGGING_TOS: u32 = 46;

/// How a client's or server's sockets are set up.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SocketOptions {
    pub(crate) buffer_bytes: usize,
    pub(crate) packet_tagging: bool,
}

/// Creates one socket as the reference does and binds it to `bind`.
pub(crate) fn create_socket(
    bind: SocketAddr,
    options: &SocketOptions,
) -> Result<UdpSocket, CreateError> {
    let family = Family::of(&bind);
    let create = |source: io::Error| CreateError::CreateSocket { family, source };
    let socket =
        Socket::new(Domain::for_address(bind), Type::DGRAM, Some(Protocol::UDP)).map_err(create)?;
    if family == Family::V6 {
        socket.set_only_v6(true).map_err(create)?;
    }
    set_buffer(options.buffer_bytes, |n| socket.set_send_buffer_size(n)).map_err(create)?;
    set_buffer(options.buffer_bytes, |n| socket.set_recv_buffer_size(n)).map_err(create)?;
    if let Err(source) = socket.bind(&bind.into()) {
        return Err(if source.kind() == io::ErrorKind::AddrInUse {
            CreateError::AddrInUse { address: bind }
        } else {
            CreateError::Bind {
                address: bind,
                source,
            }
        });
    }
    socket.set_nonblocking(true).map_err(create)?;
    if options.packet_tagging {
        tag(&socket, family).map_err(create)?;
    }
    Ok(socket.into())
}

/// Asks for `bytes`, halving on rejection; fails once the size would drop
/// below [`MIN_SOCKET_BUFFER_BYTES`].
fn set_buffer(bytes: usize, mut set: impl FnMut(usize) -> io::Result<()>) -> io::Result<()> {
    let mut size = bytes;
    loop {
        match set(size) {
            Ok(()) => return Ok(()),
            Err(e) => {
                size /= 2;
                if size < MIN_SOCKET_BUFFER_BYTES {
                    return Err(e);
                }
            }
        }
    }
}

#[cfg(any(
    target_os = "android",
    target_os = "dragonfly",
    target_os = "freebsd",
    target_os = "linux",
    target_os = "macos",
    target_os = "netbsd",
    target_os = "openbsd",
    target_os = "illumos",
))]
fn tag(socket: &Socket, family: Family) -> io::Result<()> {
    match family {
        Family::V4 => socket.set_tos_v4(PACKET_TAGGING_TOS),
        Family::V6 => socket.set_tclass_v6(PACKET_TAGGING_TOS),
    }
}

/// Elsewhere (Windows, where the reference uses the QoS2 API and ignores its
/// result) tagging is a no-op.
#[cfg(not(any(
    target_os = "android",
    target_os = "dragonfly",
    target_os = "freebsd",
    target_os = "linux",
    target_os = "macos",
    target_os = "netbsd",
    target_os = "openbsd",
    target_os = "illumos",
)))]
fn tag(_socket: &Socket, _family: Family) -> io::Result<()> {
    Ok(())
}

/// Parses a constructor's address and optional second address, each
/// failure with its own error.
pub(crate) fn parse_addresses<A: ToAddress, B: ToAddress>(
    address: A,
    address2: Option<B>,
) -> Result<(SocketAddr, Option<SocketAddr>), CreateError> {
    let first = address.to_address().map_err(CreateError::ParseAddress)?;
    let second = address2
        .map(|a| a.to_address().map_err(CreateError::ParseAddress2))
        .transpose()?;
    Ok((first, second))
}

/// The `adopt` function of the `std` constructors (see
/// [`transport`](crate::transport)): the socket as it is.
pub(crate) fn keep_std(_: Family, socket: UdpSocket) -> io::Result<UdpSocket> {
    Ok(socket)
}

/// One outcome of a non-blocking receive.
pub(crate) enum Received {
    /// A datagram of this many bytes from this sender.
    Datagram(usize, SocketAddr),
    /// Nothing more to read now.
    Empty,
    /// An error worth skipping (ICMP port unreachable reported on a later
    /// read, an interrupted call): read on.
    Skip,
    /// Another error: stop reading this socket until the next update.
    Stop,
}

/// Reads one datagram without blocking. Never panics.
pub(crate) fn receive<S: DatagramSocket>(socket: &S, buffer: &mut [u8]) -> Received {
    match socket.recv_from(buffer) {
        Ok((n, from)) => Received::Datagram(n, from),
        Err(e) => match e.kind() {
            io::ErrorKind::WouldBlock => Received::Empty,
            io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted => Received::Skip,
            _ => Received::Stop,
        },
    }
}

/// The part of a client's or server's output that [`drain`] needs: its
/// sockets and its counters.
pub(crate) trait SocketIo<S> {
    /// The sockets and the counters, borrowed together.
    fn parts(&mut self) -> (&mut Sockets<S>, &mut TransportStats);
}

/// Reads the socket of `family` into `buffer` until it would block, an
/// error other than ICMP noise stops it, or `limit` datagrams have been
/// read, handing each datagram to `handle` along with `io`. Counts what it
/// reads and skips, and notes a backlog on the socket when the limit
/// stopped it, so that [`Sockets::backlog`] says work is due at once.
pub(crate) fn drain<S: DatagramSocket, Io: SocketIo<S>>(
    io: &mut Io,
    family: Family,
    buffer: &mut [u8],
    limit: usize,
    mut handle: impl FnMut(&mut Io, &mut [u8], SocketAddr),
) {
    let mut left = limit;
    let backlog = loop {
        let (sockets, stats) = io.parts();
        let Some(socket) = sockets.get(family) else {
            return;
        };
        if left == 0 {
            break true;
        }
        left -= 1;
        match receive(socket, buffer) {
            Received::Datagram(n, from) => {
                stats.datagrams_received += 1;
                handle(io, &mut buffer[..n], from);
            }
            Received::Empty => break false,
            Received::Skip => stats.receive_errors += 1,
            Received::Stop => {
                stats.receive_errors += 1;
                break false;
            }
        }
    };
    io.parts().0.set_backlog(family, backlog);
}

/// A bound socket, the address it is bound to, and whether its last drain
/// stopped at the per-call limit with datagrams still waiting.
#[derive(Debug)]
pub(crate) struct Bound<S> {
    pub(crate) socket: S,
    pub(crate) local: SocketAddr,
    backlog: bool,
}

/// A client's or server's sockets: at most one per family.
#[derive(Debug)]
pub(crate) struct Sockets<S> {
    v4: Option<Bound<S>>,
    v6: Option<Bound<S>>,
    /// The family of the first address, whose socket `port` reports.
    primary: Family,
}

/// Why a datagram did not leave.
pub(crate) enum SendFailure {
    /// No socket of the destination's family.
    NoSocket,
    /// The operating system refused it (full buffer, unreachable, ...).
    Os,
}

impl<S: DatagramSocket> Sockets<S> {
    /// Binds one socket to `first` and, for dual stack, one to `second`,
    /// which must be of the other family, and hands each to `adopt` (see
    /// [`transport`](crate::transport)).
    pub(crate) fn bind(
        first: SocketAddr,
        second: Option<SocketAddr>,
        options: &SocketOptions,
        mut adopt: impl FnMut(Family, UdpSocket) -> io::Result<S>,
    ) -> Result<Self, CreateError> {
        if let Some(second) = second
            && Family::of(&second) == Family::of(&first)
        {
            return Err(CreateError::SameFamily(Family::of(&first)));
        }
        let mut sockets = Self {
            v4: None,
            v6: None,
            primary: Family::of(&first),
        };
        for address in std::iter::once(first).chain(second) {
            let family = Family::of(&address);
            let socket = create_socket(address, options)?;
            let local = socket
                .local_addr()
                .map_err(|source| CreateError::CreateSocket { family, source })?;
            let socket =
                adopt(family, socket).map_err(|source| CreateError::Register { family, source })?;
            let bound = Some(Bound {
                socket,
                local,
                backlog: false,
            });
            match family {
                Family::V4 => sockets.v4 = bound,
                Family::V6 => sockets.v6 = bound,
            }
        }
        Ok(sockets)
    }

    /// The socket of `family`, if there is one.
    pub(crate) fn get(&self, family: Family) -> Option<&S> {
        self.bound(family).map(|b| &b.socket)
    }

    fn bound(&self, family: Family) -> Option<&Bound<S>> {
        match family {
            Family::V4 => self.v4.as_ref(),
            Family::V6 => self.v6.as_ref(),
        }
    }

    fn bound_mut(&mut self, family: Family) -> Option<&mut Bound<S>> {
        match family {
            Family::V4 => self.v4.as_mut(),
            Family::V6 => self.v6.as_mut(),
        }
    }

    /// Records whether the last drain of `family`'s socket stopped at the
    /// per-call limit, so that datagrams may still be waiting.
    pub(crate) fn set_backlog(&mut self, family: Family, backlog: bool) {
        if let Some(bound) = self.bound_mut(family) {
            bound.backlog = backlog;
        }
    }

    /// Whether a socket was left with datagrams waiting (see
    /// [`set_backlog`](Self::set_backlog)): then there is work to do now.
    pub(crate) fn backlog(&self) -> bool {
        self.v4.iter().chain(self.v6.iter()).any(|b| b.backlog)
    }

    /// The bound address of the socket of `family`.
    pub(crate) fn local_addr(&self, family: Family) -> Option<SocketAddr> {
        self.bound(family).map(|b| b.local)
    }

    /// The bound address of the first address's socket.
    pub(crate) fn primary_local_addr(&self) -> SocketAddr {
        match self.bound(self.primary) {
            Some(b) => b.local,
            // `bind` always creates the primary socket.
            None => SocketAddr::from(([0, 0, 0, 0], 0)),
        }
    }

    /// Every socket, IPv4 first.
    pub(crate) fn all(&self) -> impl Iterator<Item = &S> {
        self.v4.iter().chain(self.v6.iter()).map(|b| &b.socket)
    }

    /// Every socket, mutably, IPv4 first.
    pub(crate) fn all_mut(&mut self) -> impl Iterator<Item = &mut S> {
        self.v4
            .iter_mut()
            .chain(self.v6.iter_mut())
            .map(|b| &mut b.socket)
    }

    /// Sends through the socket of the destination's family. Errors are
    /// reported for counting only: the protocol treats UDP as lossy.
    pub(crate) fn send(&self, to: SocketAddr, datagram: &[u8]) -> Result<(), SendFailure> {
        let socket = self.get(Family::of(&to)).ok_or(SendFailure::NoSocket)?;
        match socket.send_to(datagram, to) {
            Ok(_) => Ok(()),
            Err(_) => Err(SendFailure::Os),
        }
    }
}

/// Blocks until one of `sockets` has a datagram (or an error) to read, or
/// `timeout` passes; returns whether something is ready.
///
/// One socket: a blocking peek with a read timeout, then (because read
/// timeouts run on the kernel's coarse tick, several milliseconds late) the
/// last [`TIMER_SLACK`] in steps of [`POLL_STEP`], so the wait ends within
/// about a millisecond of `timeout`. Two sockets: std has no portable poll,
/// so both are checked every [`POLL_STEP`]. No socket: a plain sleep.
pub(crate) fn wait<'a>(
    sockets: impl IntoIterator<Item = &'a UdpSocket>,
    timeout: Duration,
) -> bool {
    let end = Instant::now() + timeout;
    let mut sockets = sockets.into_iter();
    let (first, second) = (sockets.next(), sockets.next());
    let watched: &[&UdpSocket] = match (&first, &second) {
        (None, _) => {
            std::thread::sleep(timeout);
            return false;
        }
        (Some(one), None) => {
            if timeout > TIMER_SLACK && block(one, timeout - TIMER_SLACK) {
                return true;
            }
            &[*one]
        }
        (Some(a), Some(b)) => &[*a, *b],
    };
    loop {
        if watched.iter().any(|s| ready(s)) {
            return true;
        }
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        std::thread::sleep(left.min(POLL_STEP));
    }
}

/// How long before the end of a wait the blocking read gives way to
/// polling: more than the kernel tick by which read timeouts run late.
pub(crate) const TIMER_SLACK: Duration = Duration::from_millis(8);

/// The polling step at the end of a wait, and for two sockets.
pub(crate) const POLL_STEP: Duration = Duration::from_millis(1);

/// Whether `socket` has a datagram or an error to read, without blocking.
fn ready(socket: &UdpSocket) -> bool {
    let mut probe = [0u8; 1];
    !matches!(socket.peek_from(&mut probe), Err(ref e) if e.kind() == io::ErrorKind::WouldBlock)
}

/// Blocks on one socket until it is readable or about `timeout` passes.
/// The socket is back in non-blocking mode afterwards (if its mode cannot
/// be changed, this returns at once and the caller polls instead).
fn block(socket: &UdpSocket, timeout: Duration) -> bool {
    if socket.set_read_timeout(Some(timeout)).is_err() || socket.set_nonblocking(false).is_err() {
        return false;
    }
    let mut probe = [0u8; 1];
    let result = socket.peek_from(&mut probe);
    let _ = socket.set_nonblocking(true);
    match result {
        Ok(_) => true,
        Err(e) => !matches!(
            e.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffer_sizes_halve_then_give_up_below_256_kib() {
        let mut asked = Vec::new();
        let result = set_buffer(DEFAULT_SOCKET_BUFFER_BYTES, |n| {
            asked.push(n);
            if n <= 1024 * 1024 {
                Ok(())
            } else {
                Err(io::Error::other("too big"))
            }
        });
        assert!(result.is_ok());
        assert_eq!(asked, [4 << 20, 2 << 20, 1 << 20]);

        asked.clear();
        let result = set_buffer(DEFAULT_SOCKET_BUFFER_BYTES, |n| {
            asked.push(n);
            Err(io::Error::other("never"))
        });
        assert!(result.is_err());
        assert_eq!(asked, [4 << 20, 2 << 20, 1 << 20, 512 << 10, 256 << 10]);
    }

    #[test]
    fn ipv6_sockets_are_v6_only_and_non_blocking() {
        let options = SocketOptions {
            buffer_bytes: DEFAULT_SOCKET_BUFFER_BYTES,
            packet_tagging: true,
        };
        let Ok(socket) = create_socket("[::1]:0".parse().unwrap(), &options) else {
            eprintln!("no IPv6 loopback here; skipped");
            return;
        };
        let socket = Socket::from(socket);
        assert!(socket.only_v6().unwrap());
        assert_eq!(socket.tclass_v6().unwrap(), PACKET_TAGGING_TOS);
        let socket = UdpSocket::from(socket);
        let mut buffer = [0u8; 8];
        assert!(matches!(receive(&socket, &mut buffer), Received::Empty));
    }

    #[test]
    fn ipv4_tagging_writes_the_reference_value() {
        let options = SocketOptions {
            buffer_bytes: DEFAULT_SOCKET_BUFFER_BYTES,
            packet_tagging: true,
        };
        let socket = create_socket("127.0.0.1:0".parse().unwrap(), &options).unwrap();
        let socket = Socket::from(socket);
        assert_eq!(socket.tos_v4().unwrap(), PACKET_TAGGING_TOS);
    }

    #[test]
    fn wait_times_out_then_sees_a_datagram() {
        let options = SocketOptions {
            buffer_bytes: MIN_SOCKET_BUFFER_BYTES,
            packet_tagging: false,
        };
        let socket = create_socket("127.0.0.1:0".parse().unwrap(), &options).unwrap();
        let start = Instant::now();
        assert!(!wait([&socket], Duration::from_millis(20)));
        assert!(start.elapsed() >= Duration::from_millis(15));
        let sender = UdpSocket::bind("127.0.0.1:0").unwrap();
        sender.send_to(b"x", socket.local_addr().unwrap()).unwrap();
        assert!(wait([&socket], Duration::from_secs(5)));
        let mut buffer = [0u8; 8];
        assert!(matches!(
            receive(&socket, &mut buffer),
            Received::Datagram(1, _)
        ));
        assert!(matches!(receive(&socket, &mut buffer), Received::Empty));
    }
}

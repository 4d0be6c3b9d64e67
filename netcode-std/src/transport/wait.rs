//! The blocking wait of the `std` transport: until one of a client's or
//! server's sockets is readable, or a timeout passes.

use std::net::UdpSocket;
use std::time::Duration;

/// Blocks until one of `sockets` has a datagram (or an error) to read, or
/// `timeout` passes; returns whether something is ready. With no socket it
/// sleeps.
///
/// On Unix this is one `poll` on every socket, with the timeout rounded up
/// to the next millisecond so the wait never ends before it.
#[cfg(unix)]
pub(crate) fn wait<'a>(
    sockets: impl IntoIterator<Item = &'a UdpSocket>,
    timeout: Duration,
) -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::AsFd;

    let mut watched: heapless::Vec<PollFd<'_>, 2> = heapless::Vec::new();
    for socket in sockets.into_iter().take(2) {
        let _ = watched.push(PollFd::new(socket.as_fd(), PollFlags::POLLIN));
    }
    if watched.is_empty() {
        std::thread::sleep(timeout);
        return false;
    }
    let millis = timeout.as_nanos().div_ceil(1_000_000);
    let timeout = PollTimeout::try_from(millis).unwrap_or(PollTimeout::MAX);
    // An interrupted or failed poll reports nothing ready; the caller's
    // next update reads the sockets either way.
    matches!(poll(&mut watched, timeout), Ok(n) if n > 0)
}

/// Elsewhere std has no portable way to block on two sockets: one socket
/// is blocked on with a read timeout (then, because read timeouts run on
/// the system's coarse tick, the last [`TIMER_SLACK`] is polled in steps of
/// [`POLL_STEP`]); two are polled every [`POLL_STEP`].
#[cfg(not(unix))]
pub(crate) fn wait<'a>(
    sockets: impl IntoIterator<Item = &'a UdpSocket>,
    timeout: Duration,
) -> bool {
    use std::time::Instant;

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
/// polling: more than the system tick by which read timeouts run late.
#[cfg(not(unix))]
const TIMER_SLACK: Duration = Duration::from_millis(16);

/// The polling step at the end of a wait, and for two sockets.
#[cfg(not(unix))]
const POLL_STEP: Duration = Duration::from_millis(1);

/// Whether `socket` has a datagram or an error to read, without blocking.
#[cfg(not(unix))]
fn ready(socket: &UdpSocket) -> bool {
    let mut probe = [0u8; 1];
    !matches!(socket.peek_from(&mut probe), Err(ref e) if e.kind() == std::io::ErrorKind::WouldBlock)
}

/// Blocks on one socket until it is readable or about `timeout` passes.
/// The socket is back in non-blocking mode afterwards (if its mode cannot
/// be changed, this returns at once and the caller polls instead).
#[cfg(not(unix))]
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
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    fn bound() -> UdpSocket {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket.set_nonblocking(true).unwrap();
        socket
    }

    #[test]
    fn wait_times_out_then_sees_a_datagram() {
        let socket = bound();
        let start = Instant::now();
        assert!(!wait([&socket], Duration::from_millis(20)));
        assert!(start.elapsed() >= Duration::from_millis(20));
        let sender = UdpSocket::bind("127.0.0.1:0").unwrap();
        sender.send_to(b"x", socket.local_addr().unwrap()).unwrap();
        assert!(wait([&socket], Duration::from_secs(5)));
        let mut buffer = [0u8; 8];
        assert_eq!(socket.recv_from(&mut buffer).unwrap().0, 1);
    }

    #[test]
    fn wait_watches_both_sockets() {
        let (a, b) = (bound(), bound());
        let sender = UdpSocket::bind("127.0.0.1:0").unwrap();
        sender.send_to(b"y", b.local_addr().unwrap()).unwrap();
        assert!(wait([&a, &b], Duration::from_secs(5)));
    }
}

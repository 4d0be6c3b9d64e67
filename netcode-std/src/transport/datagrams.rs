//! The host's datagram I/O, in one place: a batch sent or read through any
//! [`Socket`], with one system call per batch where the platform has
//! batched calls and the socket lends its descriptor, one call per datagram
//! otherwise, inside the socket's readiness wrapper ([`Socket::io`]).
//!
//! STANDARD.md: none (UDP itself).

use std::io;

use super::{BATCH_DATAGRAMS, DatagramBuffer, Direction, Received, Socket, Transmit};
use crate::error::Family;

/// Sends a leading run of `datagrams` without blocking and returns how
/// many left (at least one), or the error of the first, which is then not
/// sent; the caller sends the rest with further calls. One `sendmmsg` for
/// up to [`BATCH_DATAGRAMS`] datagrams on Linux and
/// Android when the socket lends its descriptor; one
/// [`Socket::send_to`] per datagram otherwise.
pub fn send_batch<S: Socket + ?Sized>(socket: &S, datagrams: &[Transmit<'_>]) -> io::Result<usize> {
    socket.io(Direction::Send, &mut || send_now(socket, datagrams))
}

/// Reads up to `min(buffers.len(), received.len(), BATCH_DATAGRAMS)`
/// waiting datagrams from
/// `socket`, of address family `family`, without blocking: the `i`th into
/// `buffers[i]` with its length and sender in `received[i]`. Returns how
/// many (at least one), or the error of the first read:
/// [`io::ErrorKind::WouldBlock`] when none was waiting. Fewer than asked
/// means the socket had no more waiting. One `recvmmsg` on Linux and
/// Android when the socket lends its descriptor; one [`Socket::recv_from`]
/// per datagram otherwise.
pub fn recv_batch<S: Socket + ?Sized>(
    socket: &S,
    family: Family,
    buffers: &mut [DatagramBuffer],
    received: &mut [Received],
) -> io::Result<usize> {
    let want = buffers.len().min(received.len()).min(BATCH_DATAGRAMS);
    let (buffers, received) = (&mut buffers[..want], &mut received[..want]);
    let mut short = 0;
    let result = socket.io(Direction::Receive, &mut || {
        let count = recv_now(socket, family, buffers, received)?;
        // A short batch left the socket empty: said as `WouldBlock` to the
        // readiness wrapper, which then waits for new datagrams.
        if count < want {
            short = count;
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(count)
    });
    match result {
        Err(e) if e.kind() == io::ErrorKind::WouldBlock && short > 0 => Ok(short),
        result => result,
    }
}

/// Whether `socket` sends several datagrams in one system call (`sendmmsg`,
/// on Linux and Android, through its descriptor): only then does queuing
/// datagrams to send them together pay.
pub(crate) fn sends_batches<S: Socket + ?Sized>(socket: &S) -> bool {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let batches = socket.descriptor().is_some();
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let batches = {
        let _ = socket;
        false
    };
    batches
}

/// [`send_batch`] without the readiness wrapper.
fn send_now<S: Socket + ?Sized>(socket: &S, datagrams: &[Transmit<'_>]) -> io::Result<usize> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if datagrams.len() > 1
        && let Some(fd) = socket.descriptor()
        && let Some(sent) = super::linux::send(fd, datagrams)?
    {
        return Ok(sent);
    }
    send_each(socket, datagrams)
}

/// [`recv_batch`] without the readiness wrapper: how many were read
/// (fewer than asked only if the socket had no more), or the first read's
/// error.
fn recv_now<S: Socket + ?Sized>(
    socket: &S,
    family: Family,
    buffers: &mut [DatagramBuffer],
    received: &mut [Received],
) -> io::Result<usize> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if let Some(fd) = socket.descriptor()
        && let Some(count) = super::linux::recv(fd, family, buffers, received)?
    {
        return Ok(count);
    }
    let _ = family;
    recv_each(socket, buffers, received)
}

/// Sends one datagram at a time, until one fails.
fn send_each<S: Socket + ?Sized>(socket: &S, datagrams: &[Transmit<'_>]) -> io::Result<usize> {
    for (i, t) in datagrams.iter().enumerate() {
        if let Err(e) = socket.send_to(t.datagram, t.to) {
            return if i == 0 { Err(e) } else { Ok(i) };
        }
    }
    Ok(datagrams.len())
}

/// Reads one datagram at a time until the socket has none waiting or the
/// buffers are full. The error of an ICMP message about an earlier send
/// (a refused or reset port) or of an interrupted call is passed over;
/// any other error after the first datagram ends the batch, as if the
/// socket were empty, and the next call meets it afresh.
fn recv_each<S: Socket + ?Sized>(
    socket: &S,
    buffers: &mut [DatagramBuffer],
    received: &mut [Received],
) -> io::Result<usize> {
    let mut count = 0;
    let mut passed_over = 0;
    let slots = buffers.len().min(received.len());
    while count < slots {
        match socket.recv_from(&mut buffers[count]) {
            Ok((len, from)) => {
                received[count] = Received { len, from };
                count += 1;
            }
            Err(e) if count == 0 && (e.kind() == io::ErrorKind::WouldBlock) => return Err(e),
            Err(e) if passes_over(&e) && passed_over < slots => passed_over += 1,
            Err(e) if count == 0 => return Err(e),
            Err(_) => break,
        }
    }
    Ok(count)
}

/// Whether a read error says nothing about the datagrams waiting: an ICMP
/// message about an earlier send, or an interrupted call.
pub(crate) fn passes_over(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
    )
}

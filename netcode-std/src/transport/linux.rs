//! Batched datagram system calls on Linux and Android: one `recvmmsg` or
//! `sendmmsg` for up to [`BATCH_DATAGRAMS`] datagrams on a socket's
//! descriptor, through `nix`'s safe wrappers (STANDARD.md: none).
//!
//! The message headers those calls fill are scratch space of
//! [`BATCH_DATAGRAMS`] entries, allocated once per thread and reused, so
//! a batch allocates nothing and a server or client holding a socket stays
//! `Send`. Receive headers are kept per address family: the kernel leaves
//! each header's address length at the last sender's, so headers that
//! served an IPv4 socket would cut an IPv6 sender's address short. If the
//! kernel refuses the calls themselves (`ENOSYS`: a seccomp filter or an
//! emulated kernel without them), [`send`] and [`recv`] say so with `None`
//! from then on, and the host falls back to one call per datagram.

use std::cell::RefCell;
use std::io::{self, IoSlice, IoSliceMut};
use std::net::{SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::{AsRawFd, BorrowedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use nix::errno::Errno;
use nix::sys::socket::{
    ControlMessage, MsgFlags, MultiHeaders, SockaddrStorage, recvmmsg, sendmmsg,
};

use super::{BATCH_DATAGRAMS, DatagramBuffer, Received, Transmit};
use crate::error::Family;

/// Set once the kernel has refused `sendmmsg` or `recvmmsg`.
static REFUSED: AtomicBool = AtomicBool::new(false);

/// Scratch headers, made on first use.
type Headers = RefCell<Option<MultiHeaders<SockaddrStorage>>>;

thread_local! {
    /// Scratch headers for `sendmmsg` (which sets every address length).
    static SEND_HEADERS: Headers = const { RefCell::new(None) };
    /// Scratch headers for `recvmmsg` on IPv4 sockets.
    static RECV_HEADERS_V4: Headers = const { RefCell::new(None) };
    /// Scratch headers for `recvmmsg` on IPv6 sockets.
    static RECV_HEADERS_V6: Headers = const { RefCell::new(None) };
}

/// Sends a leading run of up to [`BATCH_DATAGRAMS`] of `datagrams` with
/// one `sendmmsg` on `fd`: how many left, or `None` if the kernel refuses
/// the call (then and from then on).
pub(super) fn send(fd: BorrowedFd<'_>, datagrams: &[Transmit<'_>]) -> io::Result<Option<usize>> {
    if REFUSED.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let batch = &datagrams[..datagrams.len().min(BATCH_DATAGRAMS)];
    let mut next = batch.iter();
    let slices: [Option<[IoSlice<'_>; 1]>; BATCH_DATAGRAMS] =
        core::array::from_fn(|_| next.next().map(|t| [IoSlice::new(t.datagram)]));
    let addresses: [Option<SockaddrStorage>; BATCH_DATAGRAMS] =
        core::array::from_fn(|i| batch.get(i).map(|t| SockaddrStorage::from(t.to)));
    let no_control: [ControlMessage<'_>; 0] = [];
    let fd = fd.as_raw_fd();
    let result = SEND_HEADERS.with(|cell| {
        let mut headers = cell.borrow_mut();
        let headers =
            headers.get_or_insert_with(|| MultiHeaders::preallocate(BATCH_DATAGRAMS, None));
        sendmmsg(
            fd,
            headers,
            slices.iter().flatten(),
            addresses,
            no_control,
            MsgFlags::MSG_DONTWAIT,
        )
        .map(|sent| sent.count())
    });
    refused_as_none(result)
}

/// Reads up to [`BATCH_DATAGRAMS`] waiting datagrams with one `recvmmsg`
/// on `fd`, a socket of address family `family` (see [`super::recv_batch`]
/// for the buffers): how many, or `None` if the kernel refuses the call
/// (then and from then on).
pub(super) fn recv(
    fd: BorrowedFd<'_>,
    family: Family,
    buffers: &mut [DatagramBuffer],
    received: &mut [Received],
) -> io::Result<Option<usize>> {
    if REFUSED.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let count = buffers.len().min(received.len()).min(BATCH_DATAGRAMS);
    let fd = fd.as_raw_fd();
    let headers = match family {
        Family::V4 => &RECV_HEADERS_V4,
        Family::V6 => &RECV_HEADERS_V6,
    };
    let result = headers.with(|cell| {
        let mut headers = cell.borrow_mut();
        let headers =
            headers.get_or_insert_with(|| MultiHeaders::preallocate(BATCH_DATAGRAMS, None));
        let mut next = buffers[..count].iter_mut();
        let mut slices: [Option<[IoSliceMut<'_>; 1]>; BATCH_DATAGRAMS] =
            core::array::from_fn(|_| next.next().map(|b| [IoSliceMut::new(&mut b[..])]));
        let messages = recvmmsg(
            fd,
            headers,
            slices.iter_mut().flatten(),
            MsgFlags::MSG_DONTWAIT,
            None,
        )?;
        let mut n = 0;
        for (message, meta) in messages.zip(received.iter_mut()) {
            // A sender whose address is not IP cannot reach a UDP socket;
            // should one appear, its datagram is skipped as empty.
            let from = message.address.as_ref().and_then(socket_addr);
            *meta = match from {
                Some(from) => Received {
                    len: message.bytes,
                    from,
                },
                None => Received::default(),
            };
            n += 1;
        }
        Ok(n)
    });
    refused_as_none(result)
}

/// A call's result, with the kernel's refusal of the call itself as `None`
/// (remembered for the rest of the process).
fn refused_as_none(result: Result<usize, Errno>) -> io::Result<Option<usize>> {
    match result {
        Ok(n) => Ok(Some(n)),
        Err(Errno::ENOSYS) => {
            REFUSED.store(true, Ordering::Relaxed);
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}

/// The IP socket address in `address`, if it holds one.
fn socket_addr(address: &SockaddrStorage) -> Option<SocketAddr> {
    if let Some(v4) = address.as_sockaddr_in() {
        return Some(SocketAddr::V4(SocketAddrV4::from(*v4)));
    }
    address
        .as_sockaddr_in6()
        .map(|v6| SocketAddr::V6(SocketAddrV6::from(*v6)))
}

/// Whether the kernel has refused the batched calls in this process.
#[cfg(test)]
pub(crate) fn refused() -> bool {
    REFUSED.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use std::net::UdpSocket;

    use super::*;
    use crate::transport::{recv_batch, send_batch};

    fn bound(host: &str) -> UdpSocket {
        let socket = UdpSocket::bind(host).unwrap();
        socket.set_nonblocking(true).unwrap();
        socket
    }

    #[test]
    fn a_batch_goes_out_and_comes_back_in_one_call_each() {
        round_trip("127.0.0.1:0");
        if UdpSocket::bind("[::1]:0").is_ok() {
            round_trip("[::1]:0");
        }
    }

    fn round_trip(host: &str) {
        let (a, b) = (bound(host), bound(host));
        let to = b.local_addr().unwrap();
        let payloads: Vec<Vec<u8>> = (0..40u8).map(|i| vec![i; 1 + usize::from(i)]).collect();
        let transmits: Vec<Transmit<'_>> = payloads
            .iter()
            .map(|p| Transmit { to, datagram: p })
            .collect();
        // One call sends at most a batch.
        let sent = send_batch(&a, &transmits).unwrap();
        assert_eq!(sent, BATCH_DATAGRAMS);
        assert_eq!(
            send_batch(&a, &transmits[sent..]).unwrap(),
            40 - BATCH_DATAGRAMS
        );
        let family = Family::of(&to);

        let mut buffers = vec![[0u8; 1300]; 64];
        let mut received = vec![Received::default(); 64];
        let mut got = Vec::new();
        for _ in 0..100 {
            match recv_batch(
                &b,
                family,
                &mut buffers[..BATCH_DATAGRAMS],
                &mut received[..BATCH_DATAGRAMS],
            ) {
                Ok(n) => {
                    assert!(n <= BATCH_DATAGRAMS);
                    for (buffer, meta) in buffers.iter().zip(&received).take(n) {
                        assert_eq!(meta.from, a.local_addr().unwrap());
                        got.push(buffer[..meta.len].to_vec());
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if got.len() == payloads.len() {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(got, payloads, "every datagram, intact and in order");
        assert!(!refused());
    }

    #[test]
    fn an_empty_socket_would_block() {
        let socket = bound("127.0.0.1:0");
        let mut buffers = [[0u8; 1300]; 2];
        let mut received = [Received::default(); 2];
        let e = recv_batch(&socket, Family::V4, &mut buffers, &mut received).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
    }
}

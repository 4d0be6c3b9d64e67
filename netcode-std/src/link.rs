//! Datagrams between the core and the sockets, in batches: the outbox the
//! core's output fills and that leaves in as few calls as the socket
//! allows, and the inbox a socket is drained into.
//!
//! The latency contract: a datagram never waits past the end of the host
//! call that produced it (`update`, `send_packet`, `disconnect`, ...), or
//! of the [`Server::batch`](crate::Server::batch) /
//! [`Client::batch`](crate::Client::batch) scope it was produced in. The
//! outbox also leaves as soon as it holds a full batch.

use std::io;
use std::net::SocketAddr;

use netcode_proto::constants::MAX_PACKET_BYTES;

use crate::error::Family;
use crate::socket::Sockets;
use crate::stats::TransportStats;
use crate::transport::{BATCH_DATAGRAMS, DatagramBuffer, Received, Socket, Transmit};

/// Datagrams waiting to leave, copied out of the core's output, at most
/// one batch.
#[derive(Debug)]
pub(crate) struct Outbox {
    buffers: Box<[DatagramBuffer]>,
    /// Destination and length of each queued datagram, in order.
    queued: Vec<(SocketAddr, usize)>,
}

impl Outbox {
    /// An empty outbox for up to `capacity` datagrams (at most a batch).
    pub(crate) fn new(capacity: usize) -> Self {
        let capacity = capacity.clamp(1, BATCH_DATAGRAMS);
        Self {
            buffers: vec![[0; MAX_PACKET_BYTES]; capacity].into_boxed_slice(),
            queued: Vec::with_capacity(capacity),
        }
    }

    /// Sends every queued datagram through the socket of its family, in
    /// order, counting what left and what failed.
    fn flush<S: Socket>(&mut self, sockets: &Sockets<S>, stats: &mut TransportStats) {
        let mut start = 0;
        while start < self.queued.len() {
            let family = Family::of(&self.queued[start].0);
            let run = self.queued[start..]
                .iter()
                .take_while(|(to, _)| Family::of(to) == family)
                .count();
            let mut transmits: heapless::Vec<Transmit<'_>, BATCH_DATAGRAMS> = heapless::Vec::new();
            for (i, (to, len)) in self.queued[start..start + run].iter().enumerate() {
                let _ = transmits.push(Transmit {
                    to: *to,
                    datagram: &self.buffers[start + i][..*len],
                });
            }
            match sockets.get(family) {
                Some(socket) => send_all(socket, &transmits, stats),
                None => stats.send_no_socket += run as u64,
            }
            start += run;
        }
        self.queued.clear();
    }
}

/// Sends `transmits` in as few calls as the socket takes; a datagram whose
/// send fails is counted and skipped.
fn send_all<S: Socket>(socket: &S, transmits: &[Transmit<'_>], stats: &mut TransportStats) {
    let mut rest = transmits;
    while !rest.is_empty() {
        stats.send_calls += 1;
        match socket.send_batch(rest) {
            Ok(sent) if sent > 0 => {
                let sent = sent.min(rest.len());
                stats.datagrams_sent += sent as u64;
                rest = &rest[sent..];
            }
            Ok(_) | Err(_) => {
                stats.send_errors += 1;
                rest = &rest[1..];
            }
        }
    }
}

/// A client's or server's sockets, its outbox and its counters: where the
/// core's datagrams go.
#[derive(Debug)]
pub(crate) struct Link<S> {
    pub(crate) sockets: Sockets<S>,
    outbox: Outbox,
    pub(crate) stats: TransportStats,
}

impl<S: Socket> Link<S> {
    pub(crate) fn new(sockets: Sockets<S>, outbox: Outbox) -> Self {
        Self {
            sockets,
            outbox,
            stats: TransportStats::default(),
        }
    }

    /// Queues one datagram from the core, first sending the outbox if it
    /// is full. A datagram longer than any netcode packet (the core never
    /// writes one) is counted as a send error.
    pub(crate) fn send(&mut self, to: SocketAddr, datagram: &[u8]) {
        if datagram.len() > MAX_PACKET_BYTES {
            self.stats.send_errors += 1;
            return;
        }
        if self.outbox.queued.len() == self.outbox.buffers.len() {
            self.flush();
        }
        let index = self.outbox.queued.len();
        self.outbox.buffers[index][..datagram.len()].copy_from_slice(datagram);
        self.outbox.queued.push((to, datagram.len()));
    }

    /// Sends everything queued.
    pub(crate) fn flush(&mut self) {
        if !self.outbox.queued.is_empty() {
            self.outbox.flush(&self.sockets, &mut self.stats);
        }
    }
}

/// Buffers one batch of received datagrams lands in.
#[derive(Debug)]
pub(crate) struct Inbox {
    buffers: Box<[DatagramBuffer]>,
    received: Box<[Received]>,
}

impl Inbox {
    /// Room for `capacity` datagrams per read (at most a batch).
    pub(crate) fn new(capacity: usize) -> Self {
        let capacity = capacity.clamp(1, BATCH_DATAGRAMS);
        Self {
            buffers: vec![[0; MAX_PACKET_BYTES]; capacity].into_boxed_slice(),
            received: vec![Received::default(); capacity].into_boxed_slice(),
        }
    }
}

/// Gives [`drain`] the link inside a client's or server's output.
pub(crate) trait HasLink<S> {
    /// The link.
    fn link(&mut self) -> &mut Link<S>;
}

/// Reads the socket of `family` in batches until it has nothing waiting,
/// an error other than ICMP noise stops it, or `limit` datagrams have been
/// read, handing each datagram (decryptable in place) to `handle` along
/// with `io`. Counts what it reads and skips, and notes a backlog on the
/// socket when the limit stopped it, so that `Sockets::backlog` says work
/// is due at once; returns whether it left the socket empty.
pub(crate) fn drain<S: Socket, Io: HasLink<S>>(
    io: &mut Io,
    inbox: &mut Inbox,
    family: Family,
    limit: usize,
    mut handle: impl FnMut(&mut Io, &mut [u8], SocketAddr),
) -> bool {
    let mut left = limit;
    let mut emptied = false;
    let backlog = loop {
        if left == 0 {
            break true;
        }
        let want = inbox.buffers.len().min(left);
        let link = io.link();
        let Some(socket) = link.sockets.get(family) else {
            return false;
        };
        link.stats.receive_calls += 1;
        let result = socket.recv_batch(&mut inbox.buffers[..want], &mut inbox.received[..want]);
        match result {
            Ok(count) => {
                let count = count.min(want);
                link.stats.datagrams_received += count as u64;
                left = left.saturating_sub(count.max(1));
                for (buffer, meta) in inbox.buffers.iter_mut().zip(&inbox.received[..count]) {
                    let len = meta.len.min(MAX_PACKET_BYTES);
                    handle(io, &mut buffer[..len], meta.from);
                }
                // A short batch means the socket had no more waiting.
                if count < want {
                    emptied = true;
                    break false;
                }
            }
            Err(e) => {
                match e.kind() {
                    io::ErrorKind::WouldBlock => {
                        emptied = true;
                        break false;
                    }
                    // ICMP "port unreachable" from an earlier send, or an
                    // interrupted call: read on.
                    io::ErrorKind::ConnectionRefused
                    | io::ErrorKind::ConnectionReset
                    | io::ErrorKind::Interrupted => {
                        link.stats.receive_errors += 1;
                        left -= 1;
                    }
                    _ => {
                        link.stats.receive_errors += 1;
                        break false;
                    }
                }
            }
        }
    };
    io.link().sockets.set_backlog(family, backlog);
    emptied
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;
    use crate::socket::{PacketTagging, SocketOptions};

    /// One batch a socket was asked to send.
    type SentBatch = Vec<(SocketAddr, Vec<u8>)>;

    /// A socket that records each batch it is asked to send and fails the
    /// datagrams sent to port 9.
    #[derive(Debug, Default)]
    struct Recording {
        batches: RefCell<Vec<SentBatch>>,
    }

    impl Socket for Recording {
        fn send_to(&self, _datagram: &[u8], _to: SocketAddr) -> io::Result<usize> {
            unreachable!("batches only")
        }

        fn recv_from(&self, _buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
            Err(io::ErrorKind::WouldBlock.into())
        }

        fn send_batch(&self, datagrams: &[Transmit<'_>]) -> io::Result<usize> {
            if datagrams[0].to.port() == 9 {
                return Err(io::Error::other("refused"));
            }
            let ok = datagrams.iter().take_while(|t| t.to.port() != 9);
            let batch: Vec<_> = ok.map(|t| (t.to, t.datagram.to_vec())).collect();
            let n = batch.len();
            self.batches.borrow_mut().push(batch);
            Ok(n)
        }
    }

    fn link(outbox: usize) -> Link<Recording> {
        let options = SocketOptions {
            buffer_bytes: crate::socket::MIN_SOCKET_BUFFER_BYTES,
            packet_tagging: PacketTagging::Off,
        };
        let sockets = Sockets::bind(
            "127.0.0.1:0".parse().unwrap(),
            Some("[::1]:0".parse().unwrap()),
            &options,
            |_, _| Ok(Recording::default()),
        )
        .or_else(|_| {
            Sockets::bind("127.0.0.1:0".parse().unwrap(), None, &options, |_, _| {
                Ok(Recording::default())
            })
        })
        .unwrap();
        Link::new(sockets, Outbox::new(outbox))
    }

    #[test]
    fn the_outbox_leaves_in_order_in_runs_per_family_and_skips_failures() {
        let mut link = link(8);
        let a: SocketAddr = "127.0.0.1:1000".parse().unwrap();
        let refused: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let v6: SocketAddr = "[::1]:2000".parse().unwrap();
        let has_v6 = link.sockets.get(Family::V6).is_some();
        link.send(a, b"one");
        link.send(refused, b"two");
        link.send(a, b"three");
        link.send(v6, b"four");
        link.send(a, b"five");
        link.flush();
        let v4 = link
            .sockets
            .get(Family::V4)
            .unwrap()
            .batches
            .borrow()
            .clone();
        assert_eq!(
            v4,
            [
                vec![(a, b"one".to_vec())],
                vec![(a, b"three".to_vec())],
                vec![(a, b"five".to_vec())]
            ]
        );
        assert_eq!(link.stats.send_errors, 1);
        if has_v6 {
            assert_eq!(link.stats.datagrams_sent, 4);
        } else {
            assert_eq!(link.stats.send_no_socket, 1);
        }
    }

    #[test]
    fn a_full_outbox_leaves_at_once_and_longer_datagrams_are_refused() {
        let mut link = link(2);
        let a: SocketAddr = "127.0.0.1:1000".parse().unwrap();
        for i in 0..5u8 {
            link.send(a, &[i]);
        }
        let socket = link.sockets.get(Family::V4).unwrap();
        assert_eq!(socket.batches.borrow().len(), 2, "two full batches left");
        link.flush();
        let socket = link.sockets.get(Family::V4).unwrap();
        assert_eq!(socket.batches.borrow().len(), 3);
        link.send(a, &[0; MAX_PACKET_BYTES + 1]);
        assert_eq!(link.stats.send_errors, 1);
    }
}

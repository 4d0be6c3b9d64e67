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

use crate::stats::TransportStats;
use crate::transport::{
    BATCH_DATAGRAMS, DatagramBuffer, Path, Received, Socket, Sockets, Transmit, passes_over,
    recv_batch, send_batch, sends_batches,
};

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

    /// Sends every queued datagram through the socket of its path (its
    /// family's UDP socket, or the relay of virtual peers), in order,
    /// counting what left and what failed.
    fn flush<S: Socket>(&mut self, sockets: &Sockets<S>, stats: &mut TransportStats) {
        let mut start = 0;
        while start < self.queued.len() {
            let path = Path::to(&self.queued[start].0);
            let run = self.queued[start..]
                .iter()
                .take_while(|(to, _)| Path::to(to) == path)
                .count();
            let mut transmits: heapless::Vec<Transmit<'_>, BATCH_DATAGRAMS> = heapless::Vec::new();
            for (i, (to, len)) in self.queued[start..start + run].iter().enumerate() {
                let _ = transmits.push(Transmit {
                    to: *to,
                    datagram: &self.buffers[start + i][..*len],
                });
            }
            // As for reads: a family's socket by its type, the relay
            // through its trait.
            let sent = match path {
                Path::Udp(family) => sockets
                    .get(family)
                    .map(|socket| send_all(socket, &transmits, stats)),
                Path::Relay => sockets
                    .on(path)
                    .map(|socket| send_all(socket, &transmits, stats)),
            };
            if sent.is_none() {
                stats.send_no_socket += run as u64;
            }
            start += run;
        }
        self.queued.clear();
    }
}

/// Sends `transmits` in as few calls as the socket takes; a datagram whose
/// send fails is counted and skipped.
fn send_all<S: Socket + ?Sized>(
    socket: &S,
    transmits: &[Transmit<'_>],
    stats: &mut TransportStats,
) {
    let mut rest = transmits;
    while !rest.is_empty() {
        stats.send_calls += 1;
        match send_batch(socket, rest) {
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
    /// A batch holds every datagram until it ends (see [`hold`](Self::hold)).
    held: bool,
}

impl<S: Socket> Link<S> {
    pub(crate) fn new(sockets: Sockets<S>, outbox: Outbox) -> Self {
        Self {
            sockets,
            outbox,
            stats: TransportStats::default(),
            held: false,
        }
    }

    /// Holds every datagram from now on (a batch began), or sends what is
    /// held and stops holding (it ended).
    pub(crate) fn hold(&mut self, on: bool) {
        self.held = on;
        self.finish();
    }

    /// Sends what the last call queued, unless a batch holds it.
    pub(crate) fn finish(&mut self) {
        if !self.held {
            self.flush();
        }
    }

    /// Queues one datagram from the core, first sending the outbox if it
    /// is full. A datagram longer than any netcode packet (the core never
    /// writes one) is counted as a send error.
    pub(crate) fn send(&mut self, to: SocketAddr, datagram: &[u8]) {
        if datagram.len() > MAX_PACKET_BYTES {
            self.stats.send_errors += 1;
        } else if self.leaves_at_once(&to) {
            self.send_now(to, datagram);
        } else {
            self.next_buffer()[..datagram.len()].copy_from_slice(datagram);
            self.outbox.queued.push((to, datagram.len()));
        }
    }

    /// Sends the datagram `write` writes (see
    /// [`Output::send_with`](netcode_proto::io::Output::send_with)): in
    /// place in the outbox's next buffer when it is queued there, on the
    /// stack when it leaves at once. A length past the buffer is counted
    /// as a send error.
    pub(crate) fn send_with(
        &mut self,
        to: SocketAddr,
        write: &mut dyn FnMut(&mut [u8]) -> Option<usize>,
    ) -> Option<usize> {
        if self.leaves_at_once(&to) {
            let mut buffer = [0u8; MAX_PACKET_BYTES];
            let length = write(&mut buffer)?;
            match buffer.get(..length) {
                Some(datagram) => self.send_now(to, datagram),
                None => self.stats.send_errors += 1,
            }
            return (length <= MAX_PACKET_BYTES).then_some(length);
        }
        let length = write(self.next_buffer())?;
        if length > MAX_PACKET_BYTES {
            self.stats.send_errors += 1;
            return None;
        }
        self.outbox.queued.push((to, length));
        Some(length)
    }

    /// Whether a datagram to `to` leaves at once, without a copy into the
    /// outbox: outside a batch, with nothing queued before it, when its
    /// socket sends one at a time anyway (no descriptor for one system call
    /// per batch: a callback or in-memory socket).
    fn leaves_at_once(&self, to: &SocketAddr) -> bool {
        !self.held
            && self.outbox.queued.is_empty()
            && self
                .sockets
                .on(Path::to(to))
                .is_some_and(|socket| !sends_batches(socket))
    }

    /// Sends one datagram through its socket now.
    fn send_now(&mut self, to: SocketAddr, datagram: &[u8]) {
        if let Some(socket) = self.sockets.on(Path::to(&to)) {
            send_all(socket, &[Transmit { to, datagram }], &mut self.stats);
        }
    }

    /// The outbox's next free buffer, the outbox sent first when full.
    fn next_buffer(&mut self) -> &mut DatagramBuffer {
        if self.outbox.queued.len() == self.outbox.buffers.len() {
            self.flush();
        }
        let index = self.outbox.queued.len();
        &mut self.outbox.buffers[index]
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

    /// The first `count` datagrams the last read left here, each with its
    /// sender, decryptable in place.
    pub(crate) fn datagrams(
        &mut self,
        count: usize,
    ) -> impl Iterator<Item = (&mut [u8], SocketAddr)> {
        self.buffers
            .iter_mut()
            .zip(&self.received[..count.min(self.received.len())])
            .map(|(buffer, meta)| (&mut buffer[..meta.len.min(MAX_PACKET_BYTES)], meta.from))
    }
}

/// How much one drain of a socket may still read, and how it ended.
#[derive(Debug)]
pub(crate) struct ReadBudget {
    left: usize,
    done: bool,
    emptied: bool,
}

impl ReadBudget {
    /// A drain that reads at most `limit` datagrams.
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            left: limit,
            done: false,
            emptied: false,
        }
    }

    /// Whether the drain left the socket empty.
    pub(crate) fn emptied(&self) -> bool {
        self.emptied
    }
}

impl<S: Socket> Link<S> {
    /// Reads the next batch from the socket on `path` into `inbox`: how
    /// many datagrams (see [`Inbox::datagrams`]), or `None` once the drain
    /// is over: the socket had nothing more, an error other than ICMP noise
    /// stopped it, or `budget` is spent. Counts what it reads and skips,
    /// and notes a backlog on the socket when the budget stopped it, so
    /// that `Sockets::backlog` says work is due at once.
    ///
    /// The caller loops, handling each batch before reading the next:
    /// `while let Some(n) = link.read(..) { for .. in inbox.datagrams(n) }`.
    pub(crate) fn read(
        &mut self,
        path: Path,
        inbox: &mut Inbox,
        budget: &mut ReadBudget,
    ) -> Option<usize> {
        loop {
            if budget.done {
                return None;
            }
            if budget.left == 0 {
                budget.done = true;
                self.sockets.set_backlog(path, true);
                return None;
            }
            let want = inbox.buffers.len().min(budget.left);
            let (buffers, received) = (&mut inbox.buffers[..want], &mut inbox.received[..want]);
            // A family's own socket is called by its type (inlined, no
            // dynamic dispatch: the hot path); the relay through its trait.
            let read = match path {
                Path::Udp(family) => self
                    .sockets
                    .get(family)
                    .map(|socket| recv_batch(socket, family, buffers, received)),
                Path::Relay => self
                    .sockets
                    .on(path)
                    .map(|socket| recv_batch(socket, path.family(), buffers, received)),
            };
            let Some(read) = read else {
                budget.done = true;
                return None;
            };
            self.stats.receive_calls += 1;
            match read {
                Ok(count) => {
                    let count = count.min(want);
                    self.stats.datagrams_received += count as u64;
                    budget.left = budget.left.saturating_sub(count.max(1));
                    // A short batch means the socket had no more waiting.
                    if count < want {
                        self.finish_read(path, budget, true);
                    }
                    return Some(count);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.finish_read(path, budget, true);
                    return None;
                }
                Err(e) if passes_over(&e) => {
                    self.stats.receive_errors += 1;
                    budget.left -= 1;
                }
                Err(_) => {
                    self.stats.receive_errors += 1;
                    self.finish_read(path, budget, false);
                    return None;
                }
            }
        }
    }

    /// Ends a drain before its budget: no backlog left on the socket.
    fn finish_read(&mut self, path: Path, budget: &mut ReadBudget, emptied: bool) {
        budget.done = true;
        budget.emptied = emptied;
        self.sockets.set_backlog(path, false);
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;
    use crate::error::Family;
    use crate::transport::SocketOptions;
    use crate::transport::udp::{MIN_SOCKET_BUFFER_BYTES, PacketTagging};

    /// One batch a socket was asked to send.
    type SentBatch = Vec<(SocketAddr, Vec<u8>)>;

    /// A socket that records each batch it is asked to send and fails the
    /// datagrams sent to port 9.
    #[derive(Debug, Default)]
    struct Recording {
        batches: RefCell<Vec<SentBatch>>,
    }

    impl Socket for Recording {
        /// Joins the batch being sent, or fails for port 9.
        fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<usize> {
            if to.port() == 9 {
                return Err(io::Error::other("refused"));
            }
            let mut batches = self.batches.borrow_mut();
            if let Some(batch) = batches.last_mut() {
                batch.push((to, datagram.to_vec()));
            }
            Ok(datagram.len())
        }

        fn recv_from(&self, _buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
            Err(io::ErrorKind::WouldBlock.into())
        }

        /// Each batch the host sends runs inside this, the readiness
        /// wrapper: what it sends is recorded as one batch (a batch that
        /// sent nothing is not).
        fn io(
            &self,
            _direction: crate::transport::Direction,
            batch: &mut dyn FnMut() -> io::Result<usize>,
        ) -> io::Result<usize> {
            self.batches.borrow_mut().push(Vec::new());
            let result = batch();
            let mut batches = self.batches.borrow_mut();
            if batches.last().is_some_and(Vec::is_empty) {
                batches.pop();
            }
            result
        }
    }

    fn link(outbox: usize) -> Link<Recording> {
        let options = SocketOptions {
            buffer_bytes: MIN_SOCKET_BUFFER_BYTES,
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
    fn outside_a_batch_a_socket_without_batches_sends_at_once() {
        let mut link = link(8);
        let a: SocketAddr = "127.0.0.1:1000".parse().unwrap();
        let sent = |link: &Link<Recording>| {
            let socket = link.sockets.get(Family::V4).unwrap();
            socket.batches.borrow().concat()
        };
        link.send(a, b"one");
        assert_eq!(sent(&link), [(a, b"one".to_vec())], "no flush needed");
        link.hold(true);
        link.send(a, b"two");
        link.send(a, b"three");
        assert_eq!(sent(&link).len(), 1, "held by the batch");
        link.hold(false);
        link.send(a, b"four");
        let all: Vec<_> = sent(&link).into_iter().map(|(_, d)| d).collect();
        assert_eq!(all, [&b"one"[..], b"two", b"three", b"four"], "in order");
        assert_eq!(link.stats.datagrams_sent, 4);
    }

    #[test]
    fn the_outbox_leaves_in_order_in_runs_per_family_and_skips_failures() {
        let mut link = link(8);
        link.hold(true);
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
        link.hold(true);
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

//! The floor of the UDP run: what echoing costs with no netcode at all.
//!
//! A bare echo server reads its socket with the very same batched calls as
//! our server (`netcode_std::transport::recv_batch` / `send_batch`,
//! up to 32 datagrams a call, on a socket registered with mio) and sends
//! each datagram back to its sender unchanged. Bare clients, one UDP socket
//! each, keep the same window of datagrams in flight as the netcode clients
//! with the same flow logic, each datagram the size a netcode payload
//! packet of 100 bytes has on the wire at that client's sequence (prefix
//! byte, sequence bytes, payload, 16-byte tag: STANDARD.md, "Encrypted
//! packets"), with the header written by netcode-proto's own function.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use netcode_bench::fixtures::payload;
use netcode_mio::Family;
use netcode_mio::mio::{Events, Poll, Token};
use netcode_mio::netcode_std::transport::{
    BATCH_DATAGRAMS, DatagramBuffer, Received, Transmit, recv_batch, send_batch,
};
use netcode_proto::PacketType;
use netcode_proto::bytes::Writer;
use netcode_proto::constants::{MAC_BYTES, MAX_PACKET_BYTES};
use netcode_proto::packet::write_prefix_and_sequence;

use super::clock::Clock;
use super::echo::{Counters, EchoClients, EchoServer, Flow, SWEEP_SECONDS, Tally, Totals};
use super::kinds::PAYLOAD_BYTES;
use super::net::{BatchedSocket, MAX_WAIT, poll, retry, udp_socket};

/// Receive buffers and their senders for one batch.
struct Inbox {
    buffers: Box<[DatagramBuffer]>,
    received: Box<[Received]>,
}

impl Inbox {
    fn new() -> Self {
        Self {
            buffers: vec![[0; MAX_PACKET_BYTES]; BATCH_DATAGRAMS].into_boxed_slice(),
            received: vec![Received::default(); BATCH_DATAGRAMS].into_boxed_slice(),
        }
    }
}

/// Sends `transmits` in as few batch calls as the socket takes, skipping a
/// datagram whose send fails, as netcode-std does. Returns the calls made
/// and the datagrams sent.
fn send_all(socket: &BatchedSocket, transmits: &[Transmit<'_>]) -> (u64, u64) {
    let (mut calls, mut sent) = (0, 0);
    let mut rest = transmits;
    while !rest.is_empty() {
        calls += 1;
        match send_batch(socket, rest) {
            Ok(n) if n > 0 => {
                let n = n.min(rest.len());
                sent += n as u64;
                rest = &rest[n..];
            }
            Ok(_) | Err(_) => rest = &rest[1..],
        }
    }
    (calls, sent)
}

/// The bare echo server.
pub(super) struct FloorServer {
    poll: Poll,
    events: Events,
    socket: BatchedSocket,
    address: SocketAddr,
    inbox: Inbox,
    /// What it moved (no keep-alives: there is no protocol).
    totals: Totals,
}

impl FloorServer {
    /// A server on an ephemeral port of the unspecified address, as our
    /// server binds by default.
    pub(super) fn new() -> Result<Self, String> {
        let poll = Poll::new().map_err(|e| format!("poll: {e}"))?;
        let socket = udp_socket(poll.registry(), Token(0), Ipv4Addr::UNSPECIFIED)
            .map_err(|e| format!("floor server: {e}"))?;
        let port = socket
            .local_addr()
            .map_err(|e| format!("floor server: {e}"))?
            .port();
        Ok(Self {
            poll,
            events: Events::with_capacity(16),
            socket: BatchedSocket(socket),
            address: SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
            inbox: Inbox::new(),
            totals: Totals::default(),
        })
    }
}

impl EchoServer for FloorServer {
    fn address(&self) -> SocketAddr {
        self.address
    }

    fn connected(&self) -> Option<usize> {
        None
    }

    /// Reads until a batch comes back short (the socket is empty), echoing
    /// each batch as it comes and counting it at once: under load the
    /// clients refill the socket as fast as it is read, so one turn can
    /// last a whole window, and counts kept to its end would fall outside
    /// the window its CPU time was spent in.
    fn turn(&mut self, _clock: Clock, wait: Duration, counters: &Counters) -> Result<(), String> {
        poll(&mut self.poll, &mut self.events, wait)?;
        if self.events.is_empty() {
            return Ok(());
        }
        let Inbox { buffers, received } = &mut self.inbox;
        loop {
            self.totals.calls += 1;
            let count = match recv_batch(&self.socket, Family::V4, buffers, received) {
                Ok(count) => count.min(BATCH_DATAGRAMS),
                Err(e) if retry(&e) => continue,
                Err(_) => break,
            };
            self.totals.datagrams += count as u64;
            let transmits: [Transmit<'_>; BATCH_DATAGRAMS] = core::array::from_fn(|i| Transmit {
                to: received[i].from,
                datagram: &buffers[i][..received[i].len.min(MAX_PACKET_BYTES)],
            });
            let (calls, sent) = send_all(&self.socket, &transmits[..count]);
            self.totals.calls += calls;
            self.totals.datagrams += sent;
            counters.echoed(count as u64);
            counters.totals(&self.totals);
            if count < BATCH_DATAGRAMS {
                break;
            }
        }
        counters.totals(&self.totals);
        Ok(())
    }
}

/// Writes the datagram a payload packet of `payload` at `sequence` would
/// be on the wire (its header by netcode-proto, then the payload and a tag's
/// worth of zeros) into `out`, and returns its length.
pub(super) fn write_datagram(sequence: u64, payload: &[u8], out: &mut DatagramBuffer) -> usize {
    let mut writer = Writer::new(out);
    let header = write_prefix_and_sequence(&mut writer, PacketType::Payload as u8, sequence)
        .unwrap_or_else(|| unreachable!("a header fits in a datagram buffer"));
    let end = header + payload.len();
    out[header..end].copy_from_slice(payload);
    out[end..end + MAC_BYTES].fill(0);
    end + MAC_BYTES
}

/// The payload of a datagram written by [`write_datagram`], found from its
/// prefix byte (sequence bytes in the high nibble); empty if it cannot be
/// one.
fn payload_of(datagram: &[u8]) -> &[u8] {
    let Some(&prefix) = datagram.first() else {
        return &[];
    };
    let start = 1 + usize::from(prefix >> 4);
    let end = datagram.len().saturating_sub(MAC_BYTES);
    datagram.get(start..end).unwrap_or_default()
}

/// N bare clients, one socket each, all driven from this thread.
pub(super) struct BareClients {
    poll: Poll,
    events: Events,
    sockets: Vec<BatchedSocket>,
    flows: Vec<Flow>,
    /// Each client's next sequence.
    sequences: Vec<u64>,
    server: SocketAddr,
    ready: Vec<usize>,
    next_sweep: f64,
    payload: Vec<u8>,
    inbox: Inbox,
    outbox: Box<[DatagramBuffer]>,
}

impl BareClients {
    /// `n` clients of the floor server at `server`.
    pub(super) fn new(n: usize, server: SocketAddr) -> Result<Self, String> {
        let poll = Poll::new().map_err(|e| format!("poll: {e}"))?;
        let sockets = (0..n)
            .map(|i| {
                udp_socket(poll.registry(), Token(i), Ipv4Addr::LOCALHOST)
                    .map(BatchedSocket)
                    .map_err(|e| format!("bare client {i}: {e}"))
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            poll,
            events: Events::with_capacity(1024),
            sockets,
            flows: vec![Flow::default(); n],
            sequences: vec![0; n],
            server,
            ready: Vec::with_capacity(n),
            next_sweep: 0.0,
            payload: payload(PAYLOAD_BYTES),
            inbox: Inbox::new(),
            outbox: vec![[0; MAX_PACKET_BYTES]; BATCH_DATAGRAMS].into_boxed_slice(),
        })
    }
}

impl EchoClients for BareClients {
    /// Every bare client is "connected": there is no handshake.
    fn connected(&self) -> usize {
        self.sockets.len()
    }

    fn turn(&mut self, clock: Clock, window: usize, tally: &mut Tally) {
        let _ = poll(&mut self.poll, &mut self.events, MAX_WAIT);
        let now = clock.now();
        let Inbox { buffers, received } = &mut self.inbox;
        self.ready.clear();
        for event in self.events.iter() {
            let i = event.token().0;
            let (Some(socket), Some(flow)) = (self.sockets.get(i), self.flows.get_mut(i)) else {
                continue;
            };
            loop {
                let count = match recv_batch(socket, Family::V4, buffers, received) {
                    Ok(count) => count.min(BATCH_DATAGRAMS),
                    Err(e) if retry(&e) => continue,
                    Err(_) => break,
                };
                for (buffer, meta) in buffers.iter().zip(&received[..count]) {
                    let len = meta.len.min(MAX_PACKET_BYTES);
                    flow.echo(payload_of(&buffer[..len]), tally);
                }
                if count < BATCH_DATAGRAMS {
                    break;
                }
            }
            self.ready.push(i);
        }
        if now >= self.next_sweep {
            // Every client, for the stalled windows.
            self.next_sweep = now + SWEEP_SECONDS;
            self.ready.clear();
            self.ready.extend(0..self.sockets.len());
        }
        if window == 0 {
            return;
        }
        for &i in &self.ready {
            let flow = &mut self.flows[i];
            let room = flow.room(now, window, tally).min(BATCH_DATAGRAMS);
            if room == 0 {
                continue;
            }
            let sequence = &mut self.sequences[i];
            let mut lens = [0; BATCH_DATAGRAMS];
            for (k, (len, buffer)) in lens.iter_mut().zip(&mut self.outbox[..room]).enumerate() {
                flow.stamp(k as u64, &mut self.payload);
                *len = write_datagram(*sequence, &self.payload, buffer);
                *sequence += 1;
            }
            let transmits: [Transmit<'_>; BATCH_DATAGRAMS] = core::array::from_fn(|k| Transmit {
                to: self.server,
                datagram: &self.outbox[k][..lens[k]],
            });
            // The ids went out in order; should a send in the middle fail,
            // one id is left waiting and counted lost.
            let (_, sent) = send_all(&self.sockets[i], &transmits[..room]);
            for _ in 0..sent {
                flow.sent(now);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    // The imports live in the test, which the bench target (built with
    // `cfg(test)` but no harness) leaves out.
    #[test]
    fn floor_datagrams_are_as_long_as_payload_packets_of_the_same_sequence() {
        use super::*;
        use netcode_proto::Key;
        use netcode_proto::packet::{Packet, sequence_bytes, write_packet};

        let payload = payload(PAYLOAD_BYTES);
        let key = Key::from_bytes([9; 32]);
        for sequence in [0, 1, 255, 256, 65_535, 65_536, 1 << 40, u64::MAX] {
            let mut packet = [0; MAX_PACKET_BYTES];
            let expected = write_packet(&Packet::Payload(&payload), sequence, &key, 7, &mut packet)
                .expect("a payload packet");
            let mut datagram = [0; MAX_PACKET_BYTES];
            let len = write_datagram(sequence, &payload, &mut datagram);
            assert_eq!(len, expected, "sequence {sequence}");
            let header = 1 + sequence_bytes(sequence);
            assert_eq!(datagram[..header], packet[..header], "sequence {sequence}");
            assert_eq!(payload_of(&datagram[..len]), payload);
        }
    }
}

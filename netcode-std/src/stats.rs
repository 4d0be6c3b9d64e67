//! What the transport itself counts, beside the core's protocol counters.

use netcode_proto::stats::Stats;

/// Counters of a client's or server's sockets and queues.
///
/// The protocol's own counters (packets by type, drops by reason) are in
/// `stats()`; these say what happened around them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TransportStats {
    /// Datagrams read from the sockets.
    pub datagrams_received: u64,
    /// Datagrams handed to the operating system.
    pub datagrams_sent: u64,
    /// Batched reads (`transport::recv_batch`; on Linux one `recvmmsg`
    /// each, including the last one that finds the socket empty; under
    /// tokio, a read the reactor's readiness spared costs no system call
    /// but is counted).
    pub receive_calls: u64,
    /// Batched sends (`transport::send_batch`; on Linux one `sendmmsg`,
    /// or one `sendto` for a single datagram).
    pub send_calls: u64,
    /// Sends the operating system refused (full buffer, unreachable, ...).
    pub send_errors: u64,
    /// Sends to an address family this client or server has no socket for.
    pub send_no_socket: u64,
    /// Receive errors skipped: ICMP "port unreachable" noise reported as
    /// connection refused or reset, interrupted calls, and others.
    pub receive_errors: u64,
    /// Payloads dropped because the receive queue already held 256.
    pub queue_full: u64,
    /// Events dropped because nobody drained the event queue.
    pub events_dropped: u64,
    /// Times passed to `update` (or `drain_socket`) that were not finite
    /// and were ignored.
    pub times_not_finite: u64,
    /// Times earlier than the previous one: the clock stood still.
    pub times_backward: u64,
    /// Forward steps longer than `MAX_TIME_STEP`, counted as that.
    pub time_jumps: u64,
}

/// Adds every counter of `from` to `into`.
pub(crate) fn accumulate(into: &mut Stats, from: &Stats) {
    for (a, b) in into.sent.iter_mut().zip(from.sent.iter()) {
        *a += b;
    }
    for (a, b) in into.received.iter_mut().zip(from.received.iter()) {
        *a += b;
    }
    for (a, b) in into.dropped.iter_mut().zip(from.dropped.iter()) {
        *a += b;
    }
}

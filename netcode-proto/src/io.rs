//! How the sans-IO client and server hand datagrams and events back to the
//! caller.
//!
//! STANDARD.md: none (the sans-IO seam of this crate).
//!
//! Every call that can produce output (`handle`, `update`, `send_payload`,
//! `disconnect`, ...) takes an `&mut impl Output<E>`: the caller sends each
//! datagram with its socket (or simulator, or test harness) and reacts to
//! each event, synchronously and without any queue inside the core.

use core::net::SocketAddr;

use crate::constants::MAX_PACKET_BYTES;
use crate::dropped::DroppedDatagram;
use crate::durable::PersistRequest;

/// Where the core puts what it produces: datagrams to send and events of
/// type `E` ([`ServerEvent`](crate::server::ServerEvent) or
/// [`ClientEvent`](crate::client::ClientEvent)).
pub trait Output<E> {
    /// Sends one datagram to `to`. The bytes are only valid during the call.
    fn send(&mut self, to: SocketAddr, datagram: &[u8]);

    /// Reports an event.
    fn event(&mut self, event: E);

    /// Sends one datagram to `to` that `write` writes: it is handed a
    /// buffer of at least [`MAX_PACKET_BYTES`] bytes whose contents are
    /// unspecified, writes the datagram at its start and returns its
    /// length, or `None` to send nothing. Returns what `write` returned.
    ///
    /// The core sends every packet it writes this way. The default writes
    /// into a buffer on the stack and passes it to [`send`](Self::send);
    /// an output with buffers of its own (a batch of datagrams waiting to
    /// leave) hands one of them instead, so the datagram is written in
    /// place rather than copied.
    fn send_with(
        &mut self,
        to: SocketAddr,
        write: &mut dyn FnMut(&mut [u8]) -> Option<usize>,
    ) -> Option<usize> {
        let mut buffer = [0u8; MAX_PACKET_BYTES];
        let length = write(&mut buffer)?;
        self.send(to, buffer.get(..length)?);
        Some(length)
    }

    /// Reports a received datagram that was dropped, with its sender and
    /// the reason (already counted in the client's or server's
    /// [`Stats`](crate::stats::Stats)). Called once per dropped datagram,
    /// from `handle`; the default does nothing, so an output that only
    /// sends pays nothing for it. A host layer logs here.
    fn dropped(&mut self, dropped: DroppedDatagram) {
        let _ = dropped;
    }

    /// Handed, by a server started with a restored token history
    /// ([`Server::start_restored`](crate::server::Server::start_restored)),
    /// a newly used connect token whose record must become durable
    /// (written and synced to storage that survives a crash) before the
    /// server sends anything under its keys. Write
    /// [`request.token()`](PersistRequest::token) when convenient (off the
    /// server's loop, batched with others under one sync), then hand the
    /// request back with the outcome through
    /// [`Server::token_persisted`](crate::server::Server::token_persisted):
    /// the held request is answered then. Until then the token's requests
    /// are dropped unanswered
    /// ([`DropReason::TokenNotDurable`](crate::stats::DropReason::TokenNotDurable))
    /// and the server asks nothing more for it; every other client is
    /// served as usual. Each request must be handed back once, durable or
    /// failed (a failure makes the token's next request ask again).
    ///
    /// The default drops the request: a server started with a restored
    /// history but no storage behind its output admits no new token,
    /// rather than one that a crash could forget. Servers started with
    /// [`Server::start`](crate::server::Server::start) never hand one.
    fn persist_used_token(&mut self, request: PersistRequest) {
        let _ = request;
    }
}

/// An [`Output`] that sends with a closure and ignores events.
#[derive(Debug)]
pub struct SendFn<F>(pub F);

impl<E, F: FnMut(SocketAddr, &[u8])> Output<E> for SendFn<F> {
    fn send(&mut self, to: SocketAddr, datagram: &[u8]) {
        (self.0)(to, datagram);
    }

    fn event(&mut self, _event: E) {}
}

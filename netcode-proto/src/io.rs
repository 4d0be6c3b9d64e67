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

use crate::server::UsedToken;
use crate::stats::DroppedDatagram;

/// Where the core puts what it produces: datagrams to send and events of
/// type `E` ([`ServerEvent`](crate::server::ServerEvent) or
/// [`ClientEvent`](crate::client::ClientEvent)).
pub trait Output<E> {
    /// Sends one datagram to `to`. The bytes are only valid during the call.
    fn send(&mut self, to: SocketAddr, datagram: &[u8]);

    /// Reports an event.
    fn event(&mut self, event: E);

    /// Reports a received datagram that was dropped, with its sender and
    /// the reason (already counted in the client's or server's
    /// [`Stats`](crate::stats::Stats)). Called once per dropped datagram,
    /// from `handle`; the default does nothing, so an output that only
    /// sends pays nothing for it. A host layer logs here.
    fn dropped(&mut self, dropped: DroppedDatagram) {
        let _ = dropped;
    }

    /// Asked by a server started with a restored token history
    /// ([`Server::start_restored`](crate::server::Server::start_restored)),
    /// before it sends anything under a newly used connect token's keys:
    /// make `token` durable (written and synced to storage that survives a
    /// crash) and return whether it now is. Until it returns true, the
    /// server drops that token's requests, unanswered
    /// ([`DropReason::TokenNotDurable`](crate::stats::DropReason::TokenNotDurable)),
    /// and asks again at the client's next retry (10 Hz); a host may
    /// return false while a batched sync is under way. Each token is
    /// passed until one call returns true, never after.
    ///
    /// The default says no: a server started with a restored history but
    /// no storage behind its output admits no new token, rather than one
    /// that a crash could forget. Servers started with
    /// [`Server::start`](crate::server::Server::start) never ask.
    fn persist_used_token(&mut self, token: &UsedToken) -> bool {
        let _ = token;
        false
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

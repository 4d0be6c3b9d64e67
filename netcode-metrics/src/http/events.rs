//! What the server tells of its connections: the address every request
//! carries ([`Peer`]), and the [`Event`]s an [`Observer`] is told as they
//! happen (why a connection was closed among them: [`Closure`]).

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

/// The address a request's connection comes from, in every request's
/// extensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Peer(pub SocketAddr);

/// Why a connection was closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Closure {
    /// The peer closed it, it failed, or the server shut down.
    Ended,
    /// Part of a request head came, but not the whole head within the
    /// header-read timeout.
    HeaderTimeout,
    /// Nothing came between requests: for the idle timeout, or for the
    /// header-read timeout where that ran out first.
    Idle,
    /// A newer connection took its slot
    /// ([`WhenFull::EvictOldestIdle`](super::WhenFull::EvictOldestIdle)).
    Evicted,
    /// It was open for the whole connection lifetime.
    LifetimeOver,
}

/// Something that happened to the server's connections, told to its
/// [`Observer`].
#[derive(Debug)]
#[non_exhaustive]
pub enum Event<'a> {
    /// A connection from `peer` was accepted and holds a slot.
    Opened {
        /// Where it comes from.
        peer: SocketAddr,
    },
    /// Every slot was taken: the connection from `peer` took the place of
    /// the oldest idle one, idle for `idle`, which is being closed.
    Evicted {
        /// Where the new connection comes from.
        peer: SocketAddr,
        /// How long the closed connection had been idle.
        idle: Duration,
    },
    /// Every slot was taken by a connection mid-request: the one from
    /// `peer` was closed at once.
    Refused {
        /// Where the refused connection came from.
        peer: SocketAddr,
    },
    /// A request from `peer` was not answered within the request timeout:
    /// it got 408 after `after`.
    RequestTimedOut {
        /// Where it came from.
        peer: SocketAddr,
        /// How long it had been waiting for its answer.
        after: Duration,
    },
    /// The connection from `peer` was closed, and its slot given back.
    Closed {
        /// Where it came from.
        peer: SocketAddr,
        /// Why it was closed.
        closure: Closure,
    },
    /// Accepting a connection failed; the server waits a moment and tries
    /// again.
    AcceptFailed {
        /// What the operating system said.
        error: &'a io::Error,
    },
    /// At shutdown, `open` connections were still busy when the grace
    /// period ended, and were cut (they are not told as
    /// [`Closed`](Event::Closed) one by one).
    CutAtShutdown {
        /// How many.
        open: usize,
    },
}

/// Told of the server's [`Event`]s as they happen, from the tasks that
/// serve connections: it must not block. `()` ignores them.
pub trait Observer: Send + Sync {
    /// `event` happened.
    fn observe(&self, event: Event<'_>);
}

impl Observer for () {
    fn observe(&self, _event: Event<'_>) {}
}

//! The bounds of one listener: how many connections it holds and what a
//! new one gets when all are held, how long each part of a request may
//! take, how long a connection may live, and the size of a request head.

use std::num::NonZeroUsize;
use std::time::Duration;

/// Most bytes buffered per connection in each direction: a request's head
/// must fit (a larger one gets 431). hyper's least.
pub const MAX_HEAD_BYTES: usize = 8192;

/// Most header fields a request may have (more: 431).
pub const MAX_HEADERS: usize = 64;

/// What a connection that arrives when every slot is taken gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhenFull {
    /// It is not accepted until a slot is given back: it waits in the
    /// listen backlog (and may time out there). For endpoints whose peers
    /// are few and known, such as a scrape endpoint.
    Wait,
    /// It takes the slot of the oldest connection that is not in the middle
    /// of a request (silent, or still sending its head), which is closed
    /// ([`Event::Evicted`](super::Event::Evicted)); if every connection is
    /// mid-request, it is closed at once
    /// ([`Event::Refused`](super::Event::Refused)). For endpoints facing
    /// the internet.
    EvictOldestIdle,
}

/// The bounds of one listener.
///
/// [`Limits::new`] gives the conservative defaults; change the fields a
/// listener needs, as in the module's example.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections held at once.
    pub max_connections: NonZeroUsize,
    /// What a connection arriving when all are held gets.
    pub when_full: WhenFull,
    /// Time to send a request's whole head, from the connection's opening
    /// or the end of its previous answer; slower connections are closed.
    /// hyper's timer, which also runs while a connection is silent.
    pub header_read_timeout: Duration,
    /// Time a connection may stay silent, from its opening or the end of
    /// its previous answer, before it is closed; `None`: only the
    /// header-read timeout bounds silence.
    pub idle_timeout: Option<Duration>,
    /// Time a request has, once its head is in, to be answered (its body
    /// read included); past it the answer is 408 and the connection is
    /// closed. `None`: unbounded.
    pub request_timeout: Option<Duration>,
    /// The longest a connection is kept, however it is used; `None`:
    /// unbounded.
    pub connection_lifetime: Option<Duration>,
    /// At shutdown, time the requests in progress get to finish before
    /// their connections are cut.
    pub shutdown_grace: Duration,
}

impl Limits {
    /// At most `max_connections` at once, waiting when full; 5 s to send a
    /// head; no idle, request or lifetime bound; 1 s of grace at shutdown.
    pub const fn new(max_connections: NonZeroUsize) -> Self {
        Self {
            max_connections,
            when_full: WhenFull::Wait,
            header_read_timeout: Duration::from_secs(5),
            idle_timeout: None,
            request_timeout: None,
            connection_lifetime: None,
            shutdown_grace: Duration::from_secs(1),
        }
    }
}

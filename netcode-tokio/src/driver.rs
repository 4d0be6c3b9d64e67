//! What the server's and client's drivers share: the instants they feed
//! the host (tokio's clock, handed over as instants, never as numbers of
//! seconds), the one timer they sleep on until the protocol's next
//! deadline, and the wait for a socket to become readable.
//!
//! A driver turn is a poll: it asks the reactor whether a socket is
//! readable and the timer whether the deadline has passed, registering the
//! task's waker with both, and returns `Pending` having changed nothing, or
//! does the work that is due (synchronously, in that same poll) and returns
//! `Ready`. No turn is ever left half done, which is what makes every
//! async method of the crate cancellation-safe.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::{Instant, Sleep};

use crate::socket::TokioSocket;

/// The driver's timer.
#[derive(Debug)]
pub(crate) struct Driver {
    /// Armed at the protocol's next deadline whenever a turn waits.
    sleep: Pin<Box<Sleep>>,
}

/// Now on tokio's clock (so a paused or advanced test clock moves the
/// host too), as the instant the host takes.
pub(crate) fn now() -> std::time::Instant {
    Instant::now().into_std()
}

impl Driver {
    /// A timer. Needs a runtime with its timer enabled.
    pub(crate) fn new() -> Self {
        Self {
            sleep: Box::pin(tokio::time::sleep_until(Instant::now())),
        }
    }

    /// Whether the host's next deadline, `timeout` from now (`None`: no
    /// deadline), has passed; if not, arms the timer to wake the task then.
    pub(crate) fn poll_deadline(
        &mut self,
        timeout: Option<Duration>,
        cx: &mut Context<'_>,
    ) -> bool {
        let Some(timeout) = timeout else {
            return false;
        };
        if timeout.is_zero() {
            return true;
        }
        self.sleep.as_mut().reset(Instant::now() + timeout);
        self.sleep.as_mut().poll(cx).is_ready()
    }
}

/// The readiness of a relay of virtual peers: a notification the relay
/// gives when datagrams wait, as a future the driver polls in its turns.
pub(crate) struct RelayReady {
    notify: std::sync::Arc<tokio::sync::Notify>,
    notified: Pin<Box<tokio::sync::futures::OwnedNotified>>,
}

impl std::fmt::Debug for RelayReady {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RelayReady")
    }
}

impl RelayReady {
    /// Waits on `notify`.
    pub(crate) fn new(notify: std::sync::Arc<tokio::sync::Notify>) -> Self {
        let notified = Box::pin(std::sync::Arc::clone(&notify).notified_owned());
        Self { notify, notified }
    }

    /// Whether the relay said datagrams wait since the last time this was
    /// ready; if not, the task is woken when it does.
    pub(crate) fn poll_ready(&mut self, cx: &mut Context<'_>) -> bool {
        if self.notified.as_mut().poll(cx).is_ready() {
            self.notified = Box::pin(std::sync::Arc::clone(&self.notify).notified_owned());
            return true;
        }
        false
    }
}

/// A server or client a driver turns: what [`poll_turn`] needs of it.
pub(crate) trait Driven {
    /// Its timer.
    fn driver(&mut self) -> &mut Driver;
    /// Drains each socket the reactor reports readable, registering the
    /// task's waker with the others; whether any was.
    fn drain_readable(&mut self, cx: &mut Context<'_>) -> bool;
    /// How long until its next update is due, from now.
    fn timeout(&self) -> Option<Duration>;
    /// Reads the sockets and does what is due, now.
    fn update_now(&mut self);
}

/// One turn: drains the readable sockets and, once the deadline has come,
/// updates; `Ready` if it did either, else `Pending` with the waker
/// registered with the sockets and the timer.
pub(crate) fn poll_turn(host: &mut impl Driven, cx: &mut Context<'_>) -> Poll<()> {
    let drained = host.drain_readable(cx);
    let timeout = host.timeout();
    let due = host.driver().poll_deadline(timeout, cx);
    if due {
        host.update_now();
    }
    if drained || due {
        Poll::Ready(())
    } else {
        Poll::Pending
    }
}

/// Whether `socket` is readable as far as the reactor knows; if not, the
/// task is woken when it becomes so. An error (the runtime is shutting
/// down) counts as not readable: nothing will wake the task for it.
pub(crate) fn poll_readable(socket: &TokioSocket, cx: &mut Context<'_>) -> bool {
    matches!(socket.get_ref().poll_recv_ready(cx), Poll::Ready(Ok(())))
}

/// Takes what `take` finds in `host`'s queues, turning its driver with
/// `turn` until it finds something. Each turn either does work or
/// registers the waker, so this returns `Pending` only with the task set
/// to wake (tokio's cooperative budget, spent by each readiness poll, ends
/// a long run of turns that find nothing).
pub(crate) fn poll_until<H, T>(
    host: &mut H,
    cx: &mut Context<'_>,
    mut turn: impl FnMut(&mut H, &mut Context<'_>) -> Poll<()>,
    mut take: impl FnMut(&mut H) -> Option<T>,
) -> Poll<T> {
    loop {
        if let Some(item) = take(host) {
            return Poll::Ready(item);
        }
        if turn(host, cx).is_pending() {
            return Poll::Pending;
        }
    }
}

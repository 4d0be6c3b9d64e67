//! The connection cap: a listener holds at most so many connections, each
//! in a [`Slot`] that knows whether a request is in progress on it and
//! when it last did anything. When every slot is taken, the accept loop
//! either waits for one to be given back ([`Slots::room`], under
//! [`WhenFull::Wait`]) or lets a new connection take the place of the
//! oldest one not in the middle of a request (idle between requests, or
//! still sending its header), which is told to close; only when every
//! connection is mid-request is the new one turned away
//! ([`WhenFull::EvictOldestIdle`]). Attackers' connections are old and idle
//! by the time real requests arrive, so they are the ones that go.
//!
//! [`TrackedStream`] marks the slot whenever bytes arrive, which is what
//! tells a silent connection (closed by the idle timeout) from a slow one
//! (closed by the header-read timeout).

use std::collections::BTreeMap;
use std::io;
use std::num::NonZeroUsize;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::limits::WhenFull;

/// One open connection's place.
#[derive(Debug)]
pub(crate) struct Slot {
    /// Its place in accept order.
    id: u64,
    /// When time is counted from (microseconds below are since then).
    epoch: Instant,
    /// Requests in progress (0 or 1 on HTTP/1).
    in_flight: AtomicU32,
    /// When it opened or its last request ended, in microseconds.
    quiet_since: AtomicU64,
    /// When bytes last arrived, in microseconds.
    last_read: AtomicU64,
    /// Told when another connection takes its place.
    evicted: Notify,
}

impl Slot {
    fn micros(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    /// A request has begun on it; it is in progress until the guard is
    /// dropped.
    pub(crate) fn request(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        InFlight(Arc::clone(self))
    }

    /// For how long it has been idle: no request in progress and no byte
    /// received since it opened or its last request ended; `None` if it is
    /// not idle.
    pub(crate) fn idle_for(&self) -> Option<Duration> {
        if self.in_flight.load(Ordering::Acquire) > 0 {
            return None;
        }
        let quiet_since = self.quiet_since.load(Ordering::Acquire);
        if self.last_read.load(Ordering::Acquire) > quiet_since {
            return None;
        }
        Some(Duration::from_micros(
            self.micros().saturating_sub(quiet_since),
        ))
    }

    /// When its current quiet spell began (it opened, or its last request
    /// ended).
    pub(crate) fn quiet_since(&self) -> Instant {
        self.epoch + Duration::from_micros(self.quiet_since.load(Ordering::Acquire))
    }

    /// Resolves when another connection has taken its place.
    pub(crate) async fn evicted(&self) {
        self.evicted.notified().await;
    }

    fn busy(&self) -> bool {
        self.in_flight.load(Ordering::Acquire) > 0
    }
}

/// A request in progress on a slot; ending it starts a quiet spell.
#[derive(Debug)]
pub(crate) struct InFlight(Arc<Slot>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let slot = &self.0;
        slot.quiet_since.store(slot.micros(), Ordering::Release);
        slot.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The slots of one listener.
#[derive(Debug)]
pub(crate) struct Slots {
    cap: usize,
    epoch: Instant,
    taken: Mutex<Taken>,
    /// Told whenever a slot is given back.
    freed: Notify,
}

#[derive(Debug, Default)]
struct Taken {
    next_id: u64,
    /// The connections holding a slot, oldest first.
    open: BTreeMap<u64, Arc<Slot>>,
}

/// What became of a new connection.
#[derive(Debug)]
pub(crate) enum Admission {
    /// It has a slot that was free.
    Admitted(Held),
    /// It has the slot of an older connection, idle for this long, which
    /// has been told to close.
    Evicted(Held, Duration),
    /// Every slot is taken (under [`WhenFull::EvictOldestIdle`], by a
    /// connection mid-request): it must be closed.
    Refused,
}

impl Slots {
    /// Room for `cap` connections.
    pub(crate) fn new(cap: NonZeroUsize) -> Arc<Self> {
        Arc::new(Self {
            cap: cap.get(),
            epoch: Instant::now(),
            taken: Mutex::new(Taken::default()),
            freed: Notify::new(),
        })
    }

    /// How many connections hold a slot now.
    pub(crate) fn len(&self) -> usize {
        self.taken().open.len()
    }

    /// Resolves once fewer connections than the cap hold a slot.
    pub(crate) async fn room(&self) {
        loop {
            // Made before looking, so that a slot given back in between
            // is not missed.
            let freed = self.freed.notified();
            if self.len() < self.cap {
                return;
            }
            freed.await;
        }
    }

    fn taken(&self) -> std::sync::MutexGuard<'_, Taken> {
        // Every change under the lock is a single insertion or removal,
        // so a poisoned lock still holds a consistent table.
        self.taken.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A slot for a new connection, if one is free or, when `when_full`
    /// allows it, can be freed.
    pub(crate) fn admit(self: &Arc<Self>, when_full: WhenFull) -> Admission {
        let mut taken = self.taken();
        let mut evicted = None;
        if taken.open.len() >= self.cap {
            if when_full == WhenFull::Wait {
                return Admission::Refused;
            }
            let Some(oldest) = taken
                .open
                .iter()
                .find(|(_, slot)| !slot.busy())
                .map(|(id, _)| *id)
            else {
                return Admission::Refused;
            };
            if let Some(slot) = taken.open.remove(&oldest) {
                slot.evicted.notify_one();
                evicted = Some(slot.quiet_since().elapsed());
            }
        }
        let id = taken.next_id;
        taken.next_id += 1;
        let now = u64::try_from(self.epoch.elapsed().as_micros()).unwrap_or(u64::MAX);
        let slot = Arc::new(Slot {
            id,
            epoch: self.epoch,
            in_flight: AtomicU32::new(0),
            quiet_since: AtomicU64::new(now),
            last_read: AtomicU64::new(0),
            evicted: Notify::new(),
        });
        taken.open.insert(id, Arc::clone(&slot));
        let held = Held {
            slot,
            slots: Arc::clone(self),
        };
        match evicted {
            Some(idle) => Admission::Evicted(held, idle),
            None => Admission::Admitted(held),
        }
    }
}

/// A connection's slot, given back when dropped.
#[derive(Debug)]
pub(crate) struct Held {
    /// The slot.
    pub(crate) slot: Arc<Slot>,
    slots: Arc<Slots>,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.slots.taken().open.remove(&self.slot.id);
        self.slots.freed.notify_waiters();
    }
}

/// A connection's socket, marking its slot whenever bytes arrive.
#[derive(Debug)]
pub(crate) struct TrackedStream {
    stream: TcpStream,
    slot: Arc<Slot>,
}

impl TrackedStream {
    /// `stream`, marking `slot`.
    pub(crate) fn new(stream: TcpStream, slot: Arc<Slot>) -> Self {
        Self { stream, slot }
    }
}

impl AsyncRead for TrackedStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.stream).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            // Strictly after the quiet spell's start, even within the same
            // microsecond.
            let now = this
                .slot
                .micros()
                .max(this.slot.quiet_since.load(Ordering::Acquire) + 1);
            this.slot.last_read.store(now, Ordering::Release);
        }
        polled
    }
}

impl AsyncWrite for TrackedStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(admission: Admission) -> Held {
        match admission {
            Admission::Admitted(held) | Admission::Evicted(held, _) => held,
            Admission::Refused => panic!("refused"),
        }
    }

    fn cap(n: usize) -> NonZeroUsize {
        NonZeroUsize::new(n).unwrap()
    }

    #[tokio::test]
    async fn a_full_listener_drops_its_oldest_idle_connection_or_refuses() {
        let slots = Slots::new(cap(3));
        let evict = WhenFull::EvictOldestIdle;
        let first = held(slots.admit(evict));
        let second = held(slots.admit(evict));
        let third = held(slots.admit(evict));
        assert_eq!(slots.len(), 3);
        // The oldest is mid-request: the second goes.
        let request = first.slot.request();
        assert!(first.slot.idle_for().is_none());
        let Admission::Evicted(fourth, _) = slots.admit(evict) else {
            panic!("expected an eviction");
        };
        assert_eq!(slots.len(), 3);
        tokio::time::timeout(Duration::from_secs(1), second.slot.evicted())
            .await
            .expect("the second was told");
        // Its guard going away later changes nothing.
        drop(second);
        assert_eq!(slots.len(), 3);
        // Everyone mid-request: refused.
        let _requests = (third.slot.request(), fourth.slot.request());
        assert!(matches!(slots.admit(evict), Admission::Refused));
        // A request ending makes its connection idle, and evictable.
        drop(request);
        assert!(first.slot.idle_for().is_some());
        assert!(matches!(slots.admit(evict), Admission::Evicted(..)));
        drop((first, third, fourth));
        assert_eq!(slots.len(), 0);
    }

    #[tokio::test]
    async fn a_full_listener_that_waits_takes_the_next_connection_once_one_leaves() {
        let slots = Slots::new(cap(2));
        let first = held(slots.admit(WhenFull::Wait));
        let second = held(slots.admit(WhenFull::Wait));
        // Full: nobody is evicted, however idle, and there is no room.
        assert!(first.slot.idle_for().is_some());
        assert!(matches!(slots.admit(WhenFull::Wait), Admission::Refused));
        let waiting = tokio::time::timeout(Duration::from_millis(50), slots.room()).await;
        assert!(waiting.is_err(), "room while full");
        // One leaves, on another task, while the loop waits.
        let room = tokio::spawn({
            let slots = Arc::clone(&slots);
            async move { slots.room().await }
        });
        tokio::task::yield_now().await;
        drop(first);
        tokio::time::timeout(Duration::from_secs(1), room)
            .await
            .expect("room once a connection left")
            .unwrap();
        let third = held(slots.admit(WhenFull::Wait));
        assert_eq!(slots.len(), 2);
        drop((second, third));
    }
}

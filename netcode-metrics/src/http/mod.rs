//! A bounded HTTP/1 server, for endpoints that strangers can reach: the
//! scrape endpoint of this crate ([`MetricsEndpoint`](crate::MetricsEndpoint))
//! and the netcode matcher's token and metrics listeners are served by it.
//!
//! [`HttpServer`] takes connections from a tokio listener and serves each
//! with hyper's HTTP/1 connection, calling a handler for each request. It
//! bounds what any peer can hold, by [`Limits`]:
//!
//! * connections at once: when every slot is taken, a new connection waits
//!   in the listen backlog ([`WhenFull::Wait`]), or takes the place of the
//!   oldest connection not in the middle of a request, which is closed
//!   ([`WhenFull::EvictOldestIdle`]: silent connections held by an attacker
//!   are old by the time real callers come, so they are the ones that go);
//! * the request head: at most [`MAX_HEAD_BYTES`] and [`MAX_HEADERS`] fields
//!   (beyond, hyper answers 431 and closes), sent whole within the
//!   header-read timeout, counted from the connection's opening or the end
//!   of its previous answer;
//! * silence between requests (the idle timeout), the time a request takes
//!   to be answered once its head is in (the request timeout: past it, 408
//!   and the connection is closed), and a connection's whole lifetime.
//!
//! It stops when the shutdown future given to [`HttpServer::serve`]
//! resolves: it stops accepting, closes idle connections, and gives the
//! requests in progress a grace period before cutting their connections.
//!
//! Each request carries the address of its peer in its extensions
//! ([`Peer`]). What happens to connections (opened, closed and why, limits
//! that bit, failures to accept) is told to an [`Observer`] as [`Event`]s:
//! the server counts and logs nothing itself, so each program counts and
//! reports in its own way.
//!
//! There is no TLS: put the server behind a proxy that terminates it, or
//! keep it on a private network.
//!
//! ```no_run
//! # async fn example() -> std::io::Result<()> {
//! use std::num::NonZeroUsize;
//! use std::time::Duration;
//! use netcode_metrics::http::{HttpServer, Limits, WhenFull};
//!
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! let limits = Limits {
//!     when_full: WhenFull::EvictOldestIdle,
//!     idle_timeout: Some(Duration::from_secs(5)),
//!     request_timeout: Some(Duration::from_secs(10)),
//!     ..Limits::new(NonZeroUsize::new(1024).unwrap())
//! };
//! let answer = |_request| async { hyper::Response::new(String::from("ok\n")) };
//! // Sending on `stop` (or dropping it) shuts the server down.
//! let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
//! # drop(stop);
//! HttpServer::new(listener, limits)
//!     .serve(answer, async {
//!         let _ = stopped.await;
//!     })
//!     .await;
//! # Ok(())
//! # }
//! ```

mod connection;
mod events;
mod limits;
mod slots;

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::body::{Body, Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::{Request, Response};
use hyper_util::rt::TokioTimer;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

pub use self::events::{Closure, Event, Observer, Peer};
pub use self::limits::{Limits, MAX_HEAD_BYTES, MAX_HEADERS, WhenFull};

use self::connection::Serving;
use self::slots::{Admission, Slots};

/// How long the accept loop waits before accepting again after accepting
/// failed (out of file descriptors or memory), so that it does not spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// An HTTP/1 server on one listener, within [`Limits`].
pub struct HttpServer {
    listener: TcpListener,
    limits: Limits,
    observer: Arc<dyn Observer>,
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer")
            .field("listener", &self.listener)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl HttpServer {
    /// A server taking connections from `listener` within `limits`,
    /// telling its events to nobody.
    pub fn new(listener: TcpListener, limits: Limits) -> Self {
        Self {
            listener,
            limits,
            observer: Arc::new(()),
        }
    }

    /// The same server, telling its events to `observer`.
    pub fn with_observer(mut self, observer: Arc<dyn Observer>) -> Self {
        self.observer = observer;
        self
    }

    /// The address the listener is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves each request with `handler` until `shutdown` resolves, then
    /// lets the requests in progress finish within the grace period and
    /// returns once every connection is closed. Must run on a tokio runtime
    /// with time and I/O enabled; each connection is a task of its own.
    pub async fn serve<H, F, B>(self, handler: H, shutdown: impl Future<Output = ()>)
    where
        H: Fn(Request<Incoming>) -> F + Send + Sync + 'static,
        F: Future<Output = Response<B>> + Send + 'static,
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let Self {
            listener,
            limits,
            observer,
        } = self;
        let mut http = http1::Builder::new();
        http.timer(TokioTimer::new())
            .header_read_timeout(limits.header_read_timeout)
            .keep_alive(true)
            .max_buf_size(MAX_HEAD_BYTES)
            .max_headers(MAX_HEADERS);
        let serving = Arc::new(Serving {
            handler,
            http,
            limits,
            observer: Arc::clone(&observer),
        });
        let slots = Slots::new(limits.max_connections);
        let graceful = GracefulShutdown::new();
        let mut connections = JoinSet::new();
        tokio::pin!(shutdown);
        loop {
            // Reap the connections that ended (a panic in one has been
            // reported by the panic hook already).
            while connections.try_join_next().is_some() {}
            if limits.when_full == WhenFull::Wait {
                tokio::select! {
                    biased;
                    () = &mut shutdown => break,
                    () = slots.room() => {}
                }
            }
            let (stream, peer) = tokio::select! {
                biased;
                () = &mut shutdown => break,
                accepted = listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    Err(error) => {
                        observer.observe(Event::AcceptFailed { error: &error });
                        tokio::time::sleep(ACCEPT_BACKOFF).await;
                        continue;
                    }
                },
            };
            let held = match slots.admit(limits.when_full) {
                Admission::Admitted(held) => held,
                Admission::Evicted(held, idle) => {
                    observer.observe(Event::Evicted { peer, idle });
                    held
                }
                Admission::Refused => {
                    observer.observe(Event::Refused { peer });
                    drop(stream);
                    continue;
                }
            };
            // Answers are small and sent whole: no reason to hold them back.
            let _ = stream.set_nodelay(true);
            observer.observe(Event::Opened { peer });
            connections.spawn(connection::serve(
                Arc::clone(&serving),
                stream,
                peer,
                held,
                graceful.watcher(),
            ));
        }
        drop(listener);
        let finished = tokio::time::timeout(limits.shutdown_grace, graceful.shutdown()).await;
        while connections.try_join_next().is_some() {}
        if finished.is_err() && !connections.is_empty() {
            observer.observe(Event::CutAtShutdown {
                open: connections.len(),
            });
        }
        connections.shutdown().await;
    }
}

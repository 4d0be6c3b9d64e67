//! The accept loop that serves a router to the internet: each connection
//! gets a slot under the listener's cap ([`Slots`]) and is driven by
//! hyper's HTTP/1 connection with a header-read timeout and small buffers;
//! a connection silent for the idle timeout is closed, and so is one
//! whose place a newer connection takes. On shutdown the listener stops
//! accepting, idle connections close, and requests in progress get a
//! grace period to finish.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::Request;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use tokio::net::{TcpListener, TcpStream};
use tower::ServiceExt;

use crate::limits::Peer;
use crate::metrics::Limit;
use crate::monitor::Monitor;
use crate::slots::{Admission, Held, Slots, TrackedStream};

/// Most bytes hyper buffers per connection, in each direction: a
/// request's header must fit (a larger one gets 431). hyper's least.
pub(crate) const MAX_BUFFER_BYTES: usize = 8192;

/// Most header fields a request may have (more: 431).
pub(crate) const MAX_HEADERS: usize = 64;

/// How long to wait before accepting again after accepting failed (out of
/// file descriptors or memory).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Least time between two lines about failing to accept.
const ACCEPT_REPORT_EVERY: Duration = Duration::from_secs(10);

/// How one listener treats its connections.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnectionLimits {
    /// Time to send a whole header, from the connection's opening or the
    /// end of its previous answer.
    pub(crate) header_read_timeout: Duration,
    /// Time a connection may stay silent between requests.
    pub(crate) idle_timeout: Duration,
    /// Time requests in progress get to finish at shutdown.
    pub(crate) shutdown_grace: Duration,
}

/// Serves `app` on `listener` with `slots` and `limits` until `shutdown`
/// resolves, then lets the connections finish (within the grace period).
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    slots: Arc<Slots>,
    limits: ConnectionLimits,
    monitor: Arc<Monitor>,
    shutdown: impl Future<Output = ()>,
) {
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .keep_alive(true)
        .max_buf_size(MAX_BUFFER_BYTES)
        .max_headers(MAX_HEADERS);
    let http = Arc::new(http);
    let graceful = GracefulShutdown::new();
    // Failures to accept since the last line about them, and when that was.
    let (mut accept_failures, mut reported) = (0_u64, None::<Instant>);
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    accept_failures += 1;
                    if reported.is_none_or(|at| at.elapsed() >= ACCEPT_REPORT_EVERY) {
                        eprintln!(
                            "matcher: cannot accept connections ({accept_failures} failures \
                             since the last report): {e}"
                        );
                        (accept_failures, reported) = (0, Some(Instant::now()));
                    }
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            },
        };
        let held = match slots.admit() {
            Admission::Admitted(held) => held,
            Admission::Evicted(held, idle) => {
                monitor.bit(Limit::ConnectionCap, || {
                    format!(
                        "{} connections open: closed one idle for {:.1} s to make room",
                        slots.cap(),
                        idle.as_secs_f64()
                    )
                });
                held
            }
            Admission::Refused => {
                monitor.bit(Limit::ConnectionCap, || {
                    format!(
                        "{} connections open, every one mid-request: turned {peer} away",
                        slots.cap()
                    )
                });
                drop(stream);
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        monitor.metrics.connection_opened();
        tokio::spawn(connection(
            stream,
            peer,
            held,
            app.clone(),
            Arc::clone(&http),
            limits,
            Arc::clone(&monitor),
            graceful.watcher(),
        ));
    }
    drop(listener);
    if tokio::time::timeout(limits.shutdown_grace, graceful.shutdown())
        .await
        .is_err()
    {
        eprintln!("matcher: connections still open at shutdown were cut");
    }
}

/// How a connection ended.
enum Ended {
    /// hyper is done with it (closed by the peer, an error, or shutdown).
    Served(Result<(), hyper::Error>),
    /// A newer connection took its slot.
    Evicted,
    /// Silent for the idle timeout.
    Idle,
}

/// Serves one connection until it ends, then counts how.
#[allow(clippy::too_many_arguments)]
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    held: Held,
    app: Router,
    http: Arc<http1::Builder>,
    limits: ConnectionLimits,
    monitor: Arc<Monitor>,
    watcher: Watcher,
) {
    let slot = Arc::clone(&held.slot);
    let service_slot = Arc::clone(&slot);
    let service = service_fn(move |mut request: Request<Incoming>| {
        request.extensions_mut().insert(Peer(peer));
        let in_flight = service_slot.request();
        let answer = app.clone().oneshot(request.map(axum::body::Body::new));
        async move {
            let answer: Result<_, Infallible> = answer.await;
            drop(in_flight);
            answer
        }
    });
    let io = TokioIo::new(TrackedStream::new(stream, Arc::clone(&slot)));
    // The connection (and its socket) is dropped at the end of this block,
    // before its slot is given back.
    let ended = {
        let mut served = std::pin::pin!(watcher.watch(http.serve_connection(io, service)));
        loop {
            // When it will have been quiet for the idle timeout; if that is
            // past, it is not idle (mid-request or sending): look again later.
            let due = slot.quiet_since() + limits.idle_timeout;
            let now = tokio::time::Instant::now();
            let check_at = if due > now {
                due
            } else {
                now + limits.idle_timeout / 4
            };
            tokio::select! {
                result = &mut served => break Ended::Served(result),
                () = slot.evicted() => break Ended::Evicted,
                () = tokio::time::sleep_until(check_at) => {
                    if slot.idle_for().is_some_and(|idle| idle >= limits.idle_timeout) {
                        break Ended::Idle;
                    }
                }
            }
        }
    };
    match ended {
        Ended::Served(Err(e)) if e.is_timeout() => {
            // hyper's header-read timer also runs while a connection is
            // silent: which one it was depends on whether bytes came.
            let limit = match slot.idle_for() {
                Some(_) => Limit::IdleTimeout,
                None => Limit::HeaderTimeout,
            };
            monitor.bit(limit, || {
                format!(
                    "closed {peer}: no whole header after {:?}",
                    limits.header_read_timeout
                )
            });
        }
        Ended::Idle => monitor.bit(Limit::IdleTimeout, || {
            format!("closed {peer}: silent for {:?}", limits.idle_timeout)
        }),
        Ended::Served(_) | Ended::Evicted => {}
    }
    drop(held);
    monitor.metrics.connection_closed();
}

//! One connection's life: hyper's HTTP/1 connection serving the handler
//! with the request timeout around each request, and beside it the watch
//! for what hyper does not bound by itself (a newer connection taking its
//! slot, silence between requests, the connection's lifetime); then why it
//! ended, told to the observer.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use http_body_util::{Either, Full};
use hyper::body::{Body, Bytes, Incoming};
use hyper::header::{CONNECTION, CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::Watcher;
use tokio::net::TcpStream;
use tokio::time::Instant;

use super::events::{Closure, Event, Observer, Peer};
use super::limits::Limits;
use super::slots::{Held, TrackedStream};

/// What every connection of one server shares.
pub(super) struct Serving<H> {
    /// Answers each request.
    pub(super) handler: H,
    /// hyper's settings for each connection.
    pub(super) http: http1::Builder,
    /// The server's bounds.
    pub(super) limits: Limits,
    /// Told what happens.
    pub(super) observer: Arc<dyn Observer>,
}

/// How a connection ended.
enum Ended {
    /// hyper is done with it (closed by the peer, an error, a timeout, or
    /// shutdown).
    Served(Result<(), hyper::Error>),
    /// Ended for a reason of the server's watch.
    Closed(Closure),
}

/// Serves one connection until it ends, then gives its slot back and
/// tells the observer why it ended.
pub(super) async fn serve<H, F, B>(
    serving: Arc<Serving<H>>,
    stream: TcpStream,
    peer: SocketAddr,
    held: Held,
    watcher: Watcher,
) where
    H: Fn(Request<Incoming>) -> F + Send + Sync + 'static,
    F: Future<Output = Response<B>> + Send + 'static,
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let limits = serving.limits;
    let opened = Instant::now();
    let slot = Arc::clone(&held.slot);
    let service = {
        let (serving, slot) = (Arc::clone(&serving), Arc::clone(&slot));
        service_fn(move |mut request: Request<Incoming>| {
            request.extensions_mut().insert(Peer(peer));
            let in_flight = slot.request();
            let started = Instant::now();
            let answer = (serving.handler)(request);
            let observer = Arc::clone(&serving.observer);
            async move {
                let response = match limits.request_timeout {
                    None => answer.await.map(Either::Left),
                    Some(limit) => match tokio::time::timeout(limit, answer).await {
                        Ok(response) => response.map(Either::Left),
                        Err(_) => {
                            observer.observe(Event::RequestTimedOut {
                                peer,
                                after: started.elapsed(),
                            });
                            timed_out()
                        }
                    },
                };
                drop(in_flight);
                Ok::<_, Infallible>(response)
            }
        })
    };
    let io = TokioIo::new(TrackedStream::new(stream, Arc::clone(&slot)));
    // The connection (and its socket) is dropped at the end of this block,
    // before its slot is given back.
    let ended = {
        let mut served = std::pin::pin!(watcher.watch(serving.http.serve_connection(io, service)));
        let lifetime_over = async {
            match limits.connection_lifetime {
                Some(lifetime) => tokio::time::sleep_until(opened + lifetime).await,
                None => std::future::pending().await,
            }
        };
        let mut lifetime_over = std::pin::pin!(lifetime_over);
        let idle_timeout = limits.idle_timeout.unwrap_or_default();
        loop {
            // When it will have been quiet for the idle timeout; if that is
            // past, it is not idle (mid-request or sending): look again later.
            let due = slot.quiet_since() + idle_timeout;
            let now = Instant::now();
            let check_at = if due > now {
                due
            } else {
                now + idle_timeout / 4
            };
            tokio::select! {
                result = &mut served => break Ended::Served(result),
                () = slot.evicted() => break Ended::Closed(Closure::Evicted),
                () = &mut lifetime_over => break Ended::Closed(Closure::LifetimeOver),
                () = tokio::time::sleep_until(check_at), if limits.idle_timeout.is_some() => {
                    if slot.idle_for().is_some_and(|idle| idle >= idle_timeout) {
                        break Ended::Closed(Closure::Idle);
                    }
                }
            }
        }
    };
    let closure = match ended {
        // hyper's header-read timer also runs while a connection is
        // silent: which one it was depends on whether bytes came.
        Ended::Served(Err(e)) if e.is_timeout() => match slot.idle_for() {
            Some(_) => Closure::Idle,
            None => Closure::HeaderTimeout,
        },
        Ended::Served(_) => Closure::Ended,
        Ended::Closed(closure) => closure,
    };
    drop(held);
    serving.observer.observe(Event::Closed { peer, closure });
}

/// The answer to a request that ran out of time: 408, closing the
/// connection (its request may be half read).
fn timed_out<B>() -> Response<Either<B, Full<Bytes>>> {
    let body = Full::new(Bytes::from_static(b"request timeout\n"));
    let mut response = Response::new(Either::Right(body));
    *response.status_mut() = StatusCode::REQUEST_TIMEOUT;
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(CONNECTION, HeaderValue::from_static("close"));
    response
}

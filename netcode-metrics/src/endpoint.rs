//! The scrape endpoint: [`MetricsEndpoint`] answers `GET /metrics` with a
//! registry encoded in the Prometheus text format, from a thread of its own
//! running a current-thread tokio runtime with this crate's bounded HTTP/1
//! server ([`crate::http`]), so a blocking program needs no runtime of its
//! own.
//!
//! It is meant for a private scrape port: it bounds what a stray or hostile
//! peer can hold (connections at once, time to send the request head, a
//! connection's lifetime, header size), but has no authentication or TLS,
//! so never expose it to the public internet.

use std::io;
use std::net::{SocketAddr, TcpListener as StdListener, ToSocketAddrs};
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{ALLOW, CONTENT_TYPE as CONTENT_TYPE_HEADER, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use prometheus_client::encoding::prometheus_text;
use prometheus_client::registry::Registry;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::http::{HttpServer, Limits, WhenFull};

/// The `Content-Type` of a scrape's answer: the Prometheus text format,
/// version 0.0.4, which is what the endpoint encodes.
pub const CONTENT_TYPE: &str = prometheus_text::CONTENT_TYPE;

/// The only path that answers with metrics.
pub const METRICS_PATH: &str = "/metrics";

/// Connections served at once; more wait in the listen backlog until one
/// ends.
pub const MAX_CONNECTIONS: usize = 8;

/// Time a connection has to send a request's head (and, on a kept-alive
/// connection, the next one's).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(5);

/// The longest a connection is kept, however it is used.
pub const CONNECTION_LIFETIME: Duration = Duration::from_secs(60);

/// The endpoint's bounds: [`MAX_CONNECTIONS`] (waiting when full),
/// [`HEADER_READ_TIMEOUT`], [`CONNECTION_LIFETIME`]; a scrape is answered
/// at once, so no request timeout, and a second of grace at shutdown.
const LIMITS: Limits = Limits {
    when_full: WhenFull::Wait,
    header_read_timeout: HEADER_READ_TIMEOUT,
    connection_lifetime: Some(CONNECTION_LIFETIME),
    shutdown_grace: Duration::from_secs(1),
    ..Limits::new(match NonZeroUsize::new(MAX_CONNECTIONS) {
        Some(cap) => cap,
        None => NonZeroUsize::MIN,
    })
};

/// Encodes `registry` in the Prometheus text format: what a scrape of an
/// endpoint serving it gets.
pub fn encode_text(registry: &Registry) -> Result<String, std::fmt::Error> {
    let mut text = String::new();
    prometheus_text::encode(&mut text, registry)?;
    Ok(text)
}

/// An HTTP endpoint serving one registry at `/metrics`, until it is shut
/// down or dropped.
///
/// `GET` (or `HEAD`) of `/metrics` gets the registry encoded at that
/// moment with [`CONTENT_TYPE`]; any other path gets 404, another method
/// on `/metrics` 405.
#[derive(Debug)]
pub struct MetricsEndpoint {
    local_addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl MetricsEndpoint {
    /// Binds `address` (port 0 picks a free port: see
    /// [`local_addr`](Self::local_addr)) and serves `registry` there from
    /// a new thread. Fails if the address does not resolve or bind, or the
    /// thread or its runtime cannot be made.
    pub fn serve(address: impl ToSocketAddrs, registry: Registry) -> io::Result<Self> {
        let listener = StdListener::bind(address)?;
        listener.set_nonblocking(true)?;
        let local_addr = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()?;
        let listener = {
            let _context = runtime.enter();
            TcpListener::from_std(listener)?
        };
        let (stop, stopped) = oneshot::channel::<()>();
        let registry = Arc::new(registry);
        let handler =
            move |request: Request<Incoming>| std::future::ready(answer(&request, &registry));
        let server = HttpServer::new(listener, LIMITS);
        let stopped = async {
            // Told to stop, or the endpoint is gone: either way, stop.
            let _ = stopped.await;
        };
        let thread = std::thread::Builder::new()
            .name("netcode-metrics".into())
            .spawn(move || runtime.block_on(server.serve(handler, stopped)))?;
        Ok(Self {
            local_addr,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The address the endpoint is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Stops serving: no new connections are taken, idle ones are closed,
    /// a scrape in progress gets up to a second to finish, and the thread
    /// has ended when this returns. Dropping the endpoint does the same.
    pub fn shutdown(mut self) {
        self.stop_and_join();
    }

    fn stop_and_join(&mut self) {
        if let Some(stop) = self.stop.take() {
            // The server may have ended already; nothing to tell it then.
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            // A panic on that thread has already been reported there.
            let _ = thread.join();
        }
    }
}

impl Drop for MetricsEndpoint {
    fn drop(&mut self) {
        self.stop_and_join();
    }
}

/// The answer to one request.
fn answer(request: &Request<Incoming>, registry: &Registry) -> Response<Full<Bytes>> {
    if request.uri().path() != METRICS_PATH {
        return plain(
            StatusCode::NOT_FOUND,
            "not found; metrics are at /metrics\n",
        );
    }
    if request.method() != Method::GET && request.method() != Method::HEAD {
        let mut response = plain(StatusCode::METHOD_NOT_ALLOWED, "use GET\n");
        response
            .headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    match encode_text(registry) {
        Ok(text) => {
            let mut response = Response::new(Full::new(Bytes::from(text)));
            response
                .headers_mut()
                .insert(CONTENT_TYPE_HEADER, HeaderValue::from_static(CONTENT_TYPE));
            response
        }
        Err(_) => plain(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the metrics could not be encoded\n",
        ),
    }
}

/// A short plain-text answer with `status`.
fn plain(status: StatusCode, body: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE_HEADER,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

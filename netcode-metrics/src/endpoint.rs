//! The scrape endpoint: [`MetricsEndpoint`] answers `GET /metrics` with a
//! registry encoded in the Prometheus text format, from a thread of its own
//! running a current-thread tokio runtime with hyper's HTTP/1 server, so a
//! blocking program needs no runtime of its own.
//!
//! It is meant for a private scrape port: it bounds what a stray or hostile
//! peer can hold (connections at once, time to send the request head, a
//! connection's lifetime, header size), but has no authentication or TLS,
//! so never expose it to the public internet.

use std::convert::Infallible;
use std::io;
use std::net::{SocketAddr, TcpListener as StdListener, ToSocketAddrs};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{ALLOW, CONTENT_TYPE as CONTENT_TYPE_HEADER, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use prometheus_client::encoding::prometheus_text;
use prometheus_client::registry::Registry;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, oneshot};

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

/// The read buffer of a connection: the largest request head accepted
/// (hyper's smallest allowed buffer; a scrape's request is a few hundred
/// bytes).
const MAX_REQUEST_BUFFER: usize = 8 * 1024;

/// Pause after a failed `accept` (out of file descriptors, say), so the
/// loop does not spin.
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

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
        let (stop, stopped) = oneshot::channel();
        let registry = Arc::new(registry);
        let thread = std::thread::Builder::new()
            .name("netcode-metrics".into())
            .spawn(move || runtime.block_on(accept_loop(listener, registry, stopped)))?;
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

    /// Stops serving: no new connections are taken, those open are closed,
    /// and the thread has ended when this returns. Dropping the endpoint
    /// does the same.
    pub fn shutdown(mut self) {
        self.stop_and_join();
    }

    fn stop_and_join(&mut self) {
        if let Some(stop) = self.stop.take() {
            // The loop may have ended already; nothing to tell it then.
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

/// Takes connections, at most [`MAX_CONNECTIONS`] at once, until told to
/// stop; the connections still open end with the runtime.
async fn accept_loop(
    listener: TcpListener,
    registry: Arc<Registry>,
    mut stopped: oneshot::Receiver<()>,
) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let slot = tokio::select! {
            _ = &mut stopped => return,
            slot = Arc::clone(&slots).acquire_owned() => slot,
        };
        // The semaphore is never closed.
        let Ok(slot) = slot else { return };
        let accepted = tokio::select! {
            _ = &mut stopped => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, _)) => {
                let registry = Arc::clone(&registry);
                tokio::spawn(async move {
                    serve_connection(stream, registry).await;
                    drop(slot);
                });
            }
            Err(_) => tokio::time::sleep(ACCEPT_RETRY).await,
        }
    }
}

/// Serves one connection's requests within its bounds.
async fn serve_connection(stream: TcpStream, registry: Arc<Registry>) {
    let service = service_fn(move |request| {
        let answer = answer(&request, &registry);
        async move { Ok::<_, Infallible>(answer) }
    });
    let connection = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .max_buf_size(MAX_REQUEST_BUFFER)
        .serve_connection(TokioIo::new(stream), service);
    // An error is the peer's doing (a malformed request, a timeout, a
    // reset); the connection is closed either way.
    let _ = tokio::time::timeout(CONNECTION_LIFETIME, connection).await;
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

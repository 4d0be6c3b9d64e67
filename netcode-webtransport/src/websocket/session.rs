//! One WebSocket connection, from its accept to its end: TLS (for `wss`),
//! the upgrade within its timeout (path and session cap checked, refusals
//! answered 404 and 429), then the session as a virtual peer of the relay:
//! binary messages in as datagrams, the server's datagrams out as binary
//! messages, everything else refused, closed and counted.

use std::sync::atomic::Ordering;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use netcode_std::proto::constants::MAX_PACKET_BYTES;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::time::{Instant, sleep_until, timeout, timeout_at};
use tokio_rustls::TlsAcceptor;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::StatusCode;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig as FrameLimits};
use tokio_tungstenite::tungstenite::{Error as SocketError, Message};

use super::{Limits, MAX_MESSAGE_BYTES, WEBSOCKET_CLOSE_SILENT};
use crate::relay::{Inbound, Outbound, Shared, release, reserve};

/// The server's datagrams waiting for one session's socket at most; beyond
/// this (a peer that does not read) they are dropped and counted.
const OUTBOUND_LIMIT: usize = 256;
/// How long one write may wait for a peer that does not read.
const WRITE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a session closed by the server waits for the peer's close.
const CLOSE_LINGER: Duration = Duration::from_secs(1);

/// Serves the connection `stream` until it ends.
pub(crate) async fn run(
    stream: TcpStream,
    tls: Option<TlsAcceptor>,
    shared: &Shared,
    limits: &Limits,
) {
    let deadline = Instant::now() + limits.upgrade_timeout;
    match tls {
        None => serve(stream, deadline, shared, limits).await,
        Some(tls) => match timeout_at(deadline, tls.accept(stream)).await {
            Ok(Ok(stream)) => serve(stream, deadline, shared, limits).await,
            Ok(Err(_)) | Err(_) => {
                let counters = &shared.websocket;
                counters.upgrades.fetch_sub(1, Ordering::AcqRel);
                counters.sessions_failed.fetch_add(1, Ordering::Relaxed);
            }
        },
    }
}

/// Upgrades `stream` by `deadline`, then relays its messages as a virtual
/// peer's until the session ends.
async fn serve<S>(stream: S, deadline: Instant, shared: &Shared, limits: &Limits)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let Some(socket) = upgrade(stream, deadline, shared, limits).await else {
        return;
    };
    let (to_socket, outbound) = mpsc::channel(OUTBOUND_LIMIT);
    let peer = shared.open(Outbound::WebSocket(to_socket));
    relay(socket, outbound, peer, shared, limits).await;
    shared.close(&peer);
}

/// A response of `status` and no body, for a refused upgrade.
fn refusal(status: StatusCode) -> ErrorResponse {
    let mut response = ErrorResponse::new(None);
    *response.status_mut() = status;
    response
}

/// The WebSocket upgrade, in a place reserved under the session cap; gives
/// back the connection's place among the upgrades either way.
async fn upgrade<S>(
    stream: S,
    deadline: Instant,
    shared: &Shared,
    limits: &Limits,
) -> Option<WebSocketStream<S>>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let counters = &shared.websocket;
    let mut refused = None;
    let mut reserved = false;
    // The error type is tungstenite's, a whole HTTP response.
    #[allow(clippy::result_large_err)]
    let check = |request: &Request, response: Response| {
        if request.uri().path() != limits.path {
            refused = Some(&counters.sessions_wrong_path);
            return Err(refusal(StatusCode::NOT_FOUND));
        }
        if !reserve(&counters.sessions_open, limits.max_sessions) {
            refused = Some(&counters.sessions_over_cap);
            return Err(refusal(StatusCode::TOO_MANY_REQUESTS));
        }
        reserved = true;
        Ok(response)
    };
    let frame_limits = FrameLimits::default()
        .read_buffer_size(MAX_MESSAGE_BYTES)
        .write_buffer_size(0)
        .max_write_buffer_size(64 * 1024)
        .max_message_size(Some(MAX_MESSAGE_BYTES))
        .max_frame_size(Some(MAX_MESSAGE_BYTES));
    let upgraded = timeout_at(
        deadline,
        tokio_tungstenite::accept_hdr_async_with_config(stream, check, Some(frame_limits)),
    )
    .await;
    counters.upgrades.fetch_sub(1, Ordering::AcqRel);
    match upgraded {
        Ok(Ok(socket)) => Some(socket),
        Ok(Err(_)) | Err(_) => {
            if reserved {
                release(&counters.sessions_open);
            }
            refused
                .unwrap_or(&counters.sessions_failed)
                .fetch_add(1, Ordering::Relaxed);
            None
        }
    }
}

fn close_frame(code: CloseCode, reason: &'static str) -> CloseFrame {
    CloseFrame {
        code,
        reason: reason.into(),
    }
}

/// Relays the session's messages until it closes, stays silent, floods,
/// or breaks a rule; then closes it with the code that says which.
async fn relay<S>(
    socket: WebSocketStream<S>,
    mut outbound: mpsc::Receiver<Bytes>,
    peer: std::net::SocketAddr,
    shared: &Shared,
    limits: &Limits,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let counters = &shared.websocket;
    let count = |counter: &std::sync::atomic::AtomicU64| {
        counter.fetch_add(1, Ordering::Relaxed);
    };
    let (mut sink, mut stream) = socket.split();
    let mut silent_at = Instant::now() + limits.silence_timeout;
    let (mut window_start, mut in_window) = (Instant::now(), 0u32);
    let close = loop {
        tokio::select! {
            message = stream.next() => {
                let message = match message {
                    Some(Ok(message)) => message,
                    Some(Err(SocketError::Capacity(_))) => {
                        count(&counters.messages_oversized);
                        break Some(close_frame(CloseCode::Size, "message too long"));
                    }
                    Some(Err(_)) | None => break None,
                };
                let now = Instant::now();
                if now.duration_since(window_start) >= Duration::from_secs(1) {
                    (window_start, in_window) = (now, 0);
                }
                in_window = in_window.saturating_add(1);
                if in_window > limits.max_messages_per_second {
                    count(&counters.sessions_flooding);
                    break Some(close_frame(CloseCode::Policy, "too many messages"));
                }
                match message {
                    Message::Binary(bytes) if bytes.len() > MAX_PACKET_BYTES => {
                        count(&counters.messages_oversized);
                    }
                    Message::Binary(bytes) => {
                        silent_at = now + limits.silence_timeout;
                        if shared.deliver(peer, Inbound::Message(bytes)) {
                            count(&counters.messages_received);
                        } else {
                            count(&counters.messages_dropped_full);
                        }
                    }
                    Message::Text(_) => {
                        count(&counters.sessions_sent_text);
                        break Some(close_frame(CloseCode::Unsupported, "netcode messages are binary"));
                    }
                    // The library answers the close itself.
                    Message::Close(_) => break None,
                    // Pings are answered by the library (one pong pending
                    // at most); neither they nor pongs keep a silent
                    // session open.
                    Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => {}
                }
            }
            datagram = outbound.recv() => {
                let Some(datagram) = datagram else { break None };
                match timeout(WRITE_TIMEOUT, sink.send(Message::Binary(datagram))).await {
                    Ok(Ok(())) => {}
                    Ok(Err(_)) | Err(_) => break None,
                }
            }
            () = sleep_until(silent_at) => {
                count(&counters.sessions_silent);
                break Some(close_frame(CloseCode::Library(WEBSOCKET_CLOSE_SILENT), "no message"));
            }
        }
    };
    if let Some(frame) = close {
        let _ = timeout(WRITE_TIMEOUT, sink.send(Message::Close(Some(frame)))).await;
        // The closing handshake: until the peer's close (or its end, or
        // the bound), what it still sends is read and dropped, so that the
        // connection ends with a FIN after the close frame rather than a
        // reset that can take the frame with it.
        let _ = timeout(CLOSE_LINGER, async {
            while let Some(Ok(message)) = stream.next().await {
                if message.is_close() {
                    break;
                }
            }
        })
        .await;
    }
}

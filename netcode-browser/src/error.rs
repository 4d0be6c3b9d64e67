//! The errors of connecting and of sending: [`ConnectError`] and
//! [`SendError`], each with a readable message (what the JavaScript binding
//! throws). Every client on the [`Driver`](crate::Driver) fails with them:
//! `BrowserClient` in a page, netcode-webtransport's `WebTransportClient`
//! and `WebSocketClient` natively.

use core::fmt;

use netcode_proto::token::TokenError;

/// Why a client could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectError {
    /// This browser (or worker) has no `WebTransport`: Safari before 26,
    /// older Firefox, or a page that is not a secure context, and no
    /// WebSocket fallback was given (`BrowserClient::connect_any` takes
    /// one). (Native clients always have WebTransport.)
    WebTransportUnavailable,
    /// The session did not open, with the browser's message (natively,
    /// wtransport's). A wrong certificate hash, an unacceptable
    /// certificate (pinned certificates must be ECDSA and valid for at
    /// most 14 days) and an unreachable server all give the same message
    /// in Chromium ("Opening handshake failed."); the server's log tells
    /// which.
    SessionFailed(String),
    /// The WebSocket (the fallback) did not open, with the browser's (or
    /// the native client's) message, and why WebTransport was not used
    /// when it was tried first.
    SocketFailed(String),
    /// A certificate hash was not 32 bytes written as 64 hexadecimal digits.
    BadCertificateHash(String),
    /// The connect token could not be read.
    InvalidConnectToken(TokenError),
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::WebTransportUnavailable => f.write_str(
                "WebTransport is not available here (it needs a recent browser and a secure context)",
            ),
            Self::SessionFailed(message) => {
                write!(f, "the WebTransport session failed to open: {message}")
            }
            Self::SocketFailed(message) => write!(f, "the WebSocket failed to open: {message}"),
            Self::BadCertificateHash(reason) => write!(f, "bad certificate hash: {reason}"),
            Self::InvalidConnectToken(e) => write!(f, "invalid connect token: {e}"),
        }
    }
}

impl std::error::Error for ConnectError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::InvalidConnectToken(e) => Some(e),
            _ => None,
        }
    }
}

impl From<TokenError> for ConnectError {
    fn from(e: TokenError) -> Self {
        Self::InvalidConnectToken(e)
    }
}

/// Why a payload was not sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendError {
    /// The payload is larger than the session's payload limit
    /// ([`payload_limit`](crate::payload_limit) of its `maxDatagramSize`):
    /// the browser (or QUIC) would have dropped its datagram without a
    /// word.
    TooLarge {
        /// The payload's length.
        len: usize,
        /// The largest payload this session carries.
        limit: usize,
    },
    /// The payload is empty (netcode payloads are 1 to 1200 bytes).
    Empty,
    /// The client is not connected (still connecting, or disconnected).
    NotConnected,
    /// The session (WebTransport or WebSocket) is closed (by the server,
    /// the network, or [`disconnect`](crate::Driver::disconnect)).
    SessionClosed,
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLarge { len, limit } => write!(
                f,
                "payload of {len} bytes is larger than this session's limit of {limit} bytes"
            ),
            Self::Empty => f.write_str("payload is empty (netcode payloads are 1 to 1200 bytes)"),
            Self::NotConnected => f.write_str("not connected"),
            Self::SessionClosed => f.write_str("the session is closed"),
        }
    }
}

impl std::error::Error for SendError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_say_what_went_wrong() {
        let e = SendError::TooLarge {
            len: 1200,
            limit: 1186,
        };
        assert_eq!(
            e.to_string(),
            "payload of 1200 bytes is larger than this session's limit of 1186 bytes"
        );
        let e = ConnectError::SessionFailed("Opening handshake failed.".into());
        assert!(e.to_string().ends_with("Opening handshake failed."));
        let e = ConnectError::from(TokenError::VersionMismatch);
        assert!(e.to_string().starts_with("invalid connect token: "));
        assert!(std::error::Error::source(&e).is_some());
    }
}

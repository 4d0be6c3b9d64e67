//! A game client's side of the `matcher` token service: ask it for a
//! connect token over HTTP(S) with the shared bearer secret, check what
//! comes back, and say precisely what went wrong when it fails.
//!
//! ```text
//! POST {url}/token
//! Authorization: Bearer <secret>
//! {"protocol_id": "0x1122334455667788", "client_id": "42"}
//!
//! 200 {"connect_token": "<standard base64 of 2048 bytes>", "client_id": 42, "expire_seconds": 30}
//! ```
//!
//! The request is blocking (ureq) and bounded by a timeout; `https://`
//! URLs go over rustls with Mozilla's root certificates, and a loopback
//! matcher is always reached directly, whatever proxy the environment
//! names. A token that arrives is decoded and its public part read, so the
//! caller learns the servers it lists before connecting.

use std::fmt;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use netcode_std::{CONNECT_TOKEN_BYTES, ConnectToken, TokenError};
use serde_json::Value;

/// How long [`fetch_token`] waits for the whole exchange (connecting,
/// TLS, request and answer) before giving up.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest answer read: a token answer is under 3 KiB.
const MAX_ANSWER_BYTES: u64 = 64 * 1024;

/// The longest piece of a non-JSON error body quoted in an error.
const MAX_QUOTED_CHARS: usize = 200;

/// A connect token fetched from a matcher, decoded and checked.
#[derive(Debug, Clone)]
pub struct FetchedToken {
    /// The client id the token was issued for (the one asked for).
    pub client_id: u64,
    /// Seconds the matcher says the token stays valid.
    pub expire_seconds: u64,
    /// The token as the client connects with it: 2048 bytes.
    pub bytes: [u8; CONNECT_TOKEN_BYTES],
    /// The token's public part: protocol id, timestamps, timeout and the
    /// servers to try, in order.
    pub public: ConnectToken,
}

impl FetchedToken {
    /// The servers the token lists, in the order the client tries them.
    pub fn servers(&self) -> &[SocketAddr] {
        &self.public.server_addresses
    }
}

/// Why no token was fetched.
#[derive(Debug)]
pub enum FetchError {
    /// The URL is not an `http://` or `https://` URL of a host.
    BadUrl {
        /// The URL given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No answer: the host is unknown, nothing listens, the connection
    /// or TLS failed, or the answer was not HTTP.
    Unreachable {
        /// Where the request went.
        url: String,
        /// What failed.
        reason: String,
    },
    /// No complete answer within the timeout.
    TimedOut {
        /// Where the request went.
        url: String,
        /// The timeout that ran out.
        after: Duration,
    },
    /// 401: the matcher does not accept the secret presented.
    WrongSecret {
        /// What the matcher said.
        message: String,
    },
    /// 429: the matcher is rate limiting this caller.
    RateLimited {
        /// The wait it asks for (`Retry-After` in seconds), if it named
        /// one.
        retry_after: Option<Duration>,
        /// What the matcher said.
        message: String,
    },
    /// Any other status than 200.
    Status {
        /// The HTTP status code.
        status: u16,
        /// The `error` text of the matcher's JSON answer, or the start of
        /// the body when it is not that.
        message: String,
        /// The wait it asks for (`Retry-After` in seconds, as a 503 may
        /// carry), if any.
        retry_after: Option<Duration>,
    },
    /// A 200 answer that is not the JSON object promised, or is for
    /// another client id.
    MalformedAnswer(String),
    /// The `connect_token` decoded to this many bytes, not 2048.
    WrongTokenLength(usize),
    /// The token's public part does not read (or is for another protocol
    /// id).
    UnreadableToken(String),
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let said = |message: &str| {
            if message.is_empty() {
                String::new()
            } else {
                format!(": {message}")
            }
        };
        let wait = |retry_after: &Option<Duration>| match retry_after {
            Some(wait) => format!(" (retry after {} s)", wait.as_secs()),
            None => String::new(),
        };
        match self {
            Self::BadUrl { url, reason } => write!(f, "matcher URL {url:?}: {reason}"),
            Self::Unreachable { url, reason } => {
                write!(f, "cannot reach the matcher at {url}: {reason}")
            }
            Self::TimedOut { url, after } => write!(
                f,
                "the matcher at {url} did not answer within {} s",
                after.as_secs_f64()
            ),
            Self::WrongSecret { message } => write!(
                f,
                "the matcher refused the secret (401 Unauthorized){}",
                said(message)
            ),
            Self::RateLimited {
                retry_after,
                message,
            } => write!(
                f,
                "the matcher is rate limiting us (429 Too Many Requests){}{}",
                wait(retry_after),
                said(message)
            ),
            Self::Status {
                status,
                message,
                retry_after,
            } => write!(
                f,
                "the matcher answered {status}{}{}",
                wait(retry_after),
                said(message)
            ),
            Self::MalformedAnswer(why) => write!(f, "malformed answer from the matcher: {why}"),
            Self::WrongTokenLength(bytes) => write!(
                f,
                "the matcher's connect token is {bytes} bytes, not {CONNECT_TOKEN_BYTES}"
            ),
            Self::UnreadableToken(why) => write!(f, "the matcher's connect token: {why}"),
        }
    }
}

impl std::error::Error for FetchError {}

/// Asks the matcher at `url` (its base, such as `http://127.0.0.1:8080`,
/// or the full `…/token` URL) for a token for `client_id` on
/// `protocol_id`, presenting `secret`; waits at most [`FETCH_TIMEOUT`].
pub fn fetch_token(
    url: &str,
    secret: &str,
    protocol_id: u64,
    client_id: u64,
) -> Result<FetchedToken, FetchError> {
    fetch_token_within(url, secret, protocol_id, client_id, FETCH_TIMEOUT)
}

/// [`fetch_token`], giving up after `timeout`.
pub fn fetch_token_within(
    url: &str,
    secret: &str,
    protocol_id: u64,
    client_id: u64,
    timeout: Duration,
) -> Result<FetchedToken, FetchError> {
    let endpoint = token_endpoint(url)?;
    let agent = agent(&endpoint, timeout);
    let body = serde_json::json!({
        // Both as strings: JSON numbers above 2^53 do not survive every
        // parser, and the matcher takes decimal or 0x hex text.
        "protocol_id": format!("{protocol_id:#x}"),
        "client_id": client_id.to_string(),
    })
    .to_string();
    let mut response = agent
        .post(&endpoint.url)
        .header("Authorization", format!("Bearer {secret}"))
        .content_type("application/json")
        .send(&body)
        .map_err(|e| transport_error(&endpoint.url, timeout, e))?;
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    let location = response
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let text = response
        .body_mut()
        .with_config()
        .limit(MAX_ANSWER_BYTES)
        .read_to_string()
        .map_err(|e| match status {
            200 => FetchError::MalformedAnswer(format!("unreadable body: {e}")),
            _ => transport_error(&endpoint.url, timeout, e),
        });
    if status != 200 {
        // An error answer whose body does not read still has its status.
        let mut message = error_text(&text.unwrap_or_default());
        if let Some(location) = location.filter(|_| (300..400).contains(&status)) {
            let note = format!("redirects to {location} (not followed)");
            message = if message.is_empty() {
                note
            } else {
                format!("{note}; {message}")
            };
        }
        return Err(match status {
            401 => FetchError::WrongSecret { message },
            429 => FetchError::RateLimited {
                retry_after,
                message,
            },
            _ => FetchError::Status {
                status,
                message,
                retry_after,
            },
        });
    }
    read_answer(&text?, protocol_id, client_id)
}

/// Where a token request goes, and whether to bypass proxies.
struct Endpoint {
    url: String,
    loopback: bool,
}

/// The `/token` URL of the matcher at `url`, checked.
fn token_endpoint(url: &str) -> Result<Endpoint, FetchError> {
    let bad = |reason: &str| FetchError::BadUrl {
        url: url.to_owned(),
        reason: reason.to_owned(),
    };
    let uri: ureq::http::Uri = url
        .parse()
        .map_err(|e: ureq::http::uri::InvalidUri| bad(&e.to_string()))?;
    match uri.scheme_str() {
        Some("http" | "https") => {}
        Some(other) => return Err(bad(&format!("{other}:// is not http:// or https://"))),
        None => return Err(bad("no scheme: write http://HOST:PORT or https://HOST")),
    }
    let host = uri.host().ok_or_else(|| bad("no host"))?;
    if uri.query().is_some() {
        return Err(bad("a query string is not expected"));
    }
    let bare_host = host.trim_start_matches('[').trim_end_matches(']');
    let loopback = bare_host.eq_ignore_ascii_case("localhost")
        || bare_host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback());
    let base = url.trim_end_matches('/');
    let url = if base.ends_with("/token") {
        base.to_owned()
    } else {
        format!("{base}/token")
    };
    Ok(Endpoint { url, loopback })
}

/// A one-request HTTP client: every status comes back as an answer, no
/// redirect is followed (a POST must not turn into a GET), and the whole
/// exchange is bounded by `timeout`.
fn agent(endpoint: &Endpoint, timeout: Duration) -> ureq::Agent {
    let mut config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .max_redirects_will_error(false)
        .timeout_global(Some(timeout));
    if endpoint.loopback {
        config = config.proxy(None);
    }
    config.build().into()
}

/// A failure to get an answer at all, in the caller's terms.
fn transport_error(url: &str, timeout: Duration, error: ureq::Error) -> FetchError {
    let url = url.to_owned();
    let reason = match error {
        ureq::Error::Timeout(_) => {
            return FetchError::TimedOut {
                url,
                after: timeout,
            };
        }
        ureq::Error::Io(ref e) if e.kind() == io::ErrorKind::TimedOut => {
            return FetchError::TimedOut {
                url,
                after: timeout,
            };
        }
        ureq::Error::BadUri(reason) => return FetchError::BadUrl { url, reason },
        ureq::Error::HostNotFound => "host not found".to_owned(),
        ureq::Error::Io(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
            "connection refused (is the matcher running, on that port?)".to_owned()
        }
        other => other.to_string(),
    };
    FetchError::Unreachable { url, reason }
}

/// The matcher's `error` text from a JSON error body, or the start of a
/// body that is not that.
fn error_text(body: &str) -> String {
    if let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(body)
        && let Some(Value::String(error)) = fields.get("error")
    {
        return error.clone();
    }
    let trimmed = body.trim();
    let mut quoted: String = trimmed
        .chars()
        .take(MAX_QUOTED_CHARS)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if trimmed.chars().count() > MAX_QUOTED_CHARS {
        quoted.push('…');
    }
    quoted
}

/// A 200 answer's token, decoded and checked against what was asked.
fn read_answer(text: &str, protocol_id: u64, client_id: u64) -> Result<FetchedToken, FetchError> {
    let malformed = |why: String| FetchError::MalformedAnswer(why);
    let answer: Value =
        serde_json::from_str(text).map_err(|e| malformed(format!("not JSON: {e}")))?;
    let encoded = answer
        .get("connect_token")
        .and_then(Value::as_str)
        .ok_or_else(|| malformed("no \"connect_token\" string".into()))?;
    let answered_id = answer
        .get("client_id")
        .and_then(Value::as_u64)
        .ok_or_else(|| malformed("no \"client_id\" number".into()))?;
    if answered_id != client_id {
        return Err(malformed(format!(
            "the token is for client id {answered_id}, not {client_id}"
        )));
    }
    let expire_seconds = answer
        .get("expire_seconds")
        .and_then(Value::as_u64)
        .ok_or_else(|| malformed("no \"expire_seconds\" number".into()))?;
    let decoded = STANDARD
        .decode(encoded)
        .map_err(|e| malformed(format!("\"connect_token\" is not standard base64: {e}")))?;
    let bytes: [u8; CONNECT_TOKEN_BYTES] = decoded
        .try_into()
        .map_err(|wrong: Vec<u8>| FetchError::WrongTokenLength(wrong.len()))?;
    let public = ConnectToken::read(&bytes)
        .map_err(|e: TokenError| FetchError::UnreadableToken(e.to_string()))?;
    if public.protocol_id != protocol_id {
        return Err(FetchError::UnreadableToken(format!(
            "it is for protocol id {:#018x}, not {protocol_id:#018x}",
            public.protocol_id
        )));
    }
    Ok(FetchedToken {
        client_id,
        expire_seconds,
        bytes,
        public,
    })
}

/// The bearer secret held in the file at `path`, without the whitespace
/// around it (as the matcher reads its own copy); an error for an empty
/// one, or one with characters a header cannot carry.
pub fn read_secret_file(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the secret file {}: {e}", path.display()))?;
    let secret = text.trim();
    if secret.is_empty() {
        return Err(format!("the secret file {} is empty", path.display()));
    }
    if secret.chars().any(char::is_control) {
        return Err(format!(
            "the secret in {} has control characters (a line break inside?): \
             an HTTP header cannot carry them",
            path.display()
        ));
    }
    Ok(secret.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_urls_are_completed_and_checked() {
        let ok = |url: &str| token_endpoint(url).map(|e| (e.url, e.loopback));
        assert_eq!(
            ok("http://127.0.0.1:8080").unwrap(),
            ("http://127.0.0.1:8080/token".to_owned(), true)
        );
        assert_eq!(
            ok("http://localhost:8080/").unwrap(),
            ("http://localhost:8080/token".to_owned(), true)
        );
        assert_eq!(
            ok("https://[::1]:8443/token").unwrap(),
            ("https://[::1]:8443/token".to_owned(), true)
        );
        assert_eq!(
            ok("https://match.example.com/api").unwrap(),
            ("https://match.example.com/api/token".to_owned(), false)
        );
        for bad in [
            "127.0.0.1:8080",
            "ftp://host/",
            "http://",
            "http://h/?x=1",
            "",
        ] {
            assert!(
                matches!(token_endpoint(bad), Err(FetchError::BadUrl { .. })),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn error_bodies_give_their_text() {
        assert_eq!(error_text(r#"{"error": "slow down"}"#), "slow down");
        assert_eq!(error_text("  plain\ntext "), "plain text");
        let long = "x".repeat(500);
        let quoted = error_text(&long);
        assert_eq!(quoted.chars().count(), MAX_QUOTED_CHARS + 1);
        assert!(quoted.ends_with('…'));
        assert_eq!(error_text(r#"{"error": 3}"#), r#"{"error": 3}"#);
    }
}

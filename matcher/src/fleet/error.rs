//! Why an allocation, or a token for an allocated server, failed, and the
//! HTTP status a token service should answer each failure with.

use std::time::Duration;

use axum::http::StatusCode;

use crate::issue::IssueError;

/// Why no game server was allocated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllocateError {
    /// The allocator found no `Ready` game server matching the selectors
    /// (its HTTP 429). Transient: the fleet may scale up, or a match end.
    NoServerAvailable,
    /// The allocator did not answer within the configured time.
    Timeout(Duration),
    /// The allocator could not be reached: connection refused or reset,
    /// name resolution failed, or the TLS handshake failed (an untrusted
    /// server certificate, or a client certificate it refused).
    Unreachable(String),
    /// The allocator answered with an error status other than 429 (its
    /// status and the start of its message).
    Refused {
        /// The HTTP status it answered.
        status: u16,
        /// The start of its answer's body, printable characters only.
        message: String,
    },
    /// The allocator answered 2xx with something that is not a usable
    /// allocation: not JSON, no port of the configured name, a port out of
    /// range, no address (of the configured type), or an address that does
    /// not resolve. The game server it names (if any) is now allocated and
    /// unused: it goes back to the fleet when it shuts itself down.
    BadAnswer(String),
}

impl AllocateError {
    /// The status a token service answers its caller with: 503 for what
    /// retrying later may cure (no server free, allocator unreachable or
    /// slow), 502 for an allocator that answered wrongly.
    pub fn http_status(&self) -> StatusCode {
        match self {
            Self::NoServerAvailable | Self::Timeout(_) | Self::Unreachable(_) => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            Self::Refused { .. } | Self::BadAnswer(_) => StatusCode::BAD_GATEWAY,
        }
    }

    /// For a 503, how long the caller should wait before asking again
    /// (its `Retry-After`, in whole seconds); `None` for a 502.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::NoServerAvailable => Some(Duration::from_secs(2)),
            Self::Timeout(_) | Self::Unreachable(_) => Some(Duration::from_secs(5)),
            Self::Refused { .. } | Self::BadAnswer(_) => None,
        }
    }
}

impl std::fmt::Display for AllocateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoServerAvailable => {
                write!(f, "no game server is free now: try again later")
            }
            Self::Timeout(limit) => write!(
                f,
                "the game server allocator did not answer within {:.1} s",
                limit.as_secs_f64()
            ),
            Self::Unreachable(why) => {
                write!(f, "the game server allocator is unreachable: {why}")
            }
            Self::Refused { status, message } => {
                write!(f, "the game server allocator answered {status}: {message}")
            }
            Self::BadAnswer(why) => {
                write!(f, "the game server allocator's answer is unusable: {why}")
            }
        }
    }
}

impl std::error::Error for AllocateError {}

/// Why no token naming an allocated server was issued.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FleetIssueError {
    /// The request itself cannot be served (checked before allocating, so
    /// that it wastes no game server), or the token could not be made.
    Issue(IssueError),
    /// No game server was allocated.
    Allocate(AllocateError),
}

impl FleetIssueError {
    /// The status a token service answers its caller with (see
    /// [`AllocateError::http_status`]; an unknown protocol is 404, a token
    /// that could not be made 500).
    pub fn http_status(&self) -> StatusCode {
        match self {
            Self::Issue(IssueError::UnknownProtocol(_)) => StatusCode::NOT_FOUND,
            Self::Issue(IssueError::NoBrowserServers) => StatusCode::NOT_FOUND,
            Self::Issue(IssueError::NoBrowserServerAvailable) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Issue(IssueError::Build(_)) => StatusCode::INTERNAL_SERVER_ERROR,
            Self::Allocate(e) => e.http_status(),
        }
    }

    /// How long the caller should wait before asking again, where waiting
    /// may help (see [`AllocateError::retry_after`]).
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::Allocate(e) => e.retry_after(),
            Self::Issue(_) => None,
        }
    }
}

impl std::fmt::Display for FleetIssueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Issue(e) => e.fmt(f),
            Self::Allocate(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for FleetIssueError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transient_failures_are_503_with_a_wait_and_wrong_answers_502() {
        let transient = [
            AllocateError::NoServerAvailable,
            AllocateError::Timeout(Duration::from_secs(1)),
            AllocateError::Unreachable("refused".into()),
        ];
        for e in transient {
            assert_eq!(e.http_status(), StatusCode::SERVICE_UNAVAILABLE, "{e}");
            assert!(e.retry_after().is_some_and(|d| d.as_secs() >= 1), "{e}");
        }
        let wrong = [
            AllocateError::Refused {
                status: 500,
                message: "boom".into(),
            },
            AllocateError::BadAnswer("not JSON".into()),
        ];
        for e in wrong {
            assert_eq!(e.http_status(), StatusCode::BAD_GATEWAY, "{e}");
            assert_eq!(e.retry_after(), None, "{e}");
        }
        let unknown = FleetIssueError::Issue(IssueError::UnknownProtocol(9));
        assert_eq!(unknown.http_status(), StatusCode::NOT_FOUND);
        assert_eq!(unknown.retry_after(), None);
        let busy = FleetIssueError::Allocate(AllocateError::NoServerAvailable);
        assert_eq!(busy.http_status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(busy.to_string().contains("try again later"));
    }
}

//! Why an allocation failed, and the HTTP status a token service should
//! answer each failure with; why the fleet source's options cannot be
//! used together.

use std::path::PathBuf;
use std::time::Duration;

use axum::http::StatusCode;

/// Why no game server was allocated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllocateError {
    /// The allocator found no `Ready` game server matching the selectors
    /// (its HTTP 429). Transient: the fleet may scale up, or a match end.
    #[error("no game server is free now: try again later")]
    NoServerAvailable,
    /// The allocator did not answer within the configured time.
    #[error("the game server allocator did not answer within {:.1} s", .0.as_secs_f64())]
    Timeout(Duration),
    /// The allocator could not be reached: connection refused or reset,
    /// name resolution failed, or the TLS handshake failed (an untrusted
    /// server certificate, or a client certificate it refused).
    #[error("the game server allocator is unreachable: {0}")]
    Unreachable(String),
    /// The allocator answered with an error status other than 429 (its
    /// status and the start of its message).
    #[error("the game server allocator answered {status}: {message}")]
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
    #[error("the game server allocator's answer is unusable: {0}")]
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

/// Why the fleet source's options cannot be used: an option missing or
/// out of place, or a certificate file unreadable or malformed.
#[derive(Debug, thiserror::Error)]
pub enum FleetConfigError {
    /// Options that need `--allocator-url`, given without it.
    #[error("{} given without --allocator-url", .0.join(", "))]
    WithoutUrl(Vec<&'static str>),
    /// `--allocator-port-name` is blank.
    #[error("--allocator-port-name is empty")]
    EmptyPortName,
    /// An https:// allocator without the CA to check it against.
    #[error(
        "--allocator-url {0} needs --allocator-ca, the CA its server certificate is \
         checked against (Agones: the allocator-tls-ca secret)"
    )]
    NoCa(String),
    /// A client certificate without its key, or the other way round.
    #[error("--allocator-client-cert and --allocator-client-key go together")]
    HalfIdentity,
    /// Certificates given for a plain http:// allocator.
    #[error("--allocator-url {0} is plain http://: certificates apply only to https://")]
    CertificatesOnHttp(String),
    /// A file that cannot be read.
    #[error("cannot read {}: {error}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        error: std::io::Error,
    },
    /// A CA file that is not PEM certificates.
    #[error("{}: not PEM certificates: {why}", .path.display())]
    NotCertificates {
        /// The file.
        path: PathBuf,
        /// What the PEM reader said, with its causes.
        why: String,
    },
    /// A CA file without a certificate.
    #[error("{} holds no certificate", .0.display())]
    NoCertificate(PathBuf),
    /// Client certificate and key files that are not a usable identity.
    #[error(
        "{} and {}: not a PEM certificate and private key (PKCS#8, PKCS#1 or SEC1, \
         and no other PEM sections): {why}",
        .cert.display(),
        .key.display()
    )]
    NotIdentity {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// What the PEM reader said, with its causes.
        why: String,
    },
    /// The HTTP client could not be made.
    #[error("cannot set up the allocator client: {0}")]
    Client(String),
}

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
        let busy = AllocateError::NoServerAvailable;
        assert!(busy.to_string().contains("try again later"));
        assert_eq!(
            AllocateError::Timeout(Duration::from_millis(1500)).to_string(),
            "the game server allocator did not answer within 1.5 s"
        );
    }
}

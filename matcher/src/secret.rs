//! The bearer secret callers present: read from a request's
//! `Authorization` header and compared in constant time. Both the token
//! route and the per-secret rate limit ask it.

use std::sync::Arc;

use axum::http::{HeaderMap, header};
use subtle::ConstantTimeEq;

/// The shared bearer secret; cheap to clone. Its `Debug` does not show it.
#[derive(Clone)]
pub(crate) struct Secret(Arc<str>);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl Secret {
    /// The secret `text`.
    pub(crate) fn new(text: String) -> Self {
        Self(text.into())
    }

    /// Whether `presented` is the secret, compared in constant time.
    pub(crate) fn matches(&self, presented: &[u8]) -> bool {
        self.0.as_bytes().ct_eq(presented).into()
    }

    /// Whether `headers` present the secret as Bearer credentials.
    pub(crate) fn presented_in(&self, headers: &HeaderMap) -> bool {
        headers
            .get(header::AUTHORIZATION)
            .and_then(|value| bearer(value.as_bytes()))
            .is_some_and(|presented| self.matches(presented))
    }
}

/// The credentials of an `Authorization` header of the Bearer scheme
/// (whose name, as every HTTP scheme's, is case-insensitive).
fn bearer(header: &[u8]) -> Option<&[u8]> {
    let (scheme, credentials) = header.split_at_checked(6)?;
    let credentials = credentials.strip_prefix(b" ")?;
    scheme
        .eq_ignore_ascii_case(b"bearer")
        .then_some(credentials)
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    #[test]
    fn only_bearer_credentials_holding_the_secret_pass() {
        let secret = Secret::new("s3cret".into());
        assert!(secret.matches(b"s3cret"));
        for wrong in [&b""[..], b"s3cre", b"s3cret ", b"S3CRET"] {
            assert!(!secret.matches(wrong), "{wrong:?}");
        }
        let mut headers = HeaderMap::new();
        assert!(!secret.presented_in(&headers));
        for (value, passes) in [
            ("Bearer s3cret", true),
            ("bearer s3cret", true),
            ("BEARER s3cret", true),
            ("Bearer  s3cret", false),
            ("Bearers3cret", false),
            ("Basic s3cret", false),
            ("Bearer ", false),
            ("Bearer", false),
            ("Bearer wrong", false),
        ] {
            headers.insert(header::AUTHORIZATION, HeaderValue::from_static(value));
            assert_eq!(secret.presented_in(&headers), passes, "{value:?}");
        }
        assert_eq!(format!("{secret:?}"), "Secret(..)");
    }
}

//! What a server publishes on its GameServer before it reports Ready: the
//! labels a `GameServerAllocation` can select on, and the annotations a
//! token service or a client's backend reads.
//!
//! Agones' SDK server stores every key under the prefix `agones.dev/sdk-`
//! (the key `netcode-address` becomes `agones.dev/sdk-netcode-address`),
//! so keys here are Kubernetes name segments of at most 59 characters.

use std::net::SocketAddr;

use agones::Sdk;

use crate::error::{MetadataError, StartError};

/// Label: the protocol id, as `0x` and 16 hex digits, so that an
/// allocation can select servers of one protocol
/// (`agones.dev/sdk-netcode-protocol-id`).
pub const PROTOCOL_ID_LABEL: &str = "netcode-protocol-id";

/// Annotation: the public address connect tokens list, `IP:PORT`
/// (`[IPv6]:PORT`), the same as the status's address and `netcode` port
/// (`agones.dev/sdk-netcode-address`).
pub const ADDRESS_ANNOTATION: &str = "netcode-address";

/// Annotation key reserved for the SHA-256 hash of a WebTransport
/// endpoint's certificate (hex), for when a server takes browsers: what
/// the page passes as `serverCertificateHashes`. A server that takes
/// browsers ([`BrowserOptions`](crate::BrowserOptions)) publishes it, and
/// again whenever its certificate is replaced.
pub const CERT_HASH_ANNOTATION: &str = "netcode-cert-sha256";

/// The longest key: 63 characters of a Kubernetes name, less the four of
/// the `sdk-` that Agones puts before it.
const MAX_KEY_CHARS: usize = 59;

/// The labels and annotations a server sets on its GameServer before
/// Ready: [`for_server`](Self::for_server) makes the netcode ones, and
/// [`annotation`](Self::annotation) adds others (the hook for a
/// WebTransport certificate hash, [`CERT_HASH_ANNOTATION`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Announcement {
    /// Labels, in the order they are set.
    pub labels: Vec<(String, String)>,
    /// Annotations, in the order they are set.
    pub annotations: Vec<(String, String)>,
}

impl Announcement {
    /// The netcode server's own: [`PROTOCOL_ID_LABEL`] and
    /// [`ADDRESS_ANNOTATION`].
    ///
    /// ```
    /// use netcode_agones::Announcement;
    ///
    /// let announcement = Announcement::for_server("203.0.113.7:7342".parse()?, 0x1122_3344_5566_7788)
    ///     .annotation("netcode-cert-sha256", "ab12")?;
    /// assert_eq!(announcement.labels, [("netcode-protocol-id".into(), "0x1122334455667788".into())]);
    /// assert_eq!(announcement.annotations[0], ("netcode-address".into(), "203.0.113.7:7342".into()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn for_server(public: SocketAddr, protocol_id: u64) -> Self {
        Self {
            labels: vec![(PROTOCOL_ID_LABEL.into(), format!("{protocol_id:#018x}"))],
            annotations: vec![(ADDRESS_ANNOTATION.into(), public.to_string())],
        }
    }

    /// Adds the annotation `key` = `value` (a later one of the same key
    /// replaces it), or says why Kubernetes would refuse the key.
    pub fn annotation(
        mut self,
        key: impl Into<String>,
        value: impl Into<String>,
    ) -> Result<Self, MetadataError> {
        let key = key.into();
        check_key(&key)?;
        self.annotations.retain(|(k, _)| *k != key);
        self.annotations.push((key, value.into()));
        Ok(self)
    }

    /// Sets every label, then every annotation, on the GameServer; the
    /// first failure stops and is returned.
    pub async fn publish(&self, sdk: &mut Sdk) -> Result<(), StartError> {
        for (key, value) in &self.labels {
            sdk.set_label(key.as_str(), value.as_str())
                .await
                .map_err(|error| StartError::sdk("SetLabel", error))?;
        }
        for (key, value) in &self.annotations {
            sdk.set_annotation(key.as_str(), value.as_str())
                .await
                .map_err(|error| StartError::sdk("SetAnnotation", error))?;
        }
        Ok(())
    }
}

/// Whether `key`, once Agones has put `sdk-` before it, is a Kubernetes
/// name: letters, digits, `-`, `_` and `.`, starting and ending with a
/// letter or digit.
pub fn check_key(key: &str) -> Result<(), MetadataError> {
    let refuse = |reason| {
        Err(MetadataError {
            text: key.to_owned(),
            reason,
        })
    };
    if key.is_empty() {
        return refuse("empty");
    }
    if key.len() > MAX_KEY_CHARS {
        return refuse("longer than 59 characters");
    }
    if !key
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        return refuse("only letters, digits, '-', '_' and '.' are allowed");
    }
    let alnum = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_alphanumeric());
    if !alnum(key.bytes().next()) || !alnum(key.bytes().last()) {
        return refuse("must start and end with a letter or digit");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_netcode_metadata() {
        let v6 = Announcement::for_server("[2001:db8::7]:7001".parse().unwrap(), 42);
        assert_eq!(
            v6.labels,
            [(PROTOCOL_ID_LABEL.into(), "0x000000000000002a".into())]
        );
        assert_eq!(
            v6.annotations,
            [(ADDRESS_ANNOTATION.into(), "[2001:db8::7]:7001".into())]
        );
    }

    #[test]
    fn annotations_replace_by_key_and_bad_keys_are_refused() {
        let a = Announcement::for_server("10.0.0.1:7000".parse().unwrap(), 1)
            .annotation(CERT_HASH_ANNOTATION, "aa")
            .unwrap()
            .annotation(CERT_HASH_ANNOTATION, "bb")
            .unwrap();
        assert_eq!(a.annotations.len(), 2);
        assert_eq!(a.annotations[1], (CERT_HASH_ANNOTATION.into(), "bb".into()));
        let long = "k".repeat(60);
        for bad in ["", "-x", "x-", "a/b", "a b", "ü", long.as_str()] {
            assert!(check_key(bad).is_err(), "{bad:?}");
        }
        for good in ["a", "netcode-address", "x.y_z-1", &"k".repeat(59)] {
            assert!(check_key(good).is_ok(), "{good:?}");
        }
    }
}

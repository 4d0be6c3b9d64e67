//! The manifest's two enumerations, a vector's kind and an AEAD, each
//! named in JSON by a fixed string: an unknown name is an error, never
//! skipped (STANDARD.md: the packet types; the AEADs of tokens and
//! packets).

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// The kind of a vector: what its bytes are. In JSON, its [name](Self::name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "&'static str", try_from = "String")]
pub enum Kind {
    /// A 1024-byte private connect token plaintext buffer.
    PrivateConnectTokenPlaintext,
    /// A sealed 1024-byte private connect token.
    PrivateConnectTokenEncrypted,
    /// A 2048-byte public connect token.
    ConnectToken,
    /// A 300-byte challenge token plaintext buffer.
    ChallengeTokenPlaintext,
    /// A sealed 300-byte challenge token.
    ChallengeTokenEncrypted,
    /// A connection request packet (type 0).
    PacketRequest,
    /// A connection denied packet (type 1).
    PacketDenied,
    /// A connection challenge packet (type 2).
    PacketChallenge,
    /// A connection response packet (type 3).
    PacketResponse,
    /// A keep-alive packet (type 4).
    PacketKeepAlive,
    /// A payload packet (type 5).
    PacketPayload,
    /// A disconnect packet (type 6).
    PacketDisconnect,
}

impl Kind {
    /// Every kind, in the order of the manifest's documentation.
    pub const ALL: [Self; 12] = [
        Self::PrivateConnectTokenPlaintext,
        Self::PrivateConnectTokenEncrypted,
        Self::ConnectToken,
        Self::ChallengeTokenPlaintext,
        Self::ChallengeTokenEncrypted,
        Self::PacketRequest,
        Self::PacketDenied,
        Self::PacketChallenge,
        Self::PacketResponse,
        Self::PacketKeepAlive,
        Self::PacketPayload,
        Self::PacketDisconnect,
    ];

    /// The name the manifest uses for this kind.
    pub fn name(self) -> &'static str {
        match self {
            Self::PrivateConnectTokenPlaintext => "private_connect_token_plaintext",
            Self::PrivateConnectTokenEncrypted => "private_connect_token_encrypted",
            Self::ConnectToken => "connect_token",
            Self::ChallengeTokenPlaintext => "challenge_token_plaintext",
            Self::ChallengeTokenEncrypted => "challenge_token_encrypted",
            Self::PacketRequest => "packet_request",
            Self::PacketDenied => "packet_denied",
            Self::PacketChallenge => "packet_challenge",
            Self::PacketResponse => "packet_response",
            Self::PacketKeepAlive => "packet_keep_alive",
            Self::PacketPayload => "packet_payload",
            Self::PacketDisconnect => "packet_disconnect",
        }
    }

    /// The kind with this manifest name; an unknown name is an error.
    pub fn from_name(name: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|kind| kind.name() == name)
            .ok_or_else(|| Error::new(format!("unknown vector kind {name:?}")))
    }

    /// The packet type number of a packet kind, `None` for tokens.
    pub fn packet_type(self) -> Option<u8> {
        match self {
            Self::PacketRequest => Some(0),
            Self::PacketDenied => Some(1),
            Self::PacketChallenge => Some(2),
            Self::PacketResponse => Some(3),
            Self::PacketKeepAlive => Some(4),
            Self::PacketPayload => Some(5),
            Self::PacketDisconnect => Some(6),
            _ => None,
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A kind as JSON writes it: its name.
impl From<Kind> for &'static str {
    fn from(kind: Kind) -> Self {
        kind.name()
    }
}

/// A kind from its name, as JSON gives it; an unknown name is an error.
impl TryFrom<String> for Kind {
    type Error = Error;

    fn try_from(name: String) -> Result<Self> {
        Self::from_name(&name)
    }
}

/// The `algorithm` of an `encryption` object. In JSON, its
/// [name](Self::name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "&'static str", try_from = "String")]
pub enum Algorithm {
    /// `chacha20poly1305_ietf`: 12-byte nonce (packets, challenge tokens).
    ChaCha20Poly1305,
    /// `xchacha20poly1305_ietf`: 24-byte nonce (private connect tokens).
    XChaCha20Poly1305,
}

impl Algorithm {
    /// The name the manifest uses for this algorithm.
    pub fn name(self) -> &'static str {
        match self {
            Self::ChaCha20Poly1305 => "chacha20poly1305_ietf",
            Self::XChaCha20Poly1305 => "xchacha20poly1305_ietf",
        }
    }

    /// The algorithm with this manifest name; an unknown name is an error.
    pub fn from_name(name: &str) -> Result<Self> {
        [Self::ChaCha20Poly1305, Self::XChaCha20Poly1305]
            .into_iter()
            .find(|algorithm| algorithm.name() == name)
            .ok_or_else(|| Error::new(format!("unknown algorithm {name:?}")))
    }
}

/// An algorithm as JSON writes it: its name.
impl From<Algorithm> for &'static str {
    fn from(algorithm: Algorithm) -> Self {
        algorithm.name()
    }
}

/// An algorithm from its name, as JSON gives it; an unknown name is an
/// error.
impl TryFrom<String> for Algorithm {
    type Error = Error;

    fn try_from(name: String) -> Result<Self> {
        Self::from_name(&name)
    }
}

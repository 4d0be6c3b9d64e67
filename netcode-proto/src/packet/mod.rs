//! The seven netcode packets: their types, their wire form, and the checked
//! reader that decrypts them in place.
//!
//! * [`write_packet`] builds one packet into a caller buffer, encrypting
//!   every type but the connection request.
//! * [`read_packet_with`] runs every check of the standard in its exact
//!   order and returns the packet borrowing the caller's buffer, or the
//!   [`PacketError`] that says why it must be dropped. Every receiver reads
//!   with a [`PacketContext`]; only a server adds a [`RequestContext`] for
//!   connection requests. [`read_packet`] takes both in one [`ReadContext`].
//!
//! STANDARD.md: *Packets*, *Reading Encrypted Packets*.

mod context;
mod error;
mod kind;
mod read;
mod sequence;
mod write;

pub use context::{PacketContext, ReadContext, RequestContext};
pub use error::{PacketError, WriteError};
pub use kind::{PacketType, PacketTypes};
pub use read::{ConnectionRequest, ReadPacket, read_packet, read_packet_with};
pub(crate) use read::{read_encrypted, read_request};
pub use sequence::{sequence_bytes, write_prefix_and_sequence};
pub use write::{packet_associated_data, write_packet};

use crate::constants::{
    CHALLENGE_TOKEN_BYTES, CONNECT_TOKEN_NONCE_BYTES, CONNECT_TOKEN_PRIVATE_BYTES,
};

/// One netcode packet.
///
/// `R` is the form of the connection request: [`RequestPacket`] (the sealed
/// token a client sends) when writing, [`ConnectionRequest`] (the opened and
/// parsed token) when reading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Packet<'a, R = RequestPacket<'a>> {
    /// Connection request (type 0): the only unencrypted packet.
    Request(R),
    /// Connection denied (type 1): the server is full.
    Denied,
    /// Connection challenge (type 2).
    Challenge(ChallengePacket<'a>),
    /// Connection response (type 3): the client echoes the challenge.
    Response(ChallengePacket<'a>),
    /// Connection keep-alive (type 4).
    KeepAlive(KeepAlivePacket),
    /// Connection payload (type 5): 1 to 1200 bytes of application data.
    Payload(&'a [u8]),
    /// Connection disconnect (type 6).
    Disconnect,
}

impl<R> Packet<'_, R> {
    /// The packet's type.
    pub fn packet_type(&self) -> PacketType {
        match self {
            Self::Request(_) => PacketType::Request,
            Self::Denied => PacketType::Denied,
            Self::Challenge(_) => PacketType::Challenge,
            Self::Response(_) => PacketType::Response,
            Self::KeepAlive(_) => PacketType::KeepAlive,
            Self::Payload(_) => PacketType::Payload,
            Self::Disconnect => PacketType::Disconnect,
        }
    }
}

impl<'a> Packet<'a, core::convert::Infallible> {
    /// The same packet, in the type that can also hold a request.
    pub(crate) fn with_request<R>(self) -> Packet<'a, R> {
        match self {
            Self::Request(never) => match never {},
            Self::Denied => Packet::Denied,
            Self::Challenge(c) => Packet::Challenge(c),
            Self::Response(c) => Packet::Response(c),
            Self::KeepAlive(k) => Packet::KeepAlive(k),
            Self::Payload(p) => Packet::Payload(p),
            Self::Disconnect => Packet::Disconnect,
        }
    }
}

/// A connection request as a client writes it: the expire timestamp, nonce
/// and sealed private data copied from its connect token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestPacket<'a> {
    /// The connect token's expire timestamp (unix seconds).
    pub expire_timestamp: u64,
    /// The connect token's nonce.
    pub nonce: &'a [u8; CONNECT_TOKEN_NONCE_BYTES],
    /// The connect token's sealed private data.
    pub private_data: &'a [u8; CONNECT_TOKEN_PRIVATE_BYTES],
}

/// The body of challenge and response packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChallengePacket<'a> {
    /// The sequence the challenge token was sealed under.
    pub challenge_sequence: u64,
    /// The sealed challenge token.
    pub token: &'a [u8; CHALLENGE_TOKEN_BYTES],
}

/// The body of a keep-alive packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeepAlivePacket {
    /// The client's slot on the server.
    pub client_index: u32,
    /// The number of slots on the server.
    pub max_clients: u32,
}

//! What a receiver reads packets with (STANDARD.md: *Reading Encrypted
//! Packets*, and the connection request checks of *Processing Connection
//! Requests*): the decoding context every receiver has, and the request
//! context only a server has.

use crate::crypto::Key;

use super::PacketTypes;

/// What every receiver decodes with: its protocol id, the key for packets
/// from this sender, and the packet types it accepts.
#[derive(Debug, Clone, Copy)]
pub struct PacketContext<'k> {
    /// Our protocol id; packets for another id are dropped.
    pub protocol_id: u64,
    /// The key for packets from this sender, if it has one.
    pub read_key: Option<&'k Key>,
    /// The packet types this side accepts.
    pub accepted: PacketTypes,
}

/// What a server adds to read connection requests: the key that opens
/// connect tokens and its clock and restart floor for their expiry. A
/// client has none of this and reads with no request context.
#[derive(Debug, Clone, Copy)]
pub struct RequestContext<'k> {
    /// The private key that opens connect tokens.
    pub private_key: &'k Key,
    /// Unix seconds now: a token expiring at or before this is dropped.
    pub current_timestamp: u64,
    /// A token expiring before this (unix seconds) may predate the server's
    /// start and is dropped: the restart rule. 0 turns it off.
    pub min_expire_timestamp: u64,
}

/// Both contexts in one struct, as [`read_packet`](super::read_packet)
/// takes them: the form existing callers build. New code passes a
/// [`PacketContext`] and an optional [`RequestContext`] to
/// [`read_packet_with`](super::read_packet_with) instead, so that a client
/// does not fill in timestamps it does not have.
#[derive(Debug, Clone, Copy)]
pub struct ReadContext<'k> {
    /// Our protocol id; packets for another id are dropped.
    pub protocol_id: u64,
    /// Unix seconds now, for connect token expiry.
    pub current_timestamp: u64,
    /// Requests whose token expires before this (unix seconds) are dropped:
    /// the restart rule. 0 turns it off.
    pub min_expire_timestamp: u64,
    /// The private key that opens connect tokens (servers only).
    pub private_key: Option<&'k Key>,
    /// The key for packets from this sender, if it has one.
    pub read_key: Option<&'k Key>,
    /// The packet types this side accepts.
    pub accepted: PacketTypes,
}

impl<'k> ReadContext<'k> {
    /// The decoding context, and the request context when there is a
    /// private key (without one, requests are dropped for want of a key).
    pub fn split(&self) -> (PacketContext<'k>, Option<RequestContext<'k>>) {
        let packets = PacketContext {
            protocol_id: self.protocol_id,
            read_key: self.read_key,
            accepted: self.accepted,
        };
        let requests = self.private_key.map(|private_key| RequestContext {
            private_key,
            current_timestamp: self.current_timestamp,
            min_expire_timestamp: self.min_expire_timestamp,
        });
        (packets, requests)
    }
}

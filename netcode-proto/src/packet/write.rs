//! Writing packets: the wire form of each of the seven types, encrypted
//! under the sender's key with the sequence as nonce (STANDARD.md:
//! *Packets*).

use crate::bytes::Writer;
use crate::constants::{
    CONNECTION_REQUEST_BYTES, MAC_BYTES, VERSION_INFO, VERSION_INFO_BYTES, is_payload_size,
};
use crate::crypto::{self, Key, sequence_nonce};

use super::sequence::write_prefix_and_sequence;
use super::{Packet, PacketType, WriteError};

/// The associated data of an encrypted packet: version info, protocol id
/// and the prefix byte (22 bytes).
pub fn packet_associated_data(protocol_id: u64, prefix: u8) -> [u8; VERSION_INFO_BYTES + 9] {
    let mut ad = [0u8; VERSION_INFO_BYTES + 9];
    ad[..VERSION_INFO_BYTES].copy_from_slice(&VERSION_INFO);
    ad[VERSION_INFO_BYTES..VERSION_INFO_BYTES + 8].copy_from_slice(&protocol_id.to_le_bytes());
    ad[VERSION_INFO_BYTES + 8] = prefix;
    ad
}

/// Writes `packet` into `out` and returns its length.
///
/// A connection request is written in the clear (`sequence` and `key` are
/// not used). Every other type gets a prefix byte, the sequence in its
/// shortest form, and its body encrypted with `key` under the nonce made from
/// `sequence`, followed by the tag.
pub fn write_packet(
    packet: &Packet<'_>,
    sequence: u64,
    key: &Key,
    protocol_id: u64,
    out: &mut [u8],
) -> Result<usize, WriteError> {
    if let Packet::Request(request) = packet {
        let out = out
            .get_mut(..CONNECTION_REQUEST_BYTES)
            .ok_or(WriteError::BufferTooSmall)?;
        let mut w = Writer::new(out);
        let written = (|| {
            w.u8(PacketType::Request as u8)?;
            w.bytes(&VERSION_INFO)?;
            w.u64(protocol_id)?;
            w.u64(request.expire_timestamp)?;
            w.bytes(request.nonce)?;
            w.bytes(request.private_data)
        })();
        debug_assert!(written.is_some());
        return Ok(CONNECTION_REQUEST_BYTES);
    }

    if let Packet::Payload(payload) = packet
        && !is_payload_size(payload.len())
    {
        return Err(WriteError::PayloadSize);
    }

    let mut w = Writer::new(out);
    let header = write_prefix_and_sequence(&mut w, packet.packet_type() as u8, sequence)
        .ok_or(WriteError::BufferTooSmall)?;
    let body = (|| {
        match packet {
            Packet::Request(_) | Packet::Denied | Packet::Disconnect => {}
            Packet::Challenge(c) | Packet::Response(c) => {
                w.u64(c.challenge_sequence)?;
                w.bytes(c.token)?;
            }
            Packet::KeepAlive(k) => {
                w.u32(k.client_index)?;
                w.u32(k.max_clients)?;
            }
            Packet::Payload(p) => w.bytes(p)?,
        }
        Some(w.position())
    })()
    .ok_or(WriteError::BufferTooSmall)?;
    let total = body + MAC_BYTES;
    let out = out.get_mut(..total).ok_or(WriteError::BufferTooSmall)?;

    let ad = packet_associated_data(protocol_id, out[0]);
    let (text, tag) = out.split_at_mut(body);
    tag.copy_from_slice(&crypto::encrypt(
        key,
        &sequence_nonce(sequence),
        &ad,
        &mut text[header..],
    ));
    Ok(total)
}

//! Server addresses in the netcode wire form.
//!
//! STANDARD.md: *Connect Token*, the address list of the private and public
//! tokens.
//!
//! An address is a type byte (1 = IPv4, 2 = IPv6), the IP, then the port as a
//! little-endian `u16`. IPv4 octets go in dotted order; each of the eight IPv6
//! groups is written as a little-endian `u16` of the group's value, which is
//! *not* network byte order. IPv6 flow info and scope id are not carried.

use core::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

use crate::bytes::{Reader, Writer};
use crate::constants::MAX_SERVERS_PER_CONNECT;

/// Address type byte of an IPv4 address.
pub const ADDRESS_IPV4: u8 = 1;
/// Address type byte of an IPv6 address.
pub const ADDRESS_IPV6: u8 = 2;

/// The server addresses a connect token lists: between 1 and 32 of them
/// once validated.
pub type AddressList = heapless::Vec<SocketAddr, MAX_SERVERS_PER_CONNECT>;

/// Why a list of server addresses could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressError {
    /// The address count is 0 or more than [`MAX_SERVERS_PER_CONNECT`].
    BadCount,
    /// An address type byte is neither 1 (IPv4) nor 2 (IPv6).
    BadType,
    /// The data ends inside the list.
    Truncated,
}

impl core::fmt::Display for AddressError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Self::BadCount => "server address count outside 1..=32",
            Self::BadType => "server address type is neither IPv4 (1) nor IPv6 (2)",
            Self::Truncated => "server address list is truncated",
        })
    }
}

impl core::error::Error for AddressError {}

/// Number of bytes `address` takes on the wire.
pub fn wire_size(address: &SocketAddr) -> usize {
    match address {
        SocketAddr::V4(_) => 1 + 4 + 2,
        SocketAddr::V6(_) => 1 + 16 + 2,
    }
}

/// Writes one address in netcode form.
pub fn write_address(writer: &mut Writer<'_>, address: &SocketAddr) -> Option<()> {
    match address {
        SocketAddr::V4(v4) => {
            writer.u8(ADDRESS_IPV4)?;
            writer.bytes(&v4.ip().octets())?;
        }
        SocketAddr::V6(v6) => {
            writer.u8(ADDRESS_IPV6)?;
            for group in v6.ip().segments() {
                writer.u16(group)?;
            }
        }
    }
    writer.u16(address.port())
}

/// Reads one address in netcode form.
pub fn read_address(reader: &mut Reader<'_>) -> Result<SocketAddr, AddressError> {
    match reader.u8().ok_or(AddressError::Truncated)? {
        ADDRESS_IPV4 => {
            let octets: [u8; 4] = reader.array().ok_or(AddressError::Truncated)?;
            let port = reader.u16().ok_or(AddressError::Truncated)?;
            Ok(SocketAddr::V4(SocketAddrV4::new(
                Ipv4Addr::from(octets),
                port,
            )))
        }
        ADDRESS_IPV6 => {
            let mut groups = [0u16; 8];
            for group in &mut groups {
                *group = reader.u16().ok_or(AddressError::Truncated)?;
            }
            let port = reader.u16().ok_or(AddressError::Truncated)?;
            Ok(SocketAddr::V6(SocketAddrV6::new(
                Ipv6Addr::from(groups),
                port,
                0,
                0,
            )))
        }
        _ => Err(AddressError::BadType),
    }
}

/// Writes the address count (`u32`) and every address.
pub fn write_address_list(writer: &mut Writer<'_>, addresses: &[SocketAddr]) -> Option<()> {
    writer.u32(u32::try_from(addresses.len()).ok()?)?;
    addresses.iter().try_for_each(|a| write_address(writer, a))
}

/// Reads the address count and the addresses, checking the count is in
/// `1..=32` and every type byte is valid.
pub fn read_address_list(reader: &mut Reader<'_>) -> Result<AddressList, AddressError> {
    let count = reader.u32().ok_or(AddressError::Truncated)?;
    if count == 0 || count as usize > MAX_SERVERS_PER_CONNECT {
        return Err(AddressError::BadCount);
    }
    let mut list = AddressList::new();
    for _ in 0..count {
        // Cannot overflow: count was checked against the capacity above.
        let _ = list.push(read_address(reader)?);
    }
    Ok(list)
}

/// Whether two addresses are the same endpoint as netcode compares them:
/// same family, IP and port. IPv6 flow info and scope id are ignored, since
/// they are never on the wire.
pub fn same_endpoint(a: &SocketAddr, b: &SocketAddr) -> bool {
    match (a, b) {
        (SocketAddr::V4(a), SocketAddr::V4(b)) => a == b,
        (SocketAddr::V6(a), SocketAddr::V6(b)) => a.ip() == b.ip() && a.port() == b.port(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(address: &SocketAddr) -> heapless::Vec<u8, 19> {
        let mut buf = [0u8; 19];
        let mut w = Writer::new(&mut buf);
        write_address(&mut w, address).unwrap();
        let n = w.position();
        assert_eq!(n, wire_size(address));
        heapless::Vec::from_slice(&buf[..n]).unwrap()
    }

    #[test]
    fn ipv4_is_octets_then_little_endian_port() {
        let a: SocketAddr = "127.0.0.1:40000".parse().unwrap();
        assert_eq!(&encode(&a)[..], &[1, 127, 0, 0, 1, 0x40, 0x9c]);
    }

    #[test]
    fn ipv6_groups_are_little_endian() {
        let a: SocketAddr = "[fe80::202:b3ff:fe1e:8329]:50000".parse().unwrap();
        let expected = [
            2, 0x80, 0xfe, 0, 0, 0, 0, 0, 0, 0x02, 0x02, 0xff, 0xb3, 0x1e, 0xfe, 0x29, 0x83, 0x50,
            0xc3,
        ];
        assert_eq!(&encode(&a)[..], &expected);
        assert_eq!(read_address(&mut Reader::new(&expected)), Ok(a));
    }

    #[test]
    fn rejects_unknown_types_and_bad_counts() {
        assert_eq!(
            read_address(&mut Reader::new(&[0, 1, 2, 3, 4, 5, 6])),
            Err(AddressError::BadType)
        );
        assert_eq!(
            read_address(&mut Reader::new(&[3, 1, 2, 3, 4, 5, 6])),
            Err(AddressError::BadType)
        );
        assert_eq!(
            read_address(&mut Reader::new(&[1, 1, 2, 3])),
            Err(AddressError::Truncated)
        );
        assert_eq!(
            read_address_list(&mut Reader::new(&0u32.to_le_bytes())),
            Err(AddressError::BadCount)
        );
        assert_eq!(
            read_address_list(&mut Reader::new(&33u32.to_le_bytes())),
            Err(AddressError::BadCount)
        );
        assert_eq!(
            read_address_list(&mut Reader::new(&u32::MAX.to_le_bytes())),
            Err(AddressError::BadCount)
        );
    }

    #[test]
    fn endpoint_equality_ignores_scope_and_flow() {
        let a = SocketAddr::V6(SocketAddrV6::new(Ipv6Addr::LOCALHOST, 5, 1, 2));
        let b = SocketAddr::V6(SocketAddrV6::new(Ipv6Addr::LOCALHOST, 5, 0, 0));
        assert!(same_endpoint(&a, &b));
        let c: SocketAddr = "127.0.0.1:5".parse().unwrap();
        assert!(!same_endpoint(&a, &c));
    }
}

//! A server address of a connect token as the manifest describes it
//! (STANDARD.md: the address encoding inside connect tokens), and the JSON
//! form it is read from and written as: its IP in `ipv4` or in
//! `ipv6_groups`, by its type.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

use serde::{Deserialize, Serialize};

use super::json;
use crate::{Error, Result};

/// A server address as the manifest describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "AddressJson", into = "AddressJson")]
pub struct ServerAddress {
    /// The reference's own formatting of the address (informational).
    pub string: String,
    /// The wire type byte: 1 = IPv4, 2 = IPv6.
    pub address_type: u8,
    /// The IP, from `ipv4` (four octets) or `ipv6_groups` (eight groups).
    pub ip: IpAddr,
    /// The port.
    pub port: u16,
    /// The IP in network byte order (`ip_bytes_hex`).
    pub ip_bytes: Vec<u8>,
    /// The exact encoding inside a token (`wire_hex`).
    pub wire: Vec<u8>,
}

impl ServerAddress {
    /// The address as a socket address (no flow info, no scope id).
    pub fn socket_addr(&self) -> SocketAddr {
        match self.ip {
            IpAddr::V4(ip) => SocketAddr::V4(SocketAddrV4::new(ip, self.port)),
            IpAddr::V6(ip) => SocketAddr::V6(SocketAddrV6::new(ip, self.port, 0, 0)),
        }
    }
}

/// A server address as JSON has it. `type_name` is kept only to be checked
/// against `type`.
#[derive(Serialize, Deserialize)]
#[serde(rename = "ServerAddress", deny_unknown_fields)]
struct AddressJson {
    string: String,
    #[serde(rename = "type")]
    address_type: u8,
    type_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    ipv4: Option<[u8; 4]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ipv6_groups: Option<[u16; 8]>,
    port: u16,
    #[serde(with = "json::hex")]
    ip_bytes_hex: Vec<u8>,
    #[serde(with = "json::hex")]
    wire_hex: Vec<u8>,
}

/// The IP must be in the field of its type, and in no other.
impl TryFrom<AddressJson> for ServerAddress {
    type Error = Error;

    fn try_from(a: AddressJson) -> Result<Self> {
        let ip = match (a.address_type, a.type_name.as_str(), a.ipv4, a.ipv6_groups) {
            (1, "ipv4", Some(octets), None) => IpAddr::V4(Ipv4Addr::from(octets)),
            (2, "ipv6", None, Some(groups)) => IpAddr::V6(Ipv6Addr::from(groups)),
            (1, "ipv4", _, _) => {
                return Err(Error::new(
                    "an IPv4 address gives its IP in ipv4, and nothing in ipv6_groups",
                ));
            }
            (2, "ipv6", _, _) => {
                return Err(Error::new(
                    "an IPv6 address gives its IP in ipv6_groups, and nothing in ipv4",
                ));
            }
            (address_type, type_name, _, _) => {
                return Err(Error::new(format!(
                    "unknown address type {address_type} ({type_name:?})"
                )));
            }
        };
        Ok(Self {
            string: a.string,
            address_type: a.address_type,
            ip,
            port: a.port,
            ip_bytes: a.ip_bytes_hex,
            wire: a.wire_hex,
        })
    }
}

impl From<ServerAddress> for AddressJson {
    fn from(a: ServerAddress) -> Self {
        let (type_name, ipv4, ipv6_groups) = match a.ip {
            IpAddr::V4(ip) => ("ipv4", Some(ip.octets()), None),
            IpAddr::V6(ip) => ("ipv6", None, Some(ip.segments())),
        };
        Self {
            string: a.string,
            address_type: a.address_type,
            type_name: type_name.to_owned(),
            ipv4,
            ipv6_groups,
            port: a.port,
            ip_bytes_hex: a.ip_bytes,
            wire_hex: a.wire,
        }
    }
}

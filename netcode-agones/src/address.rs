//! The server's public address, as Agones reports it in the GameServer
//! status: a host (by default `status.address`, or the entry of
//! `status.addresses` of a chosen type) at the port named (by default)
//! `netcode` in `status.ports`. The token service picks the same host from
//! the allocation's answer with the same setting (`NETCODE_ADDRESS_TYPE`),
//! so these are what connect tokens list and what the netcode server must
//! call itself.
//!
//! Agones fills `status.address` with the node's ExternalDNS, else
//! ExternalIP, else InternalDNS, else InternalIP (`pkg/gameservers/`
//! `gameservers.go`, `address()`), so it may be a DNS name (EKS nodes
//! report one): a name is resolved, and the lowest of its IPv4 addresses
//! (else of its IPv6 ones) is taken, the rule the token service follows.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use agones::{GameServer, Sdk};
use tokio::time::Instant;

use crate::error::{AddressError, StartError, describe};

/// How often the status is read again while it lacks the address or port.
const ADDRESS_POLL: Duration = Duration::from_millis(250);

/// The environment variable that names the address type, read by
/// `netcode-agones-server` and the matcher alike.
pub const ADDRESS_TYPE_VARIABLE: &str = "NETCODE_ADDRESS_TYPE";

/// Where the status says the server is reached, before any name is
/// resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatusAddress {
    /// An IP address and port.
    Ip(SocketAddr),
    /// A DNS name (the node's ExternalDNS or InternalDNS, say) and port.
    Name {
        /// The name.
        host: String,
        /// The port.
        port: u16,
    },
}

/// The public address in `gameserver`'s status: the host of type
/// `address_type` in `status.addresses` (case-insensitive: `ExternalIP`,
/// `InternalIP`, `ExternalDNS`, `InternalDNS`, `Hostname`, ...), or
/// `status.address` when `address_type` is `None`, at the port named
/// `port_name`.
///
/// ```
/// use agones::{GameServer, Port, Status};
/// use netcode_agones::{StatusAddress, public_address};
///
/// let gameserver = GameServer {
///     status: Some(Status {
///         address: "node-7.example.net".into(),
///         ports: vec![Port { name: "netcode".into(), port: 7342 }],
///         ..Status::default()
///     }),
///     ..GameServer::default()
/// };
/// let address = public_address(&gameserver, "netcode", None).unwrap();
/// assert_eq!(address, StatusAddress::Name { host: "node-7.example.net".into(), port: 7342 });
/// assert!(public_address(&gameserver, "game", None).is_err());
/// assert!(public_address(&gameserver, "netcode", Some("ExternalIP")).is_err());
/// ```
pub fn public_address(
    gameserver: &GameServer,
    port_name: &str,
    address_type: Option<&str>,
) -> Result<StatusAddress, AddressError> {
    let status = gameserver.status.as_ref().ok_or(AddressError::NoAddress)?;
    let addresses: Vec<(&str, &str)> = (status.addresses.iter())
        .map(|a| (a.r#type.as_str(), a.address.as_str()))
        .collect();
    let ports: Vec<(&str, i32)> = (status.ports.iter())
        .map(|p| (p.name.as_str(), p.port))
        .collect();
    choose_address(&status.address, &addresses, &ports, port_name, address_type)
}

/// [`public_address`] on the status's fields: `address`, `addresses` as
/// (type, address) and `ports` as (name, number).
fn choose_address(
    address: &str,
    addresses: &[(&str, &str)],
    ports: &[(&str, i32)],
    port_name: &str,
    address_type: Option<&str>,
) -> Result<StatusAddress, AddressError> {
    let host = match address_type {
        None => address.trim(),
        Some(wanted) => addresses
            .iter()
            .find(|(kind, host)| kind.eq_ignore_ascii_case(wanted) && !host.trim().is_empty())
            .map(|(_, host)| host.trim())
            .ok_or_else(|| AddressError::NoAddressOfType {
                wanted: wanted.to_owned(),
                available: addresses
                    .iter()
                    .map(|(kind, _)| (*kind).to_owned())
                    .collect(),
            })?,
    };
    if host.is_empty() {
        return Err(AddressError::NoAddress);
    }
    let &(_, number) = ports
        .iter()
        .find(|(name, _)| *name == port_name)
        .ok_or_else(|| AddressError::NoPort {
            name: port_name.to_owned(),
            available: ports.iter().map(|(name, _)| (*name).to_owned()).collect(),
        })?;
    let port = u16::try_from(number)
        .ok()
        .filter(|&n| n != 0)
        .ok_or_else(|| AddressError::InvalidPort {
            name: port_name.to_owned(),
            port: number,
        })?;
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    Ok(match bare.parse::<IpAddr>() {
        Ok(ip) => StatusAddress::Ip(SocketAddr::new(ip, port)),
        Err(_) => StatusAddress::Name {
            host: bare.to_owned(),
            port,
        },
    })
}

/// The address a name's resolution gives the server: the lowest IPv4
/// address, else the lowest IPv6 one (a resolver's order may change
/// between calls and between pods; the lowest does not).
pub fn pick_resolved(found: impl IntoIterator<Item = SocketAddr>) -> Option<SocketAddr> {
    found
        .into_iter()
        .min_by_key(|address| (address.is_ipv6(), address.ip()))
}

/// `address` as a socket address: itself, or its name resolved (see
/// [`pick_resolved`]).
pub async fn resolve(address: &StatusAddress) -> Result<SocketAddr, AddressError> {
    let (host, port) = match address {
        StatusAddress::Ip(address) => return Ok(*address),
        StatusAddress::Name { host, port } => (host, *port),
    };
    let unresolved = |why: String| AddressError::Unresolved {
        name: host.clone(),
        why,
    };
    let found = tokio::net::lookup_host((host.as_str(), port))
        .await
        .map_err(|e| unresolved(e.to_string()))?;
    pick_resolved(found).ok_or_else(|| unresolved("it has no address".into()))
}

/// Reads the GameServer until its status names the public address (see
/// [`public_address`]), then resolves it if it is a name, up to
/// `deadline`: right after the pod starts the status may not have it yet.
/// The last problem seen is the error.
pub async fn wait_for_public_address(
    sdk: &mut Sdk,
    port_name: &str,
    address_type: Option<&str>,
    deadline: Instant,
) -> Result<SocketAddr, StartError> {
    loop {
        let problem = match sdk.get_gameserver().await {
            Ok(gameserver) => match public_address(&gameserver, port_name, address_type) {
                Ok(found) => match resolve(&found).await {
                    Ok(address) => {
                        if let StatusAddress::Name { host, .. } = &found {
                            log::info!(
                                target: crate::TARGET,
                                "the public address {host:?} resolves to {}",
                                address.ip()
                            );
                        }
                        return Ok(address);
                    }
                    Err(e) => e,
                },
                Err(e) => e,
            },
            Err(e) => AddressError::Unreadable(describe(&e)),
        };
        if Instant::now() + ADDRESS_POLL > deadline {
            return Err(StartError::Address(problem));
        }
        log::debug!(target: crate::TARGET, "waiting for the public address: {problem}");
        tokio::time::sleep(ADDRESS_POLL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A node's addresses as Agones lists them.
    const NODE: &[(&str, &str)] = &[("Hostname", "node-1"), ("InternalIP", "10.9.8.7")];

    fn choose(
        address: &str,
        ports: &[(&str, i32)],
        port_name: &str,
        address_type: Option<&str>,
    ) -> Result<StatusAddress, AddressError> {
        choose_address(address, NODE, ports, port_name, address_type)
    }

    fn ip(text: &str) -> Result<StatusAddress, AddressError> {
        Ok(StatusAddress::Ip(text.parse().unwrap()))
    }

    #[test]
    fn the_named_port_at_the_status_address() {
        let ports = &[("http", 80), ("netcode", 7123)];
        assert_eq!(
            choose("10.1.2.3", ports, "netcode", None),
            ip("10.1.2.3:7123")
        );
        assert_eq!(choose("10.1.2.3", ports, "http", None), ip("10.1.2.3:80"));
        assert_eq!(
            choose("2001:db8::5", &[("netcode", 7001)], "netcode", None),
            ip("[2001:db8::5]:7001")
        );
    }

    #[test]
    fn an_address_type_picks_from_the_addresses() {
        let ports = &[("netcode", 7000)];
        assert_eq!(
            choose("node.example", ports, "netcode", Some("internalip")),
            ip("10.9.8.7:7000")
        );
        assert_eq!(
            choose("node.example", ports, "netcode", Some("Hostname")),
            Ok(StatusAddress::Name {
                host: "node-1".into(),
                port: 7000
            })
        );
        let missing = choose("node.example", ports, "netcode", Some("ExternalIP")).unwrap_err();
        assert_eq!(
            missing,
            AddressError::NoAddressOfType {
                wanted: "ExternalIP".into(),
                available: vec!["Hostname".into(), "InternalIP".into()]
            }
        );
        assert!(
            missing.to_string().contains(ADDRESS_TYPE_VARIABLE),
            "{missing}"
        );
    }

    #[test]
    fn a_name_is_kept_for_resolving() {
        assert_eq!(
            choose("node.example", &[("netcode", 7000)], "netcode", None),
            Ok(StatusAddress::Name {
                host: "node.example".into(),
                port: 7000
            })
        );
    }

    #[test]
    fn the_lowest_ipv4_address_of_a_name_is_taken() {
        let parse = |list: &[&str]| -> Vec<SocketAddr> {
            list.iter().map(|a| a.parse().unwrap()).collect()
        };
        let mixed = parse(&["[2001:db8::1]:7", "10.0.0.9:7", "10.0.0.2:7"]);
        assert_eq!(pick_resolved(mixed), Some("10.0.0.2:7".parse().unwrap()));
        let v6 = parse(&["[2001:db8::9]:7", "[2001:db8::3]:7"]);
        assert_eq!(pick_resolved(v6), Some("[2001:db8::3]:7".parse().unwrap()));
        assert_eq!(pick_resolved([]), None);
    }

    #[tokio::test]
    async fn a_name_resolves_or_is_refused_with_the_setting_to_use() {
        let name = StatusAddress::Name {
            host: "localhost".into(),
            port: 7000,
        };
        let address = resolve(&name).await.expect("localhost resolves");
        assert!(address.ip().is_loopback(), "{address}");
        assert_eq!(address.port(), 7000);
        let nowhere = StatusAddress::Name {
            host: "no-such-node.invalid".into(),
            port: 7000,
        };
        let error = resolve(&nowhere).await.unwrap_err();
        assert!(error.to_string().contains(ADDRESS_TYPE_VARIABLE), "{error}");
    }

    #[test]
    fn what_is_missing_is_said() {
        assert_eq!(
            public_address(&GameServer::default(), "netcode", None),
            Err(AddressError::NoAddress)
        );
        assert_eq!(
            choose("", &[("netcode", 7000)], "netcode", None),
            Err(AddressError::NoAddress)
        );
        assert_eq!(
            choose("10.0.0.1", &[("game", 7000)], "netcode", None),
            Err(AddressError::NoPort {
                name: "netcode".into(),
                available: vec!["game".into()]
            })
        );
        for bad in [0, -1, 65536] {
            assert_eq!(
                choose("10.0.0.1", &[("netcode", bad)], "netcode", None),
                Err(AddressError::InvalidPort {
                    name: "netcode".into(),
                    port: bad
                })
            );
        }
    }
}

//! The server's public address, as Agones reports it in the GameServer
//! status: `status.address` and the port named (by default) `netcode` in
//! `status.ports`. The token service reads the same two fields when it
//! allocates this server, so these are what connect tokens list and what
//! the netcode server must call itself.

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use agones::{GameServer, Sdk};
use tokio::time::Instant;

use crate::error::{StartError, describe};

/// How often the status is read again while it lacks the address or port.
const ADDRESS_POLL: Duration = Duration::from_millis(250);

/// What is missing or wrong in the GameServer status.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AddressError {
    /// The GameServer has no status, or its `address` is empty (the pod is
    /// not scheduled yet).
    NoAddress,
    /// `status.address` is not an IP address (a DNS name, say): connect
    /// tokens list IP addresses only.
    NotAnIp(String),
    /// No port of that name in `status.ports`; the names there are listed.
    NoPort {
        /// The name looked for.
        name: String,
        /// The names the status has.
        available: Vec<String>,
    },
    /// The port of that name is not a valid UDP port number.
    InvalidPort {
        /// Its name.
        name: String,
        /// Its value.
        port: i32,
    },
    /// The status could not be read (the last error from the SDK).
    Unreadable(String),
}

impl fmt::Display for AddressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoAddress => write!(f, "status.address is empty"),
            Self::NotAnIp(address) => {
                write!(f, "status.address {address:?} is not an IP address")
            }
            Self::NoPort { name, available } => write!(
                f,
                "status.ports has no port named {name:?} (it has {available:?})"
            ),
            Self::InvalidPort { name, port } => {
                write!(f, "status.ports names {name:?} with invalid port {port}")
            }
            Self::Unreadable(error) => write!(f, "GetGameServer failed: {error}"),
        }
    }
}

impl std::error::Error for AddressError {}

/// The public address in `gameserver`'s status: `status.address` at the
/// port named `port_name`.
///
/// ```
/// use agones::{GameServer, Port, Status};
/// use netcode_agones::public_address;
///
/// let gameserver = GameServer {
///     status: Some(Status {
///         address: "203.0.113.7".into(),
///         ports: vec![Port { name: "netcode".into(), port: 7342 }],
///         ..Status::default()
///     }),
///     ..GameServer::default()
/// };
/// let address = public_address(&gameserver, "netcode").unwrap();
/// assert_eq!(address.to_string(), "203.0.113.7:7342");
/// assert!(public_address(&gameserver, "game").is_err());
/// ```
pub fn public_address(
    gameserver: &GameServer,
    port_name: &str,
) -> Result<SocketAddr, AddressError> {
    let status = gameserver.status.as_ref().ok_or(AddressError::NoAddress)?;
    let text = status.address.trim();
    if text.is_empty() {
        return Err(AddressError::NoAddress);
    }
    let ip: IpAddr = text
        .parse()
        .map_err(|_| AddressError::NotAnIp(text.to_owned()))?;
    let port = status
        .ports
        .iter()
        .find(|p| p.name == port_name)
        .ok_or_else(|| AddressError::NoPort {
            name: port_name.to_owned(),
            available: status.ports.iter().map(|p| p.name.clone()).collect(),
        })?;
    let number = u16::try_from(port.port)
        .ok()
        .filter(|&n| n != 0)
        .ok_or_else(|| AddressError::InvalidPort {
            name: port_name.to_owned(),
            port: port.port,
        })?;
    Ok(SocketAddr::new(ip, number))
}

/// Reads the GameServer until its status names the public address (see
/// [`public_address`]), up to `deadline`: right after the pod starts the
/// status may not have it yet. The last problem seen is the error.
pub async fn wait_for_public_address(
    sdk: &mut Sdk,
    port_name: &str,
    deadline: Instant,
) -> Result<SocketAddr, StartError> {
    loop {
        let problem = match sdk.get_gameserver().await {
            Ok(gameserver) => match public_address(&gameserver, port_name) {
                Ok(address) => return Ok(address),
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
    use agones::{Port, Status};

    use super::*;

    fn gameserver(address: &str, ports: &[(&str, i32)]) -> GameServer {
        GameServer {
            status: Some(Status {
                address: address.into(),
                ports: ports
                    .iter()
                    .map(|&(name, port)| Port {
                        name: name.into(),
                        port,
                    })
                    .collect(),
                ..Status::default()
            }),
            ..GameServer::default()
        }
    }

    #[test]
    fn the_named_port_at_the_status_address() {
        let gs = gameserver("10.1.2.3", &[("http", 80), ("netcode", 7123)]);
        assert_eq!(
            public_address(&gs, "netcode"),
            Ok("10.1.2.3:7123".parse().unwrap())
        );
        assert_eq!(
            public_address(&gs, "http"),
            Ok("10.1.2.3:80".parse().unwrap())
        );
        let v6 = gameserver("2001:db8::5", &[("netcode", 7001)]);
        assert_eq!(
            public_address(&v6, "netcode"),
            Ok("[2001:db8::5]:7001".parse().unwrap())
        );
    }

    #[test]
    fn what_is_missing_is_said() {
        assert_eq!(
            public_address(&GameServer::default(), "netcode"),
            Err(AddressError::NoAddress)
        );
        assert_eq!(
            public_address(&gameserver("", &[("netcode", 7000)]), "netcode"),
            Err(AddressError::NoAddress)
        );
        assert_eq!(
            public_address(&gameserver("node.example", &[("netcode", 7000)]), "netcode"),
            Err(AddressError::NotAnIp("node.example".into()))
        );
        assert_eq!(
            public_address(&gameserver("10.0.0.1", &[("game", 7000)]), "netcode"),
            Err(AddressError::NoPort {
                name: "netcode".into(),
                available: vec!["game".into()]
            })
        );
        for bad in [0, -1, 65536] {
            assert_eq!(
                public_address(&gameserver("10.0.0.1", &[("netcode", bad)]), "netcode"),
                Err(AddressError::InvalidPort {
                    name: "netcode".into(),
                    port: bad
                })
            );
        }
    }
}

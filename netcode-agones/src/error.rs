//! What can stop a dedicated server from starting ([`StartError`]): the
//! sidecar never answering, a GameServer status without the address or
//! port ([`AddressError`]), a socket that cannot be bound, an annotation
//! key Kubernetes would refuse ([`MetadataError`]), an SDK call refused
//! before Ready; and the SDK's errors in words ([`describe`]).
//!
//! The steps that fail with these (`address`, `announce`, `sidecar`,
//! `socket`) import them from here; nothing here imports a step.

use std::time::Duration;

use netcode_std::{CreateError, ServerError};

/// Why [`DedicatedServer::start`](crate::DedicatedServer::start) (or one of
/// its steps) failed. None of these is retried further: a server that
/// cannot start should exit non-zero and let Agones replace it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// No Agones SDK server (the sidecar) answered on `port` within
    /// `waited`.
    #[error(
        "the Agones SDK sidecar did not answer on localhost:{port} within {} s \
         (AGONES_SDK_GRPC_PORT sets the port); not ready without it",
        waited.as_secs_f64()
    )]
    SidecarUnreachable {
        /// The SDK's gRPC port on localhost.
        port: u16,
        /// How long the server tried.
        waited: Duration,
    },
    /// The GameServer status did not name the server's public address and
    /// port within the SDK timeout.
    #[error("no public address from the GameServer status: {0}")]
    Address(#[source] AddressError),
    /// The netcode server could not be made (the socket at the bind
    /// address, for example).
    #[error("cannot create the netcode server: {0}")]
    Create(#[source] CreateError),
    /// The netcode server could not start (an invalid slot count).
    #[error("cannot start the netcode server: {0}")]
    Start(#[source] ServerError),
    /// An SDK call needed before Ready failed (`call` names it).
    #[error("the Agones SDK call {call} failed: {}", describe(error))]
    Sdk {
        /// The SDK method, as Agones names it (`SetLabel`, `Ready`, ...).
        call: &'static str,
        /// What the SDK reported.
        #[source]
        error: Box<agones::errors::Error>,
    },
    /// The WebTransport endpoint could not bind its UDP port.
    #[error("cannot bind the WebTransport endpoint at {bind}: {error}")]
    WebTransport {
        /// The address it was to bind.
        bind: std::net::SocketAddr,
        /// What the system said.
        #[source]
        error: std::io::Error,
    },
    /// The GameServer has no port for browsers (the port named by
    /// [`BrowserOptions::port_name`](crate::BrowserOptions::port_name)).
    #[error("no port for browsers in the GameServer status: {0}")]
    BrowserPort(#[source] AddressError),
    /// An annotation key Kubernetes would refuse.
    #[error("bad annotation key {0}")]
    Metadata(#[source] MetadataError),
    /// The bind address and the public address are of different families
    /// and the bind address is not the unspecified one that could follow.
    #[error("bind address {bind} and public address {public} are of different address families")]
    FamilyMismatch {
        /// The address the socket was to bind.
        bind: std::net::SocketAddr,
        /// The public address from the GameServer status.
        public: std::net::SocketAddr,
    },
}

impl StartError {
    /// The failure of the SDK call `call`.
    pub fn sdk(call: &'static str, error: agones::errors::Error) -> Self {
        Self::Sdk {
            call,
            error: Box::new(error),
        }
    }
}

/// What is missing or wrong in the GameServer status, for
/// [`public_address`](crate::public_address).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AddressError {
    /// The GameServer has no status, or its `address` is empty (the pod is
    /// not scheduled yet).
    #[error("status.address is empty")]
    NoAddress,
    /// `status.addresses` has no address of the type asked for; the types
    /// there are listed.
    #[error(
        "status.addresses has no address of type {wanted:?} (it has {available:?}); \
         set --address-type (or NETCODE_ADDRESS_TYPE) to one of those, or leave it \
         unset for status.address"
    )]
    NoAddressOfType {
        /// The type asked for.
        wanted: String,
        /// The types the status has.
        available: Vec<String>,
    },
    /// The host is a DNS name that does not resolve here: connect tokens
    /// list IP addresses only.
    #[error(
        "the public address {name:?} does not resolve ({why}); set --address-type \
         (or NETCODE_ADDRESS_TYPE) to an IP address type such as ExternalIP or InternalIP"
    )]
    Unresolved {
        /// The name.
        name: String,
        /// What the resolver said.
        why: String,
    },
    /// No port of that name in `status.ports`; the names there are listed.
    #[error("status.ports has no port named {name:?} (it has {available:?})")]
    NoPort {
        /// The name looked for.
        name: String,
        /// The names the status has.
        available: Vec<String>,
    },
    /// The port of that name is not a valid UDP port number.
    #[error("status.ports names {name:?} with invalid port {port}")]
    InvalidPort {
        /// Its name.
        name: String,
        /// Its value.
        port: i32,
    },
    /// The status could not be read (the last error from the SDK).
    #[error("GetGameServer failed: {0}")]
    Unreadable(String),
}

/// A key or label value Kubernetes would refuse (see
/// [`check_key`](crate::check_key)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?}: {reason}")]
pub struct MetadataError {
    /// The key (or value) refused.
    pub text: String,
    /// Why.
    pub reason: &'static str,
}

/// An SDK error in one line, with the gRPC status's code and message when
/// it is one (the SDK's own `Display` says only "rpc failure").
pub fn describe(error: &agones::errors::Error) -> String {
    match error {
        agones::errors::Error::Rpc(status) => {
            format!("{:?}: {}", status.code(), status.message())
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn messages_and_sources() {
        let address = StartError::Address(AddressError::NoPort {
            name: "netcode".into(),
            available: vec!["game".into()],
        });
        assert_eq!(
            address.to_string(),
            "no public address from the GameServer status: \
             status.ports has no port named \"netcode\" (it has [\"game\"])"
        );
        assert_eq!(
            address.source().map(ToString::to_string).as_deref(),
            Some("status.ports has no port named \"netcode\" (it has [\"game\"])")
        );
        let unreachable = StartError::SidecarUnreachable {
            port: 9357,
            waited: Duration::from_millis(2500),
        };
        assert_eq!(
            unreachable.to_string(),
            "the Agones SDK sidecar did not answer on localhost:9357 within 2.5 s \
             (AGONES_SDK_GRPC_PORT sets the port); not ready without it"
        );
        assert!(unreachable.source().is_none());
        let metadata = StartError::Metadata(MetadataError {
            text: "-x".into(),
            reason: "must start and end with a letter or digit",
        });
        assert_eq!(
            metadata.to_string(),
            "bad annotation key \"-x\": must start and end with a letter or digit"
        );
        let sdk = StartError::sdk(
            "Ready",
            agones::errors::Error::Rpc(tonic::Status::unavailable("no sidecar")),
        );
        assert_eq!(
            sdk.to_string(),
            "the Agones SDK call Ready failed: Unavailable: no sidecar"
        );
        assert!(sdk.source().is_some());
    }
}

//! What can stop a dedicated server from starting: the sidecar never
//! answering, a GameServer status without the address or port, a socket
//! that cannot be bound, an SDK call refused before Ready.

use std::fmt;
use std::time::Duration;

use netcode_std::{CreateError, ServerError};

use crate::address::AddressError;
use crate::announce::MetadataError;

/// Why [`DedicatedServer::start`](crate::DedicatedServer::start) (or one of
/// its steps) failed. None of these is retried further: a server that
/// cannot start should exit non-zero and let Agones replace it.
#[derive(Debug)]
#[non_exhaustive]
pub enum StartError {
    /// No Agones SDK server (the sidecar) answered on `port` within
    /// `waited`.
    SidecarUnreachable {
        /// The SDK's gRPC port on localhost.
        port: u16,
        /// How long the server tried.
        waited: Duration,
    },
    /// The GameServer status did not name the server's public address and
    /// port within the SDK timeout.
    Address(AddressError),
    /// The netcode server could not be made (the socket at the bind
    /// address, for example).
    Create(CreateError),
    /// The netcode server could not start (an invalid slot count).
    Start(ServerError),
    /// An SDK call needed before Ready failed (`call` names it).
    Sdk {
        /// The SDK method, as Agones names it (`SetLabel`, `Ready`, ...).
        call: &'static str,
        /// What the SDK reported.
        error: Box<agones::errors::Error>,
    },
    /// An annotation key Kubernetes would refuse.
    Metadata(MetadataError),
    /// The bind address and the public address are of different families
    /// and the bind address is not the unspecified one that could follow.
    FamilyMismatch {
        /// The address the socket was to bind.
        bind: std::net::SocketAddr,
        /// The public address from the GameServer status.
        public: std::net::SocketAddr,
    },
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SidecarUnreachable { port, waited } => write!(
                f,
                "the Agones SDK sidecar did not answer on localhost:{port} within {} s \
                 (AGONES_SDK_GRPC_PORT sets the port); not ready without it",
                waited.as_secs_f64()
            ),
            Self::Address(e) => write!(f, "no public address from the GameServer status: {e}"),
            Self::Create(e) => write!(f, "cannot create the netcode server: {e}"),
            Self::Start(e) => write!(f, "cannot start the netcode server: {e}"),
            Self::Sdk { call, error } => {
                write!(f, "the Agones SDK call {call} failed: {}", describe(error))
            }
            Self::Metadata(e) => write!(f, "bad annotation key {e}"),
            Self::FamilyMismatch { bind, public } => write!(
                f,
                "bind address {bind} and public address {public} are of different address families"
            ),
        }
    }
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

impl std::error::Error for StartError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Address(e) => Some(e),
            Self::Create(e) => Some(e),
            Self::Start(e) => Some(e),
            Self::Sdk { error, .. } => Some(&**error),
            Self::Metadata(e) => Some(e),
            Self::SidecarUnreachable { .. } | Self::FamilyMismatch { .. } => None,
        }
    }
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

/// The gRPC code of an SDK error, if it is a status from the sidecar.
pub(crate) fn code(error: &agones::errors::Error) -> Option<tonic::Code> {
    match error {
        agones::errors::Error::Rpc(status) => Some(status.code()),
        _ => None,
    }
}

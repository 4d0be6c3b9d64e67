//! What every host crate (netcode-std, netcode-mio, netcode-tokio,
//! netcode-renet) offers at its root besides its own server and client:
//! configuration, events and states, errors, tokens, keys, the OS services
//! the core takes as arguments, and the protocol's sizes. One list, written
//! once: each crate re-exports it with `pub use netcode_std::common::*`.
//!
//! STANDARD.md: none (the public surface of the host crates).

/// The protocol core, sans-IO.
pub use netcode_proto as proto;
pub use netcode_proto::ConnectionStats;
pub use netcode_proto::client::{ClientEvent, ClientState, LoopbackError};
pub use netcode_proto::constants;
pub use netcode_proto::constants::{CONNECT_TOKEN_BYTES, MAX_PAYLOAD_BYTES, USER_DATA_BYTES};
pub use netcode_proto::crypto::{Key, KeyError};
pub use netcode_proto::server::{DisconnectReason, ServerError, ServerEvent};
pub use netcode_proto::session::SendError;
pub use netcode_proto::token::{ConnectToken, TokenError};

pub use crate::address::{AddressParseError, ToAddress, parse_address};
pub use crate::client::ClientConfig;
pub use crate::clock::MAX_TIME_STEP;
pub use crate::error::{ConnectError, CreateError, Family};
pub use crate::packet::ReceivedPacket;
pub use crate::random::{RandomError, generate_key, random_client_id};
pub use crate::server::{BindMode, MAX_CLIENTS, ServerConfig};
pub use crate::stats::TransportStats;
pub use crate::time::{HostTime, unix_time};
pub use crate::token::{ConnectTokenBuilder, TokenBuildError};
pub use crate::transport::udp::PacketTagging;

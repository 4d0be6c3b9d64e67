//! UDP sockets as the C reference sets them up: creation and options
//! ([`create`]), a client's or server's set of sockets, one per address
//! family, and a server's relay of virtual peers ([`set`]), and the
//! blocking wait of the `std` transport ([`wait`]).

mod create;
mod set;
mod wait;

pub use create::{
    DEFAULT_SOCKET_BUFFER_BYTES, DSCP_EF_TOS, MIN_SOCKET_BUFFER_BYTES, PACKET_TAGGING_TOS,
    PacketTagging,
};
pub(crate) use create::{SocketOptions, keep_std, parse_addresses};
pub(crate) use set::{Path, Sockets};
pub(crate) use wait::wait;

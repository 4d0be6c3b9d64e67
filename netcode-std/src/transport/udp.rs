//! Creating one UDP socket as the C reference does, with the options a
//! client or server sets on its sockets (buffer sizes, packet tagging).
//!
//! Creation order follows the reference: socket, `IPV6_V6ONLY` for IPv6
//! (dual stack is two sockets), `SO_SNDBUF` then `SO_RCVBUF` (halving on
//! rejection, giving up below 256 KiB), bind, non-blocking, packet tagging.

use std::io;
use std::net::{SocketAddr, UdpSocket};

use socket2::{Domain, Protocol, Socket, Type};

use crate::address::ToAddress;
use crate::error::{CreateError, Family};

/// The reference's socket send and receive buffer size: 4 MiB each.
pub const DEFAULT_SOCKET_BUFFER_BYTES: usize = 4 * 1024 * 1024;

/// Buffer sizes are halved on rejection until they would drop below this
/// (256 KiB), as in the reference; then socket creation fails.
pub const MIN_SOCKET_BUFFER_BYTES: usize = 256 * 1024;

/// The type-of-service byte the reference writes when packet tagging is on:
/// 46, to `IP_TOS` (IPv4) or `IPV6_TCLASS` (IPv6).
///
/// As a TOS byte, 46 is DSCP 11 with ECN bits `10`: not Expedited
/// Forwarding, whatever the reference's comments say. It is kept as
/// [`PacketTagging::Reference`] for identical behaviour;
/// [`PacketTagging::ExpeditedForwarding`] writes [`DSCP_EF_TOS`].
pub const PACKET_TAGGING_TOS: u32 = 46;

/// The type-of-service byte of DSCP Expedited Forwarding (DSCP 46 in the
/// upper six bits, ECN bits zero): `46 << 2` = 184 = `0xB8`.
pub const DSCP_EF_TOS: u32 = 46 << 2;

/// Whether and how every datagram a client or server sends is marked for
/// low-latency treatment (`IP_TOS` / `IPV6_TCLASS`).
///
/// Routers that honour DSCP (enterprise and some ISP networks) queue
/// Expedited Forwarding ahead of bulk traffic; most home networks ignore
/// the byte. On Windows it is a no-op (the reference uses the QoS2 API
/// there and ignores its result).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PacketTagging {
    /// No marking (the default, as in the reference).
    #[default]
    Off,
    /// The reference's byte, [`PACKET_TAGGING_TOS`] (46), for behaviour
    /// identical to the C library's `enable_packet_tagging`.
    Reference,
    /// DSCP Expedited Forwarding proper, [`DSCP_EF_TOS`] (184).
    ExpeditedForwarding,
}

impl PacketTagging {
    /// The type-of-service byte this tagging writes, if any.
    pub fn tos(self) -> Option<u32> {
        match self {
            Self::Off => None,
            Self::Reference => Some(PACKET_TAGGING_TOS),
            Self::ExpeditedForwarding => Some(DSCP_EF_TOS),
        }
    }
}

/// How a client's or server's sockets are set up.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SocketOptions {
    pub(crate) buffer_bytes: usize,
    pub(crate) packet_tagging: PacketTagging,
}

/// Creates one socket as the reference does and binds it to `bind`.
pub(crate) fn create_socket(
    bind: SocketAddr,
    options: &SocketOptions,
) -> Result<UdpSocket, CreateError> {
    let family = Family::of(&bind);
    let create = |source: io::Error| CreateError::CreateSocket { family, source };
    let socket =
        Socket::new(Domain::for_address(bind), Type::DGRAM, Some(Protocol::UDP)).map_err(create)?;
    if family == Family::V6 {
        socket.set_only_v6(true).map_err(create)?;
    }
    set_buffer(options.buffer_bytes, |n| socket.set_send_buffer_size(n)).map_err(create)?;
    set_buffer(options.buffer_bytes, |n| socket.set_recv_buffer_size(n)).map_err(create)?;
    if let Err(source) = socket.bind(&bind.into()) {
        return Err(if source.kind() == io::ErrorKind::AddrInUse {
            CreateError::AddrInUse { address: bind }
        } else {
            CreateError::Bind {
                address: bind,
                source,
            }
        });
    }
    socket.set_nonblocking(true).map_err(create)?;
    if let Some(tos) = options.packet_tagging.tos() {
        tag(&socket, family, tos).map_err(create)?;
    }
    Ok(socket.into())
}

/// Asks for `bytes`, halving on rejection; fails once the size would drop
/// below [`MIN_SOCKET_BUFFER_BYTES`].
fn set_buffer(bytes: usize, mut set: impl FnMut(usize) -> io::Result<()>) -> io::Result<()> {
    let mut size = bytes;
    loop {
        match set(size) {
            Ok(()) => return Ok(()),
            Err(e) => {
                size /= 2;
                if size < MIN_SOCKET_BUFFER_BYTES {
                    return Err(e);
                }
            }
        }
    }
}

#[cfg(any(
    target_os = "android",
    target_os = "dragonfly",
    target_os = "freebsd",
    target_os = "linux",
    target_os = "macos",
    target_os = "netbsd",
    target_os = "openbsd",
    target_os = "illumos",
))]
fn tag(socket: &Socket, family: Family, tos: u32) -> io::Result<()> {
    match family {
        Family::V4 => socket.set_tos_v4(tos),
        Family::V6 => socket.set_tclass_v6(tos),
    }
}

/// Elsewhere (Windows, where the reference uses the QoS2 API and ignores its
/// result) tagging is a no-op.
#[cfg(not(any(
    target_os = "android",
    target_os = "dragonfly",
    target_os = "freebsd",
    target_os = "linux",
    target_os = "macos",
    target_os = "netbsd",
    target_os = "openbsd",
    target_os = "illumos",
)))]
fn tag(_socket: &Socket, _family: Family, _tos: u32) -> io::Result<()> {
    Ok(())
}

/// Parses a constructor's address and optional second address, each
/// failure with its own error.
pub(crate) fn parse_addresses<A: ToAddress, B: ToAddress>(
    address: A,
    address2: Option<B>,
) -> Result<(SocketAddr, Option<SocketAddr>), CreateError> {
    let first = address.to_address().map_err(CreateError::ParseAddress)?;
    let second = address2
        .map(|a| a.to_address().map_err(CreateError::ParseAddress2))
        .transpose()?;
    Ok((first, second))
}

/// The `adopt` function of the `std` constructors (see the
/// [module documentation](super)): the socket as it is.
pub(crate) fn keep_std(_family: Family, socket: UdpSocket) -> io::Result<UdpSocket> {
    Ok(socket)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(packet_tagging: PacketTagging) -> SocketOptions {
        SocketOptions {
            buffer_bytes: DEFAULT_SOCKET_BUFFER_BYTES,
            packet_tagging,
        }
    }

    #[test]
    fn buffer_sizes_halve_then_give_up_below_256_kib() {
        let mut asked = Vec::new();
        let result = set_buffer(DEFAULT_SOCKET_BUFFER_BYTES, |n| {
            asked.push(n);
            if n <= 1024 * 1024 {
                Ok(())
            } else {
                Err(io::Error::other("too big"))
            }
        });
        assert!(result.is_ok());
        assert_eq!(asked, [4 << 20, 2 << 20, 1 << 20]);

        asked.clear();
        let result = set_buffer(DEFAULT_SOCKET_BUFFER_BYTES, |n| {
            asked.push(n);
            Err(io::Error::other("never"))
        });
        assert!(result.is_err());
        assert_eq!(asked, [4 << 20, 2 << 20, 1 << 20, 512 << 10, 256 << 10]);
    }

    #[test]
    fn ipv6_sockets_are_v6_only_non_blocking_and_tagged() {
        let Ok(socket) = create_socket(
            "[::1]:0".parse().unwrap(),
            &options(PacketTagging::Reference),
        ) else {
            eprintln!("SKIPPED: no IPv6 loopback here");
            return;
        };
        let mut buffer = [0u8; 8];
        let would_block = socket.recv_from(&mut buffer).unwrap_err();
        assert_eq!(would_block.kind(), io::ErrorKind::WouldBlock);
        let socket = Socket::from(socket);
        assert!(socket.only_v6().unwrap());
        assert_eq!(socket.tclass_v6().unwrap(), PACKET_TAGGING_TOS);
    }

    #[test]
    fn tagging_writes_the_reference_byte_or_dscp_ef() {
        let cases = [
            (PacketTagging::Off, 0),
            (PacketTagging::Reference, 46),
            (PacketTagging::ExpeditedForwarding, 0xB8),
        ];
        for (tagging, byte) in cases {
            let socket = create_socket("127.0.0.1:0".parse().unwrap(), &options(tagging)).unwrap();
            assert_eq!(Socket::from(socket).tos_v4().unwrap(), byte, "{tagging:?}");
        }
    }
}

//! The netcode server of a pod: its socket bound at the container port
//! (`--bind`, `0.0.0.0:7000`), while it calls itself by the public address
//! Agones reports (the node's address and the host port mapped to the
//! container port), which is what connect tokens list.
//!
//! netcode-std's `Server::new` binds at the public address's own port, so
//! the server is made with `Server::with_sockets` on a socket bound here,
//! set up as netcode-std sets up its own (buffer sizes, non-blocking,
//! packet tagging).

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};

use netcode_std::{MIN_SOCKET_BUFFER_BYTES, Server, ServerConfig};
use socket2::{Domain, Protocol, Socket, Type};

use crate::error::StartError;

/// A stopped netcode server whose public address is `public` and whose
/// socket is bound at `bind`. An unspecified `bind` (`0.0.0.0:7000`)
/// follows the public address's family (`[::]:7000` for an IPv6 one); a
/// specific one must be of the same family.
pub fn bind_server(
    bind: SocketAddr,
    public: SocketAddr,
    config: ServerConfig,
) -> Result<Server, StartError> {
    let bind = bind_address(bind, public)?;
    let buffer_bytes = config.socket_buffer_bytes;
    let tos = config.packet_tagging.tos();
    Server::with_sockets(public, None::<SocketAddr>, config, |_, _| {
        bound_socket(bind, buffer_bytes, tos)
    })
    .map_err(StartError::Create)
}

/// The address to bind for `public`: `bind`, or the unspecified address of
/// `public`'s family at `bind`'s port.
fn bind_address(bind: SocketAddr, public: SocketAddr) -> Result<SocketAddr, StartError> {
    if bind.is_ipv4() == public.is_ipv4() {
        return Ok(bind);
    }
    if !bind.ip().is_unspecified() {
        return Err(StartError::FamilyMismatch { bind, public });
    }
    let ip = match public.ip() {
        IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
    };
    Ok(SocketAddr::new(ip, bind.port()))
}

/// A non-blocking UDP socket bound at `bind`, with send and receive
/// buffers of `buffer_bytes` (halved on rejection down to netcode-std's
/// minimum; what the kernel then grants is its business) and the
/// type-of-service byte `tos` when given.
fn bound_socket(bind: SocketAddr, buffer_bytes: usize, tos: Option<u32>) -> io::Result<UdpSocket> {
    let socket = Socket::new(Domain::for_address(bind), Type::DGRAM, Some(Protocol::UDP))?;
    if bind.is_ipv6() {
        socket.set_only_v6(true)?;
    }
    set_buffers(&socket, buffer_bytes);
    socket.bind(&bind.into())?;
    socket.set_nonblocking(true)?;
    if let Some(tos) = tos
        && let Err(e) = tag(&socket, bind, tos)
    {
        log::warn!(target: crate::TARGET, "packet tagging refused on {bind}: {e}");
    }
    Ok(socket.into())
}

/// Marks every datagram with the type-of-service byte `tos`.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "macos"))]
fn tag(socket: &Socket, bind: SocketAddr, tos: u32) -> io::Result<()> {
    if bind.is_ipv4() {
        socket.set_tos_v4(tos)
    } else {
        socket.set_tclass_v6(tos)
    }
}

/// Packet tagging is a no-op elsewhere, as in netcode-std.
#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "macos")))]
fn tag(_: &Socket, _: SocketAddr, _: u32) -> io::Result<()> {
    Ok(())
}

/// Asks for `bytes` of send and receive buffer, halving on rejection.
fn set_buffers(socket: &Socket, bytes: usize) {
    let mut size = bytes;
    while size >= MIN_SOCKET_BUFFER_BYTES {
        if socket.set_send_buffer_size(size).is_ok() && socket.set_recv_buffer_size(size).is_ok() {
            return;
        }
        size /= 2;
    }
    log::warn!(
        target: crate::TARGET,
        "socket buffers of {bytes} bytes refused; the system's defaults stay"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unspecified_bind_follows_the_public_family() {
        let any4: SocketAddr = "0.0.0.0:7000".parse().unwrap();
        let public4: SocketAddr = "203.0.113.7:7342".parse().unwrap();
        let public6: SocketAddr = "[2001:db8::7]:7342".parse().unwrap();
        assert_eq!(bind_address(any4, public4).unwrap(), any4);
        assert_eq!(
            bind_address(any4, public6).unwrap(),
            "[::]:7000".parse::<SocketAddr>().unwrap()
        );
        let exact4: SocketAddr = "10.0.0.5:7000".parse().unwrap();
        assert!(matches!(
            bind_address(exact4, public6),
            Err(StartError::FamilyMismatch { .. })
        ));
    }

    #[test]
    fn the_server_binds_one_address_and_calls_itself_by_another() {
        let config = ServerConfig::new(7, netcode_std::proto::Key::from_bytes([1; 32]));
        let public: SocketAddr = "198.51.100.9:7999".parse().unwrap();
        let server = bind_server("127.0.0.1:0".parse().unwrap(), public, config).unwrap();
        assert_eq!(server.public_address(), public);
        let socket = server.socket(netcode_std::Family::V4).unwrap();
        let local = socket.local_addr().unwrap();
        assert_eq!(local.ip(), IpAddr::V4(Ipv4Addr::LOCALHOST));
        assert_ne!(local.port(), 0);
    }
}

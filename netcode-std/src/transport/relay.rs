//! Virtual peers: clients that do not reach the server over its UDP
//! sockets (WebTransport sessions in a browser, a relay of some other
//! kind), each named by an address of its own in a prefix no real UDP
//! sender can have (STANDARD.md: none; the protocol only sees addresses).
//!
//! A transport of such peers implements [`Socket`](super::Socket) (its
//! `recv_from` hands over a datagram with the peer's virtual address,
//! `send_to` delivers one to the peer of that address) and is attached to
//! a server with [`Server::attach_relay`](crate::Server::attach_relay).
//! The server reads it with its UDP sockets in every update, and sends
//! every datagram addressed into [`VIRTUAL_PEERS`] through it: one server,
//! one key, one set of slots for both kinds of clients.
//!
//! The prefix is `100::/64`, the IPv6 discard-only prefix (RFC 6666):
//! routers drop traffic to and from it, so no datagram on a real socket
//! carries such a sender.

use std::net::{Ipv6Addr, SocketAddr};

/// The first address of the virtual peers' prefix, `100::/64`.
pub const VIRTUAL_PEERS: Ipv6Addr = Ipv6Addr::new(0x0100, 0, 0, 0, 0, 0, 0, 0);

/// The virtual address of the peer numbered `id` (a relay's own numbering,
/// such as a session counter): `100::` with `id` in the low 64 bits.
pub fn virtual_address(id: u64) -> SocketAddr {
    let [a, b, c, d] = [
        (id >> 48) as u16,
        (id >> 32) as u16,
        (id >> 16) as u16,
        id as u16,
    ];
    SocketAddr::from((Ipv6Addr::new(0x0100, 0, 0, 0, a, b, c, d), 0))
}

/// Whether `address` is a virtual peer's (in `100::/64`).
pub fn is_virtual(address: &SocketAddr) -> bool {
    match address {
        SocketAddr::V6(v6) => v6.ip().segments()[..4] == VIRTUAL_PEERS.segments()[..4],
        SocketAddr::V4(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn virtual_addresses_are_their_own_and_nobody_elses() {
        let a = virtual_address(7);
        assert!(is_virtual(&a));
        assert_eq!(a, "[100::7]:0".parse().unwrap());
        assert_ne!(virtual_address(u64::MAX), virtual_address(u64::MAX - 1));
        for real in [
            "127.0.0.1:40000",
            "[::1]:40000",
            "[100:0:0:1::7]:0",
            "[::ffff:1.0.0.0]:1",
        ] {
            assert!(!is_virtual(&real.parse().unwrap()), "{real}");
        }
    }
}

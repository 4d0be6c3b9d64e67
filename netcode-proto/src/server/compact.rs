//! Compact field types for the server's tables, which are sized per slot:
//! every byte saved here is saved thousands of times.
//!
//! STANDARD.md: none (the storage form of *Processing Connection Requests*'s
//! tables).
//!
//! * [`Endpoint`]: an address as netcode compares it (family, IP, port;
//!   no IPv6 flow info or scope id) in 19 bytes instead of an
//!   `Option<SocketAddr>`'s 32.
//! * [`Link`]: an optional table index in 4 bytes instead of 8.
//! * [`Nanos`]: a monotonic time in 8 bytes instead of a `Duration`'s 16.

use crate::time::Instant;
use core::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

const NO_FAMILY: u8 = 0;
const V4: u8 = 4;
const V6: u8 = 6;

/// An endpoint (or none), compared exactly as
/// [`same_endpoint`](crate::address::same_endpoint) compares addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Endpoint {
    ip: [u8; 16],
    port: [u8; 2],
    family: u8,
}

impl Endpoint {
    /// No endpoint: a free entry.
    pub(crate) const NONE: Self = Self {
        ip: [0; 16],
        port: [0; 2],
        family: NO_FAMILY,
    };

    pub(crate) fn new(address: &SocketAddr) -> Self {
        let mut ip = [0u8; 16];
        let family = match address {
            SocketAddr::V4(v4) => {
                ip[..4].copy_from_slice(&v4.ip().octets());
                V4
            }
            SocketAddr::V6(v6) => {
                ip = v6.ip().octets();
                V6
            }
        };
        Self {
            ip,
            port: address.port().to_le_bytes(),
            family,
        }
    }

    /// Whether this is `address`'s endpoint.
    pub(crate) fn matches(&self, address: &SocketAddr) -> bool {
        *self == Self::new(address)
    }

    /// The address (flow info and scope id zero), unless none.
    pub(crate) fn get(&self) -> Option<SocketAddr> {
        let port = u16::from_le_bytes(self.port);
        match self.family {
            V4 => {
                let mut octets = [0u8; 4];
                octets.copy_from_slice(&self.ip[..4]);
                Some(SocketAddr::V4(SocketAddrV4::new(
                    Ipv4Addr::from(octets),
                    port,
                )))
            }
            V6 => Some(SocketAddr::V6(SocketAddrV6::new(
                Ipv6Addr::from(self.ip),
                port,
                0,
                0,
            ))),
            _ => None,
        }
    }
}

/// An optional index into a table (`u32::MAX` is none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Link(u32);

impl Link {
    pub(crate) const NONE: Self = Self(u32::MAX);

    /// `index`, which the tables keep below `u32::MAX` (`Server::new`
    /// refuses storage that large).
    pub(crate) const fn to(index: u32) -> Self {
        Self(index)
    }

    pub(crate) fn get(self) -> Option<u32> {
        (self.0 != u32::MAX).then_some(self.0)
    }
}

/// A monotonic time in nanoseconds, saturating at `u64::MAX` (584 years).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Nanos(u64);

impl Nanos {
    pub(crate) const ZERO: Self = Self(0);
    /// The end of time, standing for "never".
    pub(crate) const NEVER: Self = Self(u64::MAX);

    pub(crate) fn new(time: Instant) -> Self {
        Self(u64::try_from(time.since_epoch().as_nanos()).unwrap_or(u64::MAX))
    }

    /// The instant this is.
    pub(crate) fn instant(self) -> Instant {
        Instant::from_duration(core::time::Duration::from_nanos(self.0))
    }

    /// How long after `earlier` this is (zero if it is not later).
    pub(crate) fn since(self, earlier: Self) -> core::time::Duration {
        core::time::Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }

    /// `self + seconds`, saturating.
    pub(crate) fn after_seconds(self, seconds: u64) -> Self {
        Self(self.0.saturating_add(seconds.saturating_mul(1_000_000_000)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address::same_endpoint;

    #[test]
    fn endpoints_compare_as_same_endpoint_does() {
        let addresses: [SocketAddr; 6] = [
            "127.0.0.1:40000".parse().unwrap(),
            "127.0.0.1:40001".parse().unwrap(),
            "10.0.0.1:40000".parse().unwrap(),
            "[::1]:40000".parse().unwrap(),
            "[::ffff:127.0.0.1]:40000".parse().unwrap(),
            SocketAddr::V6(SocketAddrV6::new(Ipv6Addr::LOCALHOST, 40000, 7, 9)),
        ];
        for a in &addresses {
            assert_eq!(
                Endpoint::new(a).get().map(|b| same_endpoint(a, &b)),
                Some(true)
            );
            for b in &addresses {
                assert_eq!(Endpoint::new(a).matches(b), same_endpoint(a, b), "{a} {b}");
            }
            assert!(!Endpoint::NONE.matches(a));
        }
        assert_eq!(Endpoint::NONE.get(), None);
        assert_eq!(core::mem::size_of::<Endpoint>(), 19);
    }

    #[test]
    fn links_and_times() {
        assert_eq!(Link::NONE.get(), None);
        assert_eq!(Link::to(7).get(), Some(7));
        assert_eq!(Nanos::new(Instant::MAX), Nanos::NEVER);
        assert_eq!(
            Nanos::new(Instant::from_secs(2)),
            Nanos::ZERO.after_seconds(2)
        );
        assert_eq!(Nanos::NEVER.after_seconds(1), Nanos::NEVER);
    }
}

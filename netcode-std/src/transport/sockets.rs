//! A client's or server's sockets: at most one per address family, and a
//! server's relay of virtual peers, each with the address it is bound to
//! and whether datagrams were left waiting on it; and the path a datagram
//! to a given address takes.

use std::io;
use std::net::{SocketAddr, UdpSocket};

use super::Socket;
use super::relay::{VIRTUAL_PEERS, is_virtual};
use super::udp::{SocketOptions, create_socket};
use crate::error::{CreateError, Family};

/// Which of a host's sockets a datagram goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Path {
    /// The UDP socket of a family.
    Udp(Family),
    /// The relay of virtual peers (see `relay.rs`).
    Relay,
}

impl Path {
    /// The path to `address`: the relay for a virtual peer, the socket of
    /// its family otherwise.
    pub(crate) fn to(address: &SocketAddr) -> Self {
        if is_virtual(address) {
            Self::Relay
        } else {
            Self::Udp(Family::of(address))
        }
    }

    /// The address family of the addresses on this path (virtual peers'
    /// are IPv6).
    pub(crate) fn family(self) -> Family {
        match self {
            Self::Udp(family) => family,
            Self::Relay => Family::V6,
        }
    }
}

impl From<Family> for Path {
    fn from(family: Family) -> Self {
        Self::Udp(family)
    }
}

/// A relay of virtual peers, as a host holds it.
type Relay = Box<dyn Socket + Send + Sync>;

/// A bound socket, the address it is bound to, whether its last drain
/// stopped at the per-call limit with datagrams still waiting, and whether
/// an event loop's drain just found it empty.
#[derive(Debug)]
struct Bound<S> {
    socket: S,
    local: SocketAddr,
    backlog: bool,
    emptied: bool,
}

/// At most one socket per family, and the relay of virtual peers if one
/// is attached.
#[derive(Debug)]
pub(crate) struct Sockets<S> {
    v4: Option<Bound<S>>,
    v6: Option<Bound<S>>,
    relay: Option<Bound<Relay>>,
    /// The family of the first address, whose socket `port` reports.
    primary: Family,
}

impl<S> Sockets<S> {
    /// Binds one socket to `first` and, for dual stack, one to `second`,
    /// which must be of the other family, and hands each to `adopt` (see
    /// [`transport`](crate::transport)).
    pub(crate) fn bind(
        first: SocketAddr,
        second: Option<SocketAddr>,
        options: &SocketOptions,
        mut adopt: impl FnMut(Family, UdpSocket) -> io::Result<S>,
    ) -> Result<Self, CreateError> {
        Self::build(first, second, |family, address| {
            let socket = create_socket(address, options)?;
            let local = socket
                .local_addr()
                .map_err(|source| CreateError::CreateSocket { family, source })?;
            let socket =
                adopt(family, socket).map_err(|source| CreateError::Register { family, source })?;
            Ok((socket, local))
        })
    }

    /// Takes one socket for `first` and, for dual stack, one for `second`
    /// (of the other family) from `make`, binding nothing: each socket's
    /// local address is the address it was made for. An error from `make`
    /// is [`CreateError::CreateSocket`].
    pub(crate) fn adopt(
        first: SocketAddr,
        second: Option<SocketAddr>,
        mut make: impl FnMut(Family, SocketAddr) -> io::Result<S>,
    ) -> Result<Self, CreateError> {
        Self::build(first, second, |family, address| {
            let socket = make(family, address)
                .map_err(|source| CreateError::CreateSocket { family, source })?;
            Ok((socket, address))
        })
    }

    /// The sockets `make` returns for `first` and, for dual stack,
    /// `second`, which must be of the other family, each with its local
    /// address.
    fn build(
        first: SocketAddr,
        second: Option<SocketAddr>,
        mut make: impl FnMut(Family, SocketAddr) -> Result<(S, SocketAddr), CreateError>,
    ) -> Result<Self, CreateError> {
        if let Some(second) = second
            && Family::of(&second) == Family::of(&first)
        {
            return Err(CreateError::SameFamily(Family::of(&first)));
        }
        let mut sockets = Self {
            v4: None,
            v6: None,
            relay: None,
            primary: Family::of(&first),
        };
        for address in std::iter::once(first).chain(second) {
            let family = Family::of(&address);
            let (socket, local) = make(family, address)?;
            let bound = Some(Bound {
                socket,
                local,
                backlog: false,
                emptied: false,
            });
            match family {
                Family::V4 => sockets.v4 = bound,
                Family::V6 => sockets.v6 = bound,
            }
        }
        Ok(sockets)
    }

    fn bound(&self, family: Family) -> Option<&Bound<S>> {
        match family {
            Family::V4 => self.v4.as_ref(),
            Family::V6 => self.v6.as_ref(),
        }
    }

    /// The marks of the socket on `path`, mutably.
    fn marks_mut(&mut self, path: Path) -> Option<(&mut bool, &mut bool)> {
        match path {
            Path::Udp(Family::V4) => self.v4.as_mut().map(|b| (&mut b.backlog, &mut b.emptied)),
            Path::Udp(Family::V6) => self.v6.as_mut().map(|b| (&mut b.backlog, &mut b.emptied)),
            Path::Relay => self
                .relay
                .as_mut()
                .map(|b| (&mut b.backlog, &mut b.emptied)),
        }
    }

    /// The socket of `family`, if there is one.
    pub(crate) fn get(&self, family: Family) -> Option<&S> {
        self.bound(family).map(|b| &b.socket)
    }

    /// The families there are sockets for.
    pub(crate) fn families(&self) -> impl Iterator<Item = Family> + '_ {
        [Family::V4, Family::V6]
            .into_iter()
            .filter(|f| self.bound(*f).is_some())
    }

    /// Attaches (or replaces) the relay of virtual peers.
    pub(crate) fn attach_relay(&mut self, relay: Relay) {
        self.relay = Some(Bound {
            socket: relay,
            local: SocketAddr::from((VIRTUAL_PEERS, 0)),
            backlog: false,
            emptied: false,
        });
    }

    /// Records whether the last drain of the socket on `path` stopped at
    /// the per-call limit, so that datagrams may still be waiting.
    pub(crate) fn set_backlog(&mut self, path: Path, backlog: bool) {
        if let Some((mark, _)) = self.marks_mut(path) {
            *mark = backlog;
        }
    }

    /// Records that an event loop's drain of the socket on `path` read it
    /// empty, so the update that follows in the same turn need not read it
    /// again (see [`take_emptied`](Self::take_emptied)).
    pub(crate) fn set_emptied(&mut self, path: Path) {
        if let Some((_, mark)) = self.marks_mut(path) {
            *mark = true;
        }
    }

    /// Whether the socket on `path` was read empty by an event loop's drain
    /// since the last update, clearing the mark: the update skips that one
    /// read, and reads it again the time after.
    pub(crate) fn take_emptied(&mut self, path: Path) -> bool {
        self.marks_mut(path)
            .is_some_and(|(_, mark)| std::mem::take(mark))
    }

    /// Whether a socket was left with datagrams waiting (see
    /// [`set_backlog`](Self::set_backlog)): then there is work to do now.
    pub(crate) fn backlog(&self) -> bool {
        self.v4.iter().chain(self.v6.iter()).any(|b| b.backlog)
            || self.relay.as_ref().is_some_and(|b| b.backlog)
    }

    /// The bound address of the socket of `family`.
    pub(crate) fn local_addr(&self, family: Family) -> Option<SocketAddr> {
        self.bound(family).map(|b| b.local)
    }

    /// The bound address of the first address's socket.
    pub(crate) fn primary_local_addr(&self) -> SocketAddr {
        match self.bound(self.primary) {
            Some(b) => b.local,
            // `bind` always creates the primary socket.
            None => SocketAddr::from(([0, 0, 0, 0], 0)),
        }
    }

    /// The socket on `path`, if there is one.
    pub(crate) fn on(&self, path: Path) -> Option<&dyn Socket>
    where
        S: Socket,
    {
        match path {
            Path::Udp(family) => self.get(family).map(|s| s as &dyn Socket),
            Path::Relay => self.relay.as_ref().map(|b| &*b.socket as &dyn Socket),
        }
    }

    /// Every UDP socket, IPv4 first.
    pub(crate) fn all(&self) -> impl Iterator<Item = &S> {
        self.v4.iter().chain(self.v6.iter()).map(|b| &b.socket)
    }

    /// Every UDP socket, mutably, IPv4 first.
    pub(crate) fn all_mut(&mut self) -> impl Iterator<Item = &mut S> {
        self.v4
            .iter_mut()
            .chain(self.v6.iter_mut())
            .map(|b| &mut b.socket)
    }
}

//! What the UDP run compares: the servers (one row of the tables each),
//! the clients, and the pairings of the two that a run measures.

/// Bytes in every payload.
pub const PAYLOAD_BYTES: usize = 100;

/// A server implementation: one row of the tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerKind {
    /// netcode-mio's server, each turn in one `batch()` scope.
    Batched,
    /// netcode-std's server on a socket that sends and receives one
    /// datagram per system call.
    PerCall,
    /// netcode-official 1.0.
    Official,
    /// renetcode 2.0 on the bench's mio socket loop.
    Renet,
    /// A bare echo server on the batched socket calls, no netcode.
    Floor,
    /// netcode-tokio's server on its own driver, each turn in one
    /// `batch()` scope.
    Tokio,
    /// netcode-std's server on its default sockets, in a blocking `wait`
    /// loop, each turn in one `batch()` scope.
    Std,
}

impl ServerKind {
    /// Its name in pairing ids and tables.
    pub fn name(self) -> &'static str {
        match self {
            Self::Batched => "ours-batched",
            Self::PerCall => "ours-per-call",
            Self::Official => "netcode-official",
            Self::Renet => "renetcode",
            Self::Floor => "floor",
            Self::Tokio => "ours-tokio",
            Self::Std => "ours-std",
        }
    }

    /// The most clients its server takes, where it has a limit below ours.
    pub fn max_clients(self) -> Option<usize> {
        match self {
            // Its `start` refuses more.
            Self::Official => Some(netcode::MAX_CLIENTS),
            // renetcode 2.0's limit is private; its server panics above it.
            Self::Renet => Some(1024),
            Self::Batched | Self::PerCall | Self::Tokio | Self::Std => {
                Some(netcode_mio::MAX_CLIENTS)
            }
            Self::Floor => None,
        }
    }

    /// Whether the server counts its own datagrams and socket calls
    /// (ours: `transport_stats`; the floor: its own counters).
    pub fn counts_datagrams(self) -> bool {
        matches!(
            self,
            Self::Batched | Self::PerCall | Self::Tokio | Self::Std | Self::Floor
        )
    }

    /// Whether it is one of our servers.
    pub fn ours(self) -> bool {
        matches!(
            self,
            Self::Batched | Self::PerCall | Self::Tokio | Self::Std
        )
    }
}

/// A client implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientKind {
    /// netcode-mio clients, each turn's window sent in one `batch()`.
    Mio,
    /// netcode-official 1.0 clients.
    Official,
    /// renetcode 2.0 clients on the bench's mio socket loop.
    Renet,
    /// Bare UDP sockets sending datagrams of a payload packet's size.
    Bare,
}

impl ClientKind {
    /// Its name in pairing ids and tables.
    pub fn name(self) -> &'static str {
        match self {
            Self::Mio => "netcode-mio",
            Self::Official => "netcode-official",
            Self::Renet => "renetcode",
            Self::Bare => "bare",
        }
    }
}

/// A server and its clients.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pairing {
    /// The server's implementation.
    pub server: ServerKind,
    /// The clients' implementation.
    pub clients: ClientKind,
}

/// Every pairing the bench runs: ours both ways, each peer with its own
/// clients and with ours, the floor with bare clients.
pub const PAIRINGS: [Pairing; 9] = [
    Pairing::new(ServerKind::Batched, ClientKind::Mio),
    Pairing::new(ServerKind::PerCall, ClientKind::Mio),
    Pairing::new(ServerKind::Std, ClientKind::Mio),
    Pairing::new(ServerKind::Tokio, ClientKind::Mio),
    Pairing::new(ServerKind::Official, ClientKind::Official),
    Pairing::new(ServerKind::Renet, ClientKind::Renet),
    Pairing::new(ServerKind::Official, ClientKind::Mio),
    Pairing::new(ServerKind::Renet, ClientKind::Mio),
    Pairing::new(ServerKind::Floor, ClientKind::Bare),
];

impl Pairing {
    /// A server and clients.
    pub const fn new(server: ServerKind, clients: ClientKind) -> Self {
        Self { server, clients }
    }

    /// The name a filter matches: `udp_echo/<server> server, <clients> clients`.
    pub fn id(&self) -> String {
        format!(
            "udp_echo/{} server, {} clients",
            self.server.name(),
            self.clients.name()
        )
    }

    /// Why this pairing cannot run with `clients` clients, if it cannot.
    pub fn refusal(&self, clients: usize) -> Option<String> {
        let cap = self.server.max_clients()?;
        (clients > cap).then(|| format!("{} caps a server at {cap} clients", self.server.name()))
    }
}

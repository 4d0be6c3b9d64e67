//! The seven packet types and sets of them (STANDARD.md: *Packets*, the
//! prefix byte; *Reading Encrypted Packets*, the types each side ignores).

/// The type of a packet, the low four bits of its prefix byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum PacketType {
    /// Connection request (unencrypted).
    Request = 0,
    /// Connection denied.
    Denied = 1,
    /// Connection challenge.
    Challenge = 2,
    /// Connection response.
    Response = 3,
    /// Connection keep-alive.
    KeepAlive = 4,
    /// Connection payload.
    Payload = 5,
    /// Connection disconnect.
    Disconnect = 6,
}

impl PacketType {
    /// How many packet types there are.
    pub const COUNT: usize = 7;

    /// Every type, in numeric order.
    pub const ALL: [Self; Self::COUNT] = [
        Self::Request,
        Self::Denied,
        Self::Challenge,
        Self::Response,
        Self::KeepAlive,
        Self::Payload,
        Self::Disconnect,
    ];

    /// The type for a numeric value, if it is one.
    pub fn from_u8(value: u8) -> Option<Self> {
        Self::ALL.get(usize::from(value)).copied()
    }

    /// Whether replay protection applies: keep-alive, payload and disconnect.
    pub fn replay_protected(self) -> bool {
        self >= Self::KeepAlive
    }

    /// A short lowercase name, for logs and stats.
    pub fn name(self) -> &'static str {
        match self {
            Self::Request => "request",
            Self::Denied => "denied",
            Self::Challenge => "challenge",
            Self::Response => "response",
            Self::KeepAlive => "keep-alive",
            Self::Payload => "payload",
            Self::Disconnect => "disconnect",
        }
    }
}

impl core::fmt::Display for PacketType {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of packet types: which packets one side accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PacketTypes(u8);

impl PacketTypes {
    /// No type.
    pub const NONE: Self = Self(0);
    /// Every type.
    pub const ALL: Self = Self(0x7f);
    /// What a client accepts: denied, challenge, keep-alive, payload, disconnect.
    pub const CLIENT: Self = Self::NONE
        .with(PacketType::Denied)
        .with(PacketType::Challenge)
        .with(PacketType::KeepAlive)
        .with(PacketType::Payload)
        .with(PacketType::Disconnect);
    /// What a server accepts: request, response, keep-alive, payload,
    /// disconnect (never challenge, and never denied, as in the reference).
    pub const SERVER: Self = Self::NONE
        .with(PacketType::Request)
        .with(PacketType::Response)
        .with(PacketType::KeepAlive)
        .with(PacketType::Payload)
        .with(PacketType::Disconnect);

    /// This set plus `packet_type`.
    pub const fn with(self, packet_type: PacketType) -> Self {
        Self(self.0 | 1 << packet_type as u8)
    }

    /// Whether `packet_type` is in the set.
    pub const fn contains(self, packet_type: PacketType) -> bool {
        self.0 & (1 << packet_type as u8) != 0
    }
}

//! The client's states and their numeric codes (STANDARD.md: *Client State
//! Machine*).

/// Where a client is in its connection, with the numeric codes of the
/// standard (negative codes are error states).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(i8)]
pub enum ClientState {
    /// The connect token expired before a connection was made (-6).
    ConnectTokenExpired = -6,
    /// The connect token could not be read (-5).
    InvalidConnectToken = -5,
    /// The server went silent while connected (-4).
    ConnectionTimedOut = -4,
    /// No keep-alive answered the challenge responses (-3).
    ConnectionResponseTimedOut = -3,
    /// No challenge or denial answered the connection requests (-2).
    ConnectionRequestTimedOut = -2,
    /// The server was full (-1).
    ConnectionDenied = -1,
    /// Not connected, and not trying to (0).
    Disconnected = 0,
    /// Sending connection requests (1).
    SendingConnectionRequest = 1,
    /// Sending challenge responses (2).
    SendingConnectionResponse = 2,
    /// Connected (3).
    Connected = 3,
}

impl ClientState {
    /// The numeric code of the standard.
    pub fn code(self) -> i8 {
        self as i8
    }

    /// The state with numeric code `code`, if there is one.
    pub fn from_code(code: i8) -> Option<Self> {
        Some(match code {
            -6 => Self::ConnectTokenExpired,
            -5 => Self::InvalidConnectToken,
            -4 => Self::ConnectionTimedOut,
            -3 => Self::ConnectionResponseTimedOut,
            -2 => Self::ConnectionRequestTimedOut,
            -1 => Self::ConnectionDenied,
            0 => Self::Disconnected,
            1 => Self::SendingConnectionRequest,
            2 => Self::SendingConnectionResponse,
            3 => Self::Connected,
            _ => return None,
        })
    }

    /// Whether this is an error state (negative code).
    pub fn is_error(self) -> bool {
        self.code() < 0
    }

    /// Whether the client is connecting or connected (codes 1 to 3).
    pub fn is_active(self) -> bool {
        self.code() > 0
    }

    /// A short lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Self::ConnectTokenExpired => "connect token expired",
            Self::InvalidConnectToken => "invalid connect token",
            Self::ConnectionTimedOut => "connection timed out",
            Self::ConnectionResponseTimedOut => "connection response timed out",
            Self::ConnectionRequestTimedOut => "connection request timed out",
            Self::ConnectionDenied => "connection denied",
            Self::Disconnected => "disconnected",
            Self::SendingConnectionRequest => "sending connection request",
            Self::SendingConnectionResponse => "sending connection response",
            Self::Connected => "connected",
        }
    }
}

impl core::fmt::Display for ClientState {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for code in -6..=3 {
            assert_eq!(ClientState::from_code(code).unwrap().code(), code);
        }
        assert_eq!(ClientState::from_code(4), None);
        assert_eq!(ClientState::from_code(-7), None);
    }
}

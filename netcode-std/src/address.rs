//! Address strings, read by the C reference's rules.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

/// The reference copies address strings into a 256-byte buffer, so only the
/// first 255 bytes are read.
const MAX_ADDRESS_STRING_BYTES: usize = 255;

/// A port is at most 5 digits, so `:65535` is the longest suffix searched.
const PORT_SEARCH_WINDOW: usize = 6;

/// Why an address string was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum AddressParseError {
    /// The text after the port colon is empty, not all digits, or above 65535.
    #[error("invalid port: expected 0 to 65535, digits only")]
    InvalidPort,
    /// The text is neither an IPv6 address nor a dotted-quad IPv4 address.
    #[error("invalid address: expected a.b.c.d[:port], an IPv6 address, or [ipv6]:port")]
    InvalidAddress,
}

/// Parses an address string as the C reference's `netcode_parse_address`
/// does: it accepts exactly these forms, and rejects the same inputs.
///
/// | input | result |
/// | --- | --- |
/// | `127.0.0.1` | IPv4, port 0 |
/// | `127.0.0.1:40000` | IPv4, port 40000 |
/// | `::1`, `fe80::202:b3ff:fe1e:8329`, `::` | IPv6, port 0 |
/// | `[::1]` | IPv6, port 0 |
/// | `[::1]:40000` | IPv6, port 40000 |
///
/// Ports are all digits (leading zeros allowed) up to 65535; an empty port
/// after a colon is an error. There is no host name resolution and no
/// `%zone` suffix. Two quirks of the reference are kept on purpose so that
/// the same configuration strings mean the same thing to both: an
/// unbracketed `::1:4000` is the IPv6 address `::1:4000` with port 0, and
/// `[1.2.3.4]:5` is the IPv4 address `1.2.3.4` with port 5.
///
/// ```
/// use netcode_std::parse_address;
///
/// assert_eq!(parse_address("127.0.0.1:40000").unwrap().port(), 40000);
/// assert!(parse_address("[::1]:40000").unwrap().is_ipv6());
/// assert_eq!(parse_address("::1").unwrap().port(), 0);
/// assert!(parse_address("127.0.0.1:40k").is_err());
/// ```
pub fn parse_address(input: &str) -> Result<SocketAddr, AddressParseError> {
    let bytes = input.as_bytes();
    // A C string ends at its first NUL, and the copy keeps 255 bytes.
    let end = bytes
        .iter()
        .position(|&b| b == 0)
        .unwrap_or(bytes.len())
        .min(MAX_ADDRESS_STRING_BYTES);
    let mut text = &bytes[..end];
    let mut port = 0u16;

    if text.first() == Some(&b'[') {
        let last = text.len() - 1;
        let mut cut = None;
        for back in 0..PORT_SEARCH_WINDOW {
            let Some(index) = last.checked_sub(back) else {
                break;
            };
            if index < 3 {
                break;
            }
            if text[index] == b':' && text[index - 1] == b']' {
                port = parse_port(&text[index + 1..])?;
                cut = Some(index - 1);
                break;
            }
        }
        text = match cut {
            Some(cut) => &text[..cut],
            None if text[last] == b']' => &text[..last],
            None => text,
        };
        text = &text[1..];
    }

    // An IPv6 address has at least two colons: with fewer, only the IPv4
    // reading below can succeed, and the IPv6 one is not tried.
    if text.iter().filter(|&&b| b == b':').nth(1).is_some()
        && let Some(ip) = as_str(text).and_then(|s| s.parse::<Ipv6Addr>().ok())
    {
        return Ok(SocketAddr::V6(SocketAddrV6::new(ip, port, 0, 0)));
    }

    if let Some(last) = text.len().checked_sub(1) {
        for back in 0..PORT_SEARCH_WINDOW {
            let Some(index) = last.checked_sub(back) else {
                break;
            };
            if text[index] == b':' {
                port = parse_port(&text[index + 1..])?;
                text = &text[..index];
                break;
            }
        }
    }

    as_str(text)
        .and_then(|s| s.parse::<Ipv4Addr>().ok())
        .map(|ip| SocketAddr::V4(SocketAddrV4::new(ip, port)))
        .ok_or(AddressParseError::InvalidAddress)
}

fn as_str(bytes: &[u8]) -> Option<&str> {
    std::str::from_utf8(bytes).ok()
}

/// All digits, non-empty, at most 65535 (leading zeros allowed).
fn parse_port(digits: &[u8]) -> Result<u16, AddressParseError> {
    if digits.is_empty() {
        return Err(AddressParseError::InvalidPort);
    }
    let mut value: u32 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return Err(AddressParseError::InvalidPort);
        }
        value = value * 10 + u32::from(d - b'0');
        if value > u32::from(u16::MAX) {
            return Err(AddressParseError::InvalidPort);
        }
    }
    u16::try_from(value).map_err(|_| AddressParseError::InvalidPort)
}

/// Something that names one socket address: an address string in the
/// reference's syntax ([`parse_address`]) or an already parsed address.
///
/// The constructors of [`Server`](crate::Server) and
/// [`Client`](crate::Client) take any of these, so both
/// `Server::new("127.0.0.1:40000", config)` and
/// `Server::new(address, config)` work.
pub trait ToAddress {
    /// The address, or why the text is not one.
    fn to_address(&self) -> Result<SocketAddr, AddressParseError>;
}

impl ToAddress for str {
    fn to_address(&self) -> Result<SocketAddr, AddressParseError> {
        parse_address(self)
    }
}

impl ToAddress for String {
    fn to_address(&self) -> Result<SocketAddr, AddressParseError> {
        parse_address(self)
    }
}

impl ToAddress for SocketAddr {
    fn to_address(&self) -> Result<SocketAddr, AddressParseError> {
        Ok(*self)
    }
}

impl ToAddress for SocketAddrV4 {
    fn to_address(&self) -> Result<SocketAddr, AddressParseError> {
        Ok(SocketAddr::V4(*self))
    }
}

impl ToAddress for SocketAddrV6 {
    fn to_address(&self) -> Result<SocketAddr, AddressParseError> {
        Ok(SocketAddr::V6(*self))
    }
}

impl<T: ToAddress + ?Sized> ToAddress for &T {
    fn to_address(&self) -> Result<SocketAddr, AddressParseError> {
        (**self).to_address()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(text: &str) -> (Ipv4Addr, u16) {
        match parse_address(text) {
            Ok(SocketAddr::V4(a)) => (*a.ip(), a.port()),
            other => panic!("{text:?} should be IPv4, got {other:?}"),
        }
    }

    fn v6(text: &str) -> ([u16; 8], u16) {
        match parse_address(text) {
            Ok(SocketAddr::V6(a)) => (a.ip().segments(), a.port()),
            other => panic!("{text:?} should be IPv6, got {other:?}"),
        }
    }

    /// The reference's `test_address`: everything it rejects.
    #[test]
    fn rejects_what_the_reference_rejects() {
        let long = "1312313:123131:1312313:123131:1312313:123131:1312313:123131:1312313:123131:1312313:123131";
        for text in [
            "",
            "[",
            "[]",
            "[]:",
            ":",
            "1",
            "12",
            "123",
            "1234",
            "1234.0.12313.0000",
            "1234.0.12313.0000.0.0.0.0.0",
            long,
            ".",
            "..",
            "...",
            "....",
            ".....",
            "127.0.0.1:65536",
            "127.0.0.1:99999",
            "127.0.0.1:",
            "127.0.0.1:40k",
            "[::1]:65536",
            "[::1]:",
            "[::1]:40k",
            "127.0.0.1:+5",
            "127.1",
            "localhost:40000",
            "[::1%1]:40000",
            "fe80::1%eth0",
        ] {
            assert!(parse_address(text).is_err(), "{text:?} should be refused");
        }
    }

    #[test]
    fn port_errors_say_so() {
        assert_eq!(
            parse_address("127.0.0.1:40k"),
            Err(AddressParseError::InvalidPort)
        );
        assert_eq!(parse_address("[::1]:"), Err(AddressParseError::InvalidPort));
        assert_eq!(
            parse_address("1.2.3"),
            Err(AddressParseError::InvalidAddress)
        );
    }

    #[test]
    fn ports_at_the_limits() {
        assert_eq!(v4("127.0.0.1:65535").1, 65535);
        assert_eq!(v6("[::1]:65535").1, 65535);
        assert_eq!(v4("127.0.0.1:0").1, 0);
        assert_eq!(v4("127.0.0.1:00080").1, 80, "leading zeros are allowed");
        assert!(
            parse_address("127.0.0.1:040000").is_err(),
            "only the last 6 characters are searched for the port"
        );
    }

    #[test]
    fn ipv4_with_and_without_port() {
        assert_eq!(v4("107.77.207.77"), (Ipv4Addr::new(107, 77, 207, 77), 0));
        assert_eq!(v4("127.0.0.1"), (Ipv4Addr::new(127, 0, 0, 1), 0));
        assert_eq!(
            v4("107.77.207.77:40000"),
            (Ipv4Addr::new(107, 77, 207, 77), 40000)
        );
        assert_eq!(v4("127.0.0.1:40000"), (Ipv4Addr::new(127, 0, 0, 1), 40000));
        assert_eq!(v4("0.0.0.0"), (Ipv4Addr::UNSPECIFIED, 0));
    }

    #[test]
    fn ipv6_plain_bracketed_and_with_port() {
        let fe80 = [0xfe80, 0, 0, 0, 0x0202, 0xb3ff, 0xfe1e, 0x8329];
        let one = [0, 0, 0, 0, 0, 0, 0, 1];
        assert_eq!(v6("fe80::202:b3ff:fe1e:8329"), (fe80, 0));
        assert_eq!(v6("::"), ([0; 8], 0));
        assert_eq!(v6("::1"), (one, 0));
        assert_eq!(v6("::0"), ([0; 8], 0));
        assert_eq!(v6("[::1]"), (one, 0));
        assert_eq!(v6("[::0]"), ([0; 8], 0));
        assert_eq!(v6("[fe80::1]"), ([0xfe80, 0, 0, 0, 0, 0, 0, 1], 0));
        assert_eq!(v6("[fe80::202:b3ff:fe1e:8329]:40000"), (fe80, 40000));
        assert_eq!(v6("[::]:40000"), ([0; 8], 40000));
        assert_eq!(v6("[::1]:5"), (one, 5));
        assert_eq!(v6("[fe80::1]:5"), ([0xfe80, 0, 0, 0, 0, 0, 0, 1], 5));
        assert_eq!(v6("[::1]:40000"), (one, 40000));
        assert_eq!(
            v6("::ffff:1.2.3.4"),
            ([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304], 0)
        );
    }

    #[test]
    fn reference_quirks_are_kept() {
        assert_eq!(v6("::1:4000"), ([0, 0, 0, 0, 0, 0, 1, 0x4000], 0));
        assert_eq!(v4("[1.2.3.4]:5"), (Ipv4Addr::new(1, 2, 3, 4), 5));
    }

    #[test]
    fn reads_only_up_to_a_nul_and_255_bytes() {
        assert_eq!(v4("127.0.0.1:40000\0garbage").1, 40000);
        let padded = format!("127.0.0.1{}", " ".repeat(300));
        assert!(parse_address(&padded).is_err());
        let long = format!("{}127.0.0.1", "0".repeat(300));
        assert!(parse_address(&long).is_err());
    }

    #[test]
    fn to_address_takes_text_and_addresses() {
        let a: SocketAddr = "127.0.0.1:1".parse().unwrap();
        assert_eq!("127.0.0.1:1".to_address(), Ok(a));
        assert_eq!(String::from("127.0.0.1:1").to_address(), Ok(a));
        assert_eq!(a.to_address(), Ok(a));
        fn through(address: impl ToAddress) -> Result<SocketAddr, AddressParseError> {
            address.to_address()
        }
        assert_eq!(through(a), Ok(a));
        assert_eq!(through("127.0.0.1:1"), Ok(a));
    }
}

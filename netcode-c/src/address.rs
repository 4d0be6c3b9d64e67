//! Addresses: `netcode_parse_address`, `netcode_address_to_string` and
//! `netcode_address_equal`, and the conversions between the C
//! [`netcode_address_t`] and Rust's [`SocketAddr`] (with its `Debug`).

use std::ffi::{c_char, c_int};
use std::fmt::Write as _;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV6};

use crate::abi::{
    NETCODE_ADDRESS_IPV4, NETCODE_ADDRESS_IPV6, NETCODE_ERROR, NETCODE_OK, netcode_address_data,
    netcode_address_t,
};
use crate::boundary::{self, guard};
use crate::logging;

/// The reference reads at most this many bytes of an address string (a
/// string and its NUL fit in `NETCODE_MAX_ADDRESS_STRING_LENGTH`): every
/// address string the library reads is read to this bound.
pub(crate) const MAX_ADDRESS_STRING_BYTES: usize = 255;

/// The size of the buffer `netcode_address_to_string` writes
/// (`NETCODE_MAX_ADDRESS_STRING_LENGTH` in the reference).
pub(crate) const ADDRESS_STRING_BUFFER_BYTES: usize = 256;

/// The Rust address of a C address; `None` for type NONE or an unknown
/// type. The port is kept; an IPv6 scope id and flow label, which C
/// addresses do not have, are 0.
pub(crate) fn to_socket_addr(address: &netcode_address_t) -> Option<SocketAddr> {
    match address.type_ {
        NETCODE_ADDRESS_IPV4 => {
            // SAFETY: every bit pattern is a valid [u8; 4], whichever member
            // C wrote last.
            let octets = unsafe { address.data.ipv4 };
            Some(SocketAddr::from((Ipv4Addr::from(octets), address.port)))
        }
        NETCODE_ADDRESS_IPV6 => {
            // SAFETY: every bit pattern is a valid [u16; 8].
            let groups = unsafe { address.data.ipv6 };
            Some(SocketAddr::from((Ipv6Addr::from(groups), address.port)))
        }
        _ => None,
    }
}

/// The C address of a Rust address (an IPv6 scope id and flow label are
/// dropped, as the reference cannot hold them).
pub(crate) fn from_socket_addr(address: SocketAddr) -> netcode_address_t {
    match address {
        SocketAddr::V4(v4) => netcode_address_t {
            data: netcode_address_data { ipv6: [0; 8] },
            port: v4.port(),
            type_: NETCODE_ADDRESS_IPV4,
        }
        .with_ipv4(v4.ip().octets()),
        SocketAddr::V6(v6) => netcode_address_t {
            data: netcode_address_data {
                ipv6: v6.ip().segments(),
            },
            port: v6.port(),
            type_: NETCODE_ADDRESS_IPV6,
        },
    }
}

impl std::fmt::Debug for netcode_address_t {
    /// `netcode_address_t(ADDRESS:PORT)`, or the type of an address that
    /// is neither IPv4 nor IPv6.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match to_socket_addr(self) {
            Some(address) => write!(f, "netcode_address_t({address})"),
            None => write!(f, "netcode_address_t(type {})", self.type_),
        }
    }
}

impl netcode_address_t {
    /// This address with its first four bytes set to `octets` (the rest
    /// of the union stays zero).
    fn with_ipv4(mut self, octets: [u8; 4]) -> Self {
        self.data.ipv4 = octets;
        self
    }
}

/// The reference's text of an address: `a.b.c.d[:port]`,
/// `ipv6` or `[ipv6]:port` (port shown when not 0), `NONE` for no address.
pub(crate) fn format(address: &netcode_address_t) -> String {
    let mut text = String::new();
    match to_socket_addr(address) {
        None => text.push_str("NONE"),
        Some(SocketAddr::V4(v4)) => {
            let _ = write!(text, "{}", v4.ip());
            if v4.port() != 0 {
                let _ = write!(text, ":{}", v4.port());
            }
        }
        Some(SocketAddr::V6(v6)) => {
            let ip = ipv6_text(&v6);
            if v6.port() != 0 {
                let _ = write!(text, "[{ip}]:{}", v6.port());
            } else {
                text.push_str(&ip);
            }
        }
    }
    text
}

/// An IPv6 address as the system's `inet_ntop` writes it: RFC 5952, and
/// the IPv4-compatible form `::a.b.c.d` kept for addresses whose first 96
/// bits are zero (other than `::` and `::x` below 2^16).
fn ipv6_text(address: &SocketAddrV6) -> String {
    let groups = address.ip().segments();
    if groups[..6] == [0; 6] && groups[6] != 0 {
        let [a, b] = groups[6].to_be_bytes();
        let [c, d] = groups[7].to_be_bytes();
        return format!("::{a}.{b}.{c}.{d}");
    }
    address.ip().to_string()
}

/// Parses `address_string_in` (at most its first 255 bytes are read) into
/// `*address` by the reference's rules; `NETCODE_OK` or `NETCODE_ERROR`.
/// The result is zeroed first, so a failed parse leaves a zeroed address.
///
/// # Safety
///
/// `address_string_in` is NULL or a C string (or 255 readable bytes);
/// `address` is NULL or points to a writable `netcode_address_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_parse_address(
    address_string_in: *const c_char,
    address: *mut netcode_address_t,
) -> c_int {
    guard("netcode_parse_address", NETCODE_ERROR, || {
        // SAFETY: `write` refuses NULL and a misaligned pointer; otherwise
        // `address` is writable (this function's contract).
        if !unsafe {
            boundary::write(
                address,
                netcode_address_t::ZERO,
                "netcode_parse_address: address",
            )
        } {
            return NETCODE_ERROR;
        }
        // SAFETY: `parse` refuses NULL and reads no further than the first
        // NUL or 255 bytes, readable by this function's contract.
        match unsafe { parse(address_string_in, "netcode_parse_address") } {
            Some(parsed) => {
                // SAFETY: checked writable above.
                unsafe { address.write(from_socket_addr(parsed)) };
                NETCODE_OK
            }
            None => NETCODE_ERROR,
        }
    })
}

/// The address in the C string `text`, read as `netcode_parse_address`
/// does (at most its first 255 bytes); `None` when it is not one, logged
/// (naming `function`) when `text` is NULL.
///
/// # Safety
///
/// `text` is NULL or readable up to its first NUL or 255 bytes.
pub(crate) unsafe fn parse(text: *const c_char, function: &str) -> Option<SocketAddr> {
    if text.is_null() {
        logging::error(format_args!("{function}: the address string is NULL"));
        return None;
    }
    // SAFETY: not NULL; `c_prefix` reads up to the first NUL or 255 bytes,
    // which the caller promises readable. As the reference, a string
    // longer than that is cut there.
    let (bytes, _) = unsafe { boundary::c_prefix(text, MAX_ADDRESS_STRING_BYTES) };
    let text = std::str::from_utf8(bytes).ok()?;
    netcode_std::parse_address(text).ok()
}

/// Writes the text of `*address` (`a.b.c.d[:port]`, `ipv6` or
/// `[ipv6]:port`, the port shown when not 0, `NONE` for no address) into
/// `buffer`, which must hold 256 bytes, and returns `buffer`; NULL
/// (logged) for a NULL buffer. A NULL address is written as `NONE`.
///
/// # Safety
///
/// `address` is NULL or points to a readable `netcode_address_t`; `buffer`
/// is NULL or points to 256 writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_address_to_string(
    address: *mut netcode_address_t,
    buffer: *mut c_char,
) -> *mut c_char {
    guard("netcode_address_to_string", std::ptr::null_mut(), || {
        if buffer.is_null() {
            logging::error(format_args!(
                "netcode_address_to_string: the buffer is NULL"
            ));
            return std::ptr::null_mut();
        }
        // SAFETY: `read` refuses NULL and a misaligned pointer; otherwise
        // `address` is readable (this function's contract).
        let text = match unsafe { read(address, "netcode_address_to_string") } {
            Some(address) => format(&address),
            None => "NONE".to_owned(),
        };
        let len = text.len().min(ADDRESS_STRING_BUFFER_BYTES - 1);
        // SAFETY: `buffer` holds 256 writable bytes (the caller's promise)
        // and `len + 1` is at most 256; a Rust String cannot overlap it.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), buffer.cast::<u8>(), len);
            buffer.add(len).write(0);
        }
        buffer
    })
}

/// `1` if `*a` and `*b` are the same address and port, of the same type
/// (IPv4 or IPv6; addresses of type NONE are never equal), `0` otherwise
/// and for NULL (logged).
///
/// # Safety
///
/// `a` and `b` are each NULL or point to a readable `netcode_address_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_address_equal(
    a: *mut netcode_address_t,
    b: *mut netcode_address_t,
) -> c_int {
    guard("netcode_address_equal", 0, || {
        // SAFETY: `read` refuses NULL and misaligned pointers; otherwise
        // each is a readable address (this function's contract).
        let (Some(a), Some(b)) = (unsafe { read(a, "netcode_address_equal") }, unsafe {
            read(b, "netcode_address_equal")
        }) else {
            return 0;
        };
        c_int::from(equal(&a, &b))
    })
}

/// Whether two C addresses are equal by the reference's rule.
pub(crate) fn equal(a: &netcode_address_t, b: &netcode_address_t) -> bool {
    a.type_ == b.type_
        && a.port == b.port
        && matches!((to_socket_addr(a), to_socket_addr(b)), (Some(x), Some(y)) if x == y)
}

/// A copy of the address at `address`; `None` (logged, naming `function`)
/// for NULL or a misaligned pointer.
///
/// # Safety
///
/// `address` is NULL, misaligned, or points to a readable
/// `netcode_address_t`.
pub(crate) unsafe fn read(
    address: *const netcode_address_t,
    function: &str,
) -> Option<netcode_address_t> {
    if address.is_null() {
        logging::error(format_args!("{function}: the address is NULL"));
        return None;
    }
    if !address.is_aligned() {
        logging::error(format_args!(
            "{function}: the address {address:p} is misaligned"
        ));
        return None;
    }
    // SAFETY: not NULL, aligned, readable by the caller's promise; every
    // bit pattern is a valid netcode_address_t (integers only).
    Some(unsafe { address.read() })
}

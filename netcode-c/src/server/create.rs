//! Making a server object from a C config: the checks in the reference's
//! order (override callbacks before addresses), the host on UDP sockets
//! or, in override mode, on the config's callbacks with nothing bound, and
//! the reference's create error codes, kept for
//! `netcode_server_create_error`.

use std::ffi::{c_char, c_int};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicI32, Ordering};

use netcode_std::proto::Key;
use netcode_std::{CreateError, Family, Server, ServerConfig, parse_address};

use crate::abi::{
    NETCODE_DEFAULT_MAX_CONNECT_TOKEN_LIFETIME, NETCODE_SERVER_CREATE_ERROR_ALLOCATE_SERVER_FAILED,
    NETCODE_SERVER_CREATE_ERROR_BIND_SOCKET_IPV4_FAILED,
    NETCODE_SERVER_CREATE_ERROR_BIND_SOCKET_IPV6_FAILED,
    NETCODE_SERVER_CREATE_ERROR_CREATE_SOCKET_IPV4_FAILED,
    NETCODE_SERVER_CREATE_ERROR_CREATE_SOCKET_IPV6_FAILED,
    NETCODE_SERVER_CREATE_ERROR_MISSING_OVERRIDE_CALLBACK, NETCODE_SERVER_CREATE_ERROR_NONE,
    NETCODE_SERVER_CREATE_ERROR_PARSE_ADDRESS_FAILED,
    NETCODE_SERVER_CREATE_ERROR_PARSE_ADDRESS2_FAILED, netcode_server_config_t,
};
use crate::address::MAX_ADDRESS_STRING_BYTES;
use crate::allocator::Allocator;
use crate::boundary::{self, guard};
use crate::global::packet_tagging;
use crate::logging;
use crate::socket::{CallbackSocket, HostSocket};

use super::layout::ConfigLayout;
use super::object::{self, netcode_server_t};
use super::state::{Callbacks, ServerState};

/// The code of the last create call (global, as the reference's; the
/// library is single-threaded by contract).
static LAST_ERROR: AtomicI32 = AtomicI32::new(NETCODE_SERVER_CREATE_ERROR_NONE);

/// The code of the last create call.
pub(crate) fn last_error() -> c_int {
    LAST_ERROR.load(Ordering::Relaxed)
}

/// What each create entry does: makes a server on `address1` and, when
/// not NULL, `address2`, from a config of `layout`, inside the boundary's
/// guard, and records the outcome for `netcode_server_create_error`
/// (NULL on failure, logged).
///
/// # Safety
///
/// Each pointer is NULL or, as C promises: `config` readable for
/// `layout`'s bytes, the addresses strings readable up to their NUL (or
/// 255 bytes).
pub(crate) unsafe fn create(
    function: &'static str,
    address1: *const c_char,
    address2: *const c_char,
    config: *const netcode_server_config_t,
    layout: ConfigLayout,
) -> *mut netcode_server_t {
    guard(function, std::ptr::null_mut(), || {
        LAST_ERROR.store(NETCODE_SERVER_CREATE_ERROR_NONE, Ordering::Relaxed);
        // SAFETY: this function's contract, passed on as `make`'s (the
        // same): each pointer NULL (refused there) or readable as C
        // promises.
        let made = unsafe { make(function, address1, address2, config, layout) };
        match made {
            Ok(server) => server,
            Err(code) => {
                LAST_ERROR.store(code, Ordering::Relaxed);
                std::ptr::null_mut()
            }
        }
    })
}

/// [`create`], with its error code.
///
/// # Safety
///
/// As for [`create`].
unsafe fn make(
    function: &'static str,
    address1: *const c_char,
    address2: *const c_char,
    config: *const netcode_server_config_t,
    layout: ConfigLayout,
) -> Result<*mut netcode_server_t, c_int> {
    if config.is_null() {
        logging::error(format_args!("{function}: the config is NULL"));
        return Err(NETCODE_SERVER_CREATE_ERROR_ALLOCATE_SERVER_FAILED);
    }
    if !config.is_aligned() {
        logging::error(format_args!(
            "{function}: the config ({config:p}) is misaligned"
        ));
        return Err(NETCODE_SERVER_CREATE_ERROR_ALLOCATE_SERVER_FAILED);
    }
    // SAFETY: not NULL and aligned; C promises a readable config of the
    // layout it was built with. It is copied.
    let config = unsafe { layout.read(config) };
    let allocator = Allocator::new(
        config.allocator_context,
        config.allocate_function,
        config.free_function,
    );
    let callbacks = if config.override_send_and_receive != 0 {
        match (config.send_packet_override, config.receive_packet_override) {
            (Some(send), Some(receive)) => Some(CallbackSocket {
                context: config.callback_context,
                send,
                receive,
            }),
            _ => {
                logging::error(format_args!(
                    "{function}: override_send_and_receive is set but send_packet_override or receive_packet_override is NULL"
                ));
                return Err(NETCODE_SERVER_CREATE_ERROR_MISSING_OVERRIDE_CALLBACK);
            }
        }
    } else {
        None
    };
    if !config.network_simulator.is_null() {
        logging::error(format_args!(
            "{function}: the network simulator is not supported; ignored"
        ));
    }
    // SAFETY: `address1` is NULL (refused by `c_str`) or readable up to its
    // NUL or 255 bytes (this function's contract); `c_str` reads no more.
    let first = unsafe { address(function, address1, "server address") }
        .ok_or(NETCODE_SERVER_CREATE_ERROR_PARSE_ADDRESS_FAILED)?;
    let second = if address2.is_null() {
        None
    } else {
        // SAFETY: as for `address1`; not NULL here.
        let second = unsafe { address(function, address2, "server address2") }
            .ok_or(NETCODE_SERVER_CREATE_ERROR_PARSE_ADDRESS2_FAILED)?;
        Some(second)
    };
    let host = host(&config, first, second, callbacks).map_err(|error| {
        logging::error(format_args!("{function}: {error}"));
        error_code(&error, first)
    })?;
    logging::info(format_args!("server listening on {first}"));
    if let Some(unspecified) = std::iter::once(first)
        .chain(second)
        .find(|a| a.ip().is_unspecified())
    {
        logging::info(format_args!(
            "{function}: the public address {unspecified} is the unspecified address: connect tokens must list it as their internal server address for clients to be admitted"
        ));
    }
    let state = ServerState::new(
        host,
        allocator,
        Callbacks {
            context: config.callback_context,
            connect_disconnect: config.connect_disconnect_callback,
            send_loopback: config.send_loopback_packet_callback,
        },
        callbacks.is_some(),
    );
    let server = object::allocate(function, &allocator, state);
    if server.is_null() {
        return Err(NETCODE_SERVER_CREATE_ERROR_ALLOCATE_SERVER_FAILED);
    }
    Ok(server)
}

/// The address in the C string `text`, or `None` (logged, naming `what`).
///
/// # Safety
///
/// `text` is NULL or readable up to its NUL or 255 bytes.
unsafe fn address(function: &str, text: *const c_char, what: &str) -> Option<SocketAddr> {
    let what = format!("{function}: {what}");
    // SAFETY: NULL is refused by `c_str`, which reads no further than the
    // first NUL or 255 bytes: readable by this function's contract.
    let text = unsafe { boundary::c_str(text, MAX_ADDRESS_STRING_BYTES, &what) }?;
    match parse_address(text) {
        Ok(address) => Some(address),
        Err(error) => {
            logging::error(format_args!("{what} \"{text}\": {error}"));
            None
        }
    }
}

/// The host for `config` on `first` (and `second`): bound UDP sockets, or
/// the override callbacks with nothing bound.
fn host(
    config: &netcode_server_config_t,
    first: SocketAddr,
    second: Option<SocketAddr>,
    callbacks: Option<CallbackSocket>,
) -> Result<Server<HostSocket>, CreateError> {
    let mut settings = ServerConfig::new(config.protocol_id, Key::from_bytes(config.private_key));
    settings.max_connect_token_lifetime = match u64::try_from(config.max_connect_token_lifetime) {
        Ok(seconds) if seconds > 0 => seconds,
        _ => NETCODE_DEFAULT_MAX_CONNECT_TOKEN_LIFETIME as u64,
    };
    settings.packet_tagging = packet_tagging();
    // As the reference: an unspecified public address (0.0.0.0:P) is
    // accepted and used as given, so tokens must list it exactly.
    settings.allow_unspecified_public_address = true;
    match callbacks {
        Some(callbacks) => Server::with_sockets(first, second, settings, |_, _| {
            Ok(HostSocket::Callbacks(callbacks))
        }),
        None => Server::bind_with(first, second, settings, |_, socket| {
            Ok(HostSocket::Udp(socket))
        }),
    }
}

/// The reference's create error code for `error`.
fn error_code(error: &CreateError, first: SocketAddr) -> c_int {
    let by_family = |family: Family, v4: c_int, v6: c_int| match family {
        Family::V4 => v4,
        Family::V6 => v6,
    };
    match error {
        CreateError::ParseAddress(_) => NETCODE_SERVER_CREATE_ERROR_PARSE_ADDRESS_FAILED,
        CreateError::ParseAddress2(_) | CreateError::SameFamily(_) => {
            NETCODE_SERVER_CREATE_ERROR_PARSE_ADDRESS2_FAILED
        }
        CreateError::UnspecifiedPublicAddress { address } => {
            if *address == first {
                NETCODE_SERVER_CREATE_ERROR_PARSE_ADDRESS_FAILED
            } else {
                NETCODE_SERVER_CREATE_ERROR_PARSE_ADDRESS2_FAILED
            }
        }
        CreateError::CreateSocket { family, .. } | CreateError::Register { family, .. } => {
            by_family(
                *family,
                NETCODE_SERVER_CREATE_ERROR_CREATE_SOCKET_IPV4_FAILED,
                NETCODE_SERVER_CREATE_ERROR_CREATE_SOCKET_IPV6_FAILED,
            )
        }
        CreateError::AddrInUse { address } | CreateError::Bind { address, .. } => by_family(
            Family::of(address),
            NETCODE_SERVER_CREATE_ERROR_BIND_SOCKET_IPV4_FAILED,
            NETCODE_SERVER_CREATE_ERROR_BIND_SOCKET_IPV6_FAILED,
        ),
        _ => NETCODE_SERVER_CREATE_ERROR_ALLOCATE_SERVER_FAILED,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An address string without its NUL is read to 255 bytes and no
    /// further (under Miri, a 256th byte read would be an error: the
    /// buffer ends there).
    #[test]
    fn an_unterminated_address_is_read_to_255_bytes_and_refused() {
        let unterminated = vec![b'1' as c_char; MAX_ADDRESS_STRING_BYTES];
        // SAFETY: 255 readable bytes, which is all the contract asks.
        let found = unsafe { address("netcode_server_create", unterminated.as_ptr(), "address") };
        assert_eq!(found, None);
        let mut terminated = b"127.0.0.1:40000".map(|b| b as c_char).to_vec();
        terminated.push(0);
        // SAFETY: a C string.
        let found = unsafe { address("netcode_server_create", terminated.as_ptr(), "address") };
        assert_eq!(found, Some("127.0.0.1:40000".parse().unwrap()));
    }
}

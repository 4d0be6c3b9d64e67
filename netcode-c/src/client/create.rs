//! Making and destroying a client: `netcode_default_client_config`,
//! `netcode_client_create(_dual)`, `netcode_client_create_error` and
//! `netcode_client_destroy`.

use std::ffi::{c_char, c_int};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicI32, Ordering};

use netcode_std::{Client, ClientConfig, CreateError, Family};

use super::object::{Callbacks, State, deliver, netcode_client_t, pointer};
use crate::abi::*;
use crate::address;
use crate::allocator::{Allocator, default_allocate, default_free};
use crate::boundary::{self, guard};
use crate::global::packet_tagging;
use crate::logging;
use crate::objects::{self, Object};
use crate::packets::{Exposed, Packets};
use crate::socket::{CallbackSocket, HostSocket};

/// The code of the last client create (global, as the reference's).
static CREATE_ERROR: AtomicI32 = AtomicI32::new(NETCODE_CLIENT_CREATE_ERROR_NONE);

/// Writes the default client config into `*config`: malloc and free, no
/// callbacks, no override.
///
/// # Safety
///
/// `config` is NULL (logged) or points to a writable
/// `netcode_client_config_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_default_client_config(config: *mut netcode_client_config_t) {
    guard("netcode_default_client_config", (), || {
        // SAFETY: `write` refuses NULL and a misaligned pointer; otherwise
        // `config` is writable (this function's contract).
        unsafe {
            boundary::write(
                config,
                netcode_client_config_t::default(),
                "netcode_default_client_config: config",
            )
        };
    })
}

impl Default for netcode_client_config_t {
    /// What `netcode_default_client_config` writes: default allocator,
    /// everything else off.
    fn default() -> Self {
        Self {
            allocator_context: std::ptr::null_mut(),
            allocate_function: Some(default_allocate),
            free_function: Some(default_free),
            network_simulator: std::ptr::null_mut(),
            callback_context: std::ptr::null_mut(),
            state_change_callback: None,
            send_loopback_packet_callback: None,
            override_send_and_receive: 0,
            send_packet_override: None,
            receive_packet_override: None,
        }
    }
}

/// A client with one socket bound to `address` (port 0: any port), or NULL
/// (see `netcode_client_create_error`).
///
/// # Safety
///
/// As for [`netcode_client_create_dual`] with a NULL second address.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_client_create(
    address: *const c_char,
    config: *const netcode_client_config_t,
    time: f64,
) -> *mut netcode_client_t {
    // SAFETY: `address` is NULL or a C string and `config` NULL or a
    // readable config (this function's contract); `create` refuses NULL
    // and a misaligned config and reads the string up to 255 bytes.
    unsafe {
        create(
            address,
            std::ptr::null(),
            config,
            time,
            "netcode_client_create",
        )
    }
}

/// A client with a socket for the family of each address (an IPv4 and an
/// IPv6 one; a second address of the first one's family is ignored, as in
/// the reference), or NULL (see `netcode_client_create_error`). In override
/// mode no socket is made: datagrams go through the config's callbacks, to
/// and from servers of either family.
///
/// # Safety
///
/// `address1` and `address2` are NULL or C strings; `config` is NULL or
/// points to a readable `netcode_client_config_t` whose callbacks and
/// allocator functions, if set, behave as the header says.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_client_create_dual(
    address1: *const c_char,
    address2: *const c_char,
    config: *const netcode_client_config_t,
    time: f64,
) -> *mut netcode_client_t {
    // SAFETY: the addresses are NULL or C strings and `config` NULL or a
    // readable config (this function's contract); `create` refuses NULL
    // and a misaligned config and reads each string up to 255 bytes.
    unsafe {
        create(
            address1,
            address2,
            config,
            time,
            "netcode_client_create_dual",
        )
    }
}

/// The code of the last client create: `NETCODE_CLIENT_CREATE_ERROR_*`,
/// NONE when it succeeded.
#[unsafe(no_mangle)]
pub extern "C" fn netcode_client_create_error() -> c_int {
    guard(
        "netcode_client_create_error",
        NETCODE_CLIENT_CREATE_ERROR_NONE,
        || CREATE_ERROR.load(Ordering::Relaxed),
    )
}

/// Records a failed create's code, and returns NULL.
fn fail(code: c_int) -> *mut netcode_client_t {
    CREATE_ERROR.store(code, Ordering::Relaxed);
    std::ptr::null_mut()
}

/// Both creates.
///
/// # Safety
///
/// As for [`netcode_client_create_dual`].
unsafe fn create(
    address1: *const c_char,
    address2: *const c_char,
    config: *const netcode_client_config_t,
    time: f64,
    function: &'static str,
) -> *mut netcode_client_t {
    CREATE_ERROR.store(NETCODE_CLIENT_CREATE_ERROR_NONE, Ordering::Relaxed);
    let failed = || fail(NETCODE_CLIENT_CREATE_ERROR_ALLOCATE_CLIENT_FAILED);
    guard(function, std::ptr::null_mut(), || {
        if config.is_null() || !config.is_aligned() {
            logging::error(format_args!("{function}: the config is NULL or misaligned"));
            return failed();
        }
        // SAFETY: not NULL and aligned (checked), readable (this function's
        // contract); every field is an integer, a raw pointer or an
        // optional function pointer, valid for any bits C wrote (NULL is
        // `None`); calling those functions is C's contract.
        let config = unsafe { config.read() };
        let allocator = Allocator::new(
            config.allocator_context,
            config.allocate_function,
            config.free_function,
        );
        if !config.network_simulator.is_null() {
            logging::error(format_args!(
                "{function}: the network simulator is not supported; ignored"
            ));
        }
        let callbacks = match (
            config.override_send_and_receive != 0,
            config.send_packet_override,
            config.receive_packet_override,
        ) {
            (false, ..) => None,
            (true, Some(send), Some(receive)) => Some(CallbackSocket {
                context: config.callback_context,
                send,
                receive,
            }),
            (true, ..) => {
                logging::error(format_args!(
                    "{function}: override_send_and_receive is set without both send_packet_override and receive_packet_override"
                ));
                return fail(NETCODE_CLIENT_CREATE_ERROR_MISSING_OVERRIDE_CALLBACK);
            }
        };
        // SAFETY: `parse` refuses NULL and reads up to the first NUL or 255
        // bytes, readable by this function's contract.
        let Some(first) = (unsafe { address::parse(address1, function) }) else {
            logging::error(format_args!("{function}: the address does not parse"));
            return fail(NETCODE_CLIENT_CREATE_ERROR_PARSE_ADDRESS_FAILED);
        };
        let mut second = None;
        if !address2.is_null() {
            // SAFETY: as for `address1`.
            let Some(parsed) = (unsafe { address::parse(address2, function) }) else {
                logging::error(format_args!(
                    "{function}: the second address does not parse"
                ));
                return fail(NETCODE_CLIENT_CREATE_ERROR_PARSE_ADDRESS2_FAILED);
            };
            if Family::of(&parsed) == Family::of(&first) {
                logging::info(format_args!(
                    "{function}: {parsed} is of the first address's family; ignored, as the reference"
                ));
            } else {
                second = Some(parsed);
            }
        }
        let host = match callbacks {
            // Override mode reaches servers of both families.
            Some(socket) => {
                let second = second.unwrap_or_else(|| other_family(first));
                Client::with_sockets(first, Some(second), |_, _| {
                    Ok(HostSocket::Callbacks(socket))
                })
            }
            None => {
                let mut options = ClientConfig::default();
                options.packet_tagging = packet_tagging();
                Client::bind_with(first, second, options, |_, socket| {
                    Ok(HostSocket::Udp(socket))
                })
            }
        };
        let mut host = match host {
            Ok(host) => host,
            Err(e) => {
                logging::error(format_args!("{function}: {e}"));
                return fail(create_error_code(&e));
            }
        };
        host.update(time);
        let override_mode = callbacks.is_some();
        let port = if override_mode { 0 } else { host.port() };
        let state = State {
            host,
            allocator,
            packets: Packets::default(),
            callbacks: Callbacks {
                context: config.callback_context,
                state_change: config.state_change_callback,
                send_loopback: config.send_loopback_packet_callback,
            },
            override_mode,
            server_address: Exposed::new(netcode_address_t::ZERO, 1),
        };
        let Some(client) = Object::place(&allocator, state, function) else {
            return failed();
        };
        logging::info(format_args!("client started on port {port}"));
        // The handle of an `Object<State>`, as C holds it.
        client.as_ptr().cast::<netcode_client_t>()
    })
}

/// The unspecified address of the other family than `address`'s, port 0:
/// override mode's second "socket".
fn other_family(address: SocketAddr) -> SocketAddr {
    let ip = match address {
        SocketAddr::V4(_) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
        SocketAddr::V6(_) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
    };
    SocketAddr::new(ip, 0)
}

/// The reference's client create error code for `error`.
fn create_error_code(error: &CreateError) -> c_int {
    let by_family = |family: Family| match family {
        Family::V4 => NETCODE_CLIENT_CREATE_ERROR_CREATE_SOCKET_IPV4_FAILED,
        Family::V6 => NETCODE_CLIENT_CREATE_ERROR_CREATE_SOCKET_IPV6_FAILED,
    };
    match error {
        CreateError::ParseAddress(_) => NETCODE_CLIENT_CREATE_ERROR_PARSE_ADDRESS_FAILED,
        CreateError::ParseAddress2(_) => NETCODE_CLIENT_CREATE_ERROR_PARSE_ADDRESS2_FAILED,
        CreateError::CreateSocket { family, .. } | CreateError::Register { family, .. } => {
            by_family(*family)
        }
        CreateError::AddrInUse { address } | CreateError::Bind { address, .. } => {
            by_family(Family::of(address))
        }
        _ => NETCODE_CLIENT_CREATE_ERROR_ALLOCATE_CLIENT_FAILED,
    }
}

/// Disconnects the client (sending disconnect packets when connecting or
/// connected; a loopback client leaves loopback mode), calls the callbacks
/// that causes, frees the payloads C never freed (logged at info) and the
/// client. NULL or a pointer that is not a live client (destroyed already,
/// a server, anything else) is logged and ignored without being read.
///
/// # Safety
///
/// `client` may be any pointer: every client function looks it up among
/// the live clients before reading anything through it. C's contract,
/// which cannot be checked: a client is not used by two threads at once
/// (nor destroyed by one while another uses it), and its memory is freed
/// only by this function.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_client_destroy(client: *mut netcode_client_t) {
    const FUNCTION: &str = "netcode_client_destroy";
    guard(FUNCTION, (), || {
        // SAFETY: `live` looks `client` up among the live clients before
        // reading it; C promises no other thread uses it meanwhile.
        let Some(found) = (unsafe { objects::live(pointer(client), FUNCTION) }) else {
            return;
        };
        let serial = found.serial;
        let entered = found.object.enter(FUNCTION, |s| {
            if s.host.loopback() {
                s.host.disconnect_loopback();
            } else {
                s.host.disconnect();
            }
        });
        if entered.is_none() {
            return;
        }
        // SAFETY: `deliver` looks the client up again (by its serial
        // number) before each use; the threading contract as above.
        unsafe { deliver(client, serial, FUNCTION) };
        // Looked up again: a callback may have destroyed it (then it is
        // gone from the registry, and nothing is read).
        // SAFETY: `again` reads nothing through the pointer; as above.
        if unsafe { objects::again(pointer(client), serial) }.is_none() {
            return;
        }
        let Some(handle) = NonNull::new(pointer(client).cast_mut()) else {
            return;
        };
        // SAFETY: found live just now (`again`), with no callback since.
        let Some((mut state, memory)) = (unsafe { Object::retire(handle, FUNCTION) }) else {
            return;
        };
        let allocator = state.allocator;
        let unfreed = state.packets.free_all(&allocator);
        if unfreed > 0 {
            logging::info(format_args!(
                "{FUNCTION}: freed {unfreed} received packet(s) never given to netcode_client_free_packet"
            ));
        }
        drop(state);
        // SAFETY: the memory `Object::place` got from this allocator at
        // create; the state has moved out and was dropped, the object left
        // the registry (no call reads it again) and is freed once.
        unsafe { allocator.unplace(memory) };
    })
}

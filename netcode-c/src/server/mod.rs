//! The server API of `netcode.h`: `netcode_server_*` and
//! `netcode_default_server_config`, over netcode-std's [`Server`]. This
//! file holds the object's life (config, create, destroy, start, stop,
//! update); `call` the ways a call reaches the object (`call`, and its
//! forms `query`, `query_slot` and `change`); `slots` what is done with
//! one slot's client; `loopback` in-process clients and datagrams from a
//! custom transport; `dispatch` the callbacks; `object` and `state` what
//! the object is; `create` how one is made.
//!
//! [`Server`]: netcode_std::Server

mod call;
mod create;
mod dispatch;
mod layout;
mod loopback;
mod object;
mod slots;
mod state;

use std::ffi::{c_char, c_int};

pub use loopback::*;
pub use object::netcode_server_t;
pub use slots::*;

use crate::abi::{
    NETCODE_DEFAULT_MAX_CONNECT_TOKEN_LIFETIME, NETCODE_MAX_CLIENTS, netcode_server_config_t,
};
use crate::allocator::{default_allocate, default_free};
use crate::boundary::guard;
use crate::logging;

use call::{call, change, query};
use layout::ConfigLayout;
use object::Handle;
use state::ServerState;

/// Fills `config` with the defaults: protocol id 0 and a zero key (the
/// caller's to set), malloc and free, no callbacks, no override, and a
/// token lifetime of `NETCODE_DEFAULT_MAX_CONNECT_TOKEN_LIFETIME`. The
/// header's `netcode_default_server_config`.
///
/// # Safety
///
/// `config` is NULL (logged) or points to a writable config.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_default_server_config_v2(config: *mut netcode_server_config_t) {
    // SAFETY: this function's contract.
    unsafe { default_config("netcode_default_server_config", config, ConfigLayout::Full) }
}

/// `netcode_default_server_config` for a program built against a header
/// before 1.4.5 (`layout`): writes the 120 bytes its config has.
///
/// # Safety
///
/// `config` is NULL (logged) or points to a writable config of 120 bytes.
#[unsafe(export_name = "netcode_default_server_config")]
pub unsafe extern "C" fn netcode_default_server_config_before_1_4_5(
    config: *mut netcode_server_config_t,
) {
    // SAFETY: this function's contract.
    unsafe {
        default_config(
            "netcode_default_server_config",
            config,
            ConfigLayout::BeforeTokenLifetime,
        );
    }
}

/// Writes the defaults of `layout` into `config`, or logs why not.
///
/// # Safety
///
/// `config` is NULL or writable for `layout`'s bytes.
unsafe fn default_config(
    function: &'static str,
    config: *mut netcode_server_config_t,
    layout: ConfigLayout,
) {
    guard(function, (), || {
        if config.is_null() || !config.is_aligned() {
            logging::error(format_args!(
                "{function}: the config ({config:p}) is NULL or misaligned"
            ));
            return;
        }
        // SAFETY: not NULL, aligned, and writable for the layout's bytes
        // (this function's contract).
        unsafe { layout.write_defaults(config) };
    });
}

impl Default for netcode_server_config_t {
    /// What `netcode_default_server_config` writes: default allocator,
    /// protocol id 0 and a zero key for the caller to set, the default
    /// token lifetime, everything else off.
    fn default() -> Self {
        Self {
            protocol_id: 0,
            private_key: [0; 32],
            allocator_context: std::ptr::null_mut(),
            allocate_function: Some(default_allocate),
            free_function: Some(default_free),
            network_simulator: std::ptr::null_mut(),
            callback_context: std::ptr::null_mut(),
            connect_disconnect_callback: None,
            send_loopback_packet_callback: None,
            override_send_and_receive: 0,
            send_packet_override: None,
            receive_packet_override: None,
            max_connect_token_lifetime: NETCODE_DEFAULT_MAX_CONNECT_TOKEN_LIFETIME,
        }
    }
}

/// A stopped server on the public address `server_address`, or NULL (see
/// `netcode_server_create_error`). `time` is not used: the first update's
/// time starts the server's clock.
///
/// # Safety
///
/// `server_address` is NULL or a C string; `config` NULL or a readable
/// config.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_server_create_v2(
    server_address: *const c_char,
    config: *const netcode_server_config_t,
    time: f64,
) -> *mut netcode_server_t {
    let _ = time;
    // SAFETY: this function's contract, which is `create::create`'s.
    unsafe {
        create::create(
            "netcode_server_create",
            server_address,
            std::ptr::null(),
            config,
            ConfigLayout::Full,
        )
    }
}

/// `netcode_server_create` for a program built against a header before
/// 1.4.5: reads the 120 bytes its config has; the token lifetime is the
/// default.
///
/// # Safety
///
/// `server_address` is NULL or a C string; `config` NULL or a readable
/// config of 120 bytes.
#[unsafe(export_name = "netcode_server_create")]
pub unsafe extern "C" fn netcode_server_create_before_1_4_5(
    server_address: *const c_char,
    config: *const netcode_server_config_t,
    time: f64,
) -> *mut netcode_server_t {
    let _ = time;
    // SAFETY: this function's contract, which is `create::create`'s.
    unsafe {
        create::create(
            "netcode_server_create",
            server_address,
            std::ptr::null(),
            config,
            ConfigLayout::BeforeTokenLifetime,
        )
    }
}

/// A stopped dual-stack server on an IPv4 and an IPv6 public address (in
/// either order), or NULL (see `netcode_server_create_error`).
///
/// # Safety
///
/// Each address is NULL or a C string; `config` NULL or a readable config.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_server_create_dual_v2(
    server_address1: *const c_char,
    server_address2: *const c_char,
    config: *const netcode_server_config_t,
    time: f64,
) -> *mut netcode_server_t {
    let _ = time;
    // SAFETY: this function's contract, which is `create::create`'s.
    unsafe {
        create::create(
            "netcode_server_create_dual",
            server_address1,
            server_address2,
            config,
            ConfigLayout::Full,
        )
    }
}

/// `netcode_server_create_dual` for a program built against a header
/// before 1.4.5: reads the 120 bytes its config has.
///
/// # Safety
///
/// Each address is NULL or a C string; `config` NULL or a readable config
/// of 120 bytes.
#[unsafe(export_name = "netcode_server_create_dual")]
pub unsafe extern "C" fn netcode_server_create_dual_before_1_4_5(
    server_address1: *const c_char,
    server_address2: *const c_char,
    config: *const netcode_server_config_t,
    time: f64,
) -> *mut netcode_server_t {
    let _ = time;
    // SAFETY: this function's contract, which is `create::create`'s.
    unsafe {
        create::create(
            "netcode_server_create_dual",
            server_address1,
            server_address2,
            config,
            ConfigLayout::BeforeTokenLifetime,
        )
    }
}

/// Why the last `netcode_server_create(_dual)` returned NULL
/// (`NETCODE_SERVER_CREATE_ERROR_*`), or `NONE` after one that succeeded.
#[unsafe(no_mangle)]
pub extern "C" fn netcode_server_create_error() -> c_int {
    guard("netcode_server_create_error", 0, create::last_error)
}

/// Stops the server (the disconnect callback fires for each client) and
/// frees it, with every received packet C did not free. Called from one of
/// the server's callbacks, it takes effect when the call that ran the
/// callback returns. A pointer that is not a live server (destroyed
/// already, or never a server) is logged and left alone.
///
/// # Safety
///
/// `server` may be any pointer: every server function looks it up among
/// the live servers before reading anything through it. C's contract,
/// which cannot be checked: a server is not used by two threads at once
/// (nor destroyed by one while another uses it), and its memory is freed
/// only by this function.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_server_destroy(server: *mut netcode_server_t) {
    // SAFETY: `call` looks `server` up among the live servers before
    // reading it; the threading contract is the caller's promise (this
    // function's # Safety). The destroy is carried out as the call ends.
    unsafe {
        call("netcode_server_destroy", server, (), |handle| {
            handle.destroy()
        })
    }
}

/// Opens `max_clients` slots (1 to `NETCODE_MAX_CLIENTS`), stopping the
/// server first if it runs. Another count is logged and changes nothing.
/// Returns once tokens issued from now on are admitted (within a second;
/// see the crate's notes on the restart rule).
///
/// # Safety
///
/// `server`: any pointer (looked up among the live servers first).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_server_start(server: *mut netcode_server_t, max_clients: c_int) {
    let body = |handle: &Handle<'_>| {
        let Some(count) = usize::try_from(max_clients)
            .ok()
            .filter(|&n| (1..=NETCODE_MAX_CLIENTS as usize).contains(&n))
        else {
            logging::error(format_args!(
                "{}: max clients {max_clients} is not in 1..={NETCODE_MAX_CLIENTS}",
                handle.function()
            ));
            return;
        };
        // A running server is stopped first, its callbacks delivered, as
        // the reference's start does.
        if handle.with(false, |state| state.host.running()) {
            handle.with((), ServerState::stop);
            dispatch::deliver_events(handle);
        }
        handle.with((), |state| {
            if let Err(error) = state.host.start(count) {
                logging::error(format_args!("{}: {error}", handle.function()));
            }
        });
        dispatch::deliver_events(handle);
    };
    // SAFETY: `call` looks `server` up among the live servers before
    // reading it (`Handle::new`); C promises no other thread uses it
    // meanwhile (this function's # Safety).
    unsafe { call("netcode_server_start", server, (), body) }
}

/// Disconnects every client (the disconnect callback fires for each) and
/// closes the slots; nothing when stopped.
///
/// # Safety
///
/// `server`: any pointer (looked up among the live servers first).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_server_stop(server: *mut netcode_server_t) {
    // SAFETY: `change` looks `server` up among the live servers before
    // reading it; C promises no other thread uses it meanwhile (this
    // function's # Safety).
    unsafe { change("netcode_server_stop", server, ServerState::stop) }
}

/// 1 when started, else 0.
///
/// # Safety
///
/// `server`: any pointer (looked up among the live servers first).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_server_running(server: *mut netcode_server_t) -> c_int {
    // SAFETY: `query` looks `server` up among the live servers before
    // reading it; C promises no other thread uses it meanwhile (this
    // function's # Safety).
    unsafe {
        query("netcode_server_running", server, 0, |state| {
            c_int::from(state.running())
        })
    }
}

/// The open slots (0 when stopped).
///
/// # Safety
///
/// `server`: any pointer (looked up among the live servers first).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_server_max_clients(server: *mut netcode_server_t) -> c_int {
    // SAFETY: `query` looks `server` up among the live servers before
    // reading it; C promises no other thread uses it meanwhile (this
    // function's # Safety).
    unsafe {
        query("netcode_server_max_clients", server, 0, |state| {
            c_int::try_from(state.max_clients()).unwrap_or(c_int::MAX)
        })
    }
}

/// The occupied slots.
///
/// # Safety
///
/// `server`: any pointer (looked up among the live servers first).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_server_num_connected_clients(
    server: *mut netcode_server_t,
) -> c_int {
    let body = |state: &mut ServerState| {
        let count = state.host.num_connected_clients() + state.departed_count();
        c_int::try_from(count).unwrap_or(c_int::MAX)
    };
    // SAFETY: `query` looks `server` up among the live servers before
    // reading it; C promises no other thread uses it meanwhile (this
    // function's # Safety).
    unsafe { query("netcode_server_num_connected_clients", server, 0, body) }
}

/// Advances the server to `time` (seconds, the caller's clock): reads
/// every waiting datagram, sends keep-alives, times out silent clients,
/// then calls the connect/disconnect callback for what happened.
///
/// # Safety
///
/// `server`: any pointer (looked up among the live servers first).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_server_update(server: *mut netcode_server_t, time: f64) {
    // SAFETY: `change` looks `server` up among the live servers before
    // reading it; C promises no other thread uses it meanwhile (this
    // function's # Safety).
    unsafe {
        change("netcode_server_update", server, |state| {
            state.host.update(time)
        })
    }
}

/// The port of the socket of the first address's family (0 in override
/// mode, which has no socket, as in the reference).
///
/// # Safety
///
/// `server`: any pointer (looked up among the live servers first).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_server_get_port(server: *mut netcode_server_t) -> u16 {
    let body = |state: &mut ServerState| {
        if state.override_mode {
            0
        } else {
            state.host.port()
        }
    };
    // SAFETY: `query` looks `server` up among the live servers before
    // reading it; C promises no other thread uses it meanwhile (this
    // function's # Safety).
    unsafe { query("netcode_server_get_port", server, 0, body) }
}

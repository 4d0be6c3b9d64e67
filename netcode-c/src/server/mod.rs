//! The server API of `netcode.h`: `netcode_server_*` and
//! `netcode_default_server_config`, over netcode-std's [`Server`]. This
//! file holds the ways a call reaches the object (`call`, and its forms
//! `query`, `query_slot` and `change`) and the object's life (config,
//! create, destroy, start, stop, update); `slots` what is done with one
//! slot's client; `loopback` in-process clients and datagrams from a
//! custom transport; `dispatch` the callbacks; `object` and `state` what
//! the object is; `create` how one is made.
//!
//! [`Server`]: netcode_std::Server

mod create;
mod dispatch;
mod loopback;
mod object;
mod slots;
mod state;

use std::ffi::{c_char, c_int};

pub use loopback::*;
pub use object::netcode_server_t;
pub use slots::*;

use crate::abi::{NETCODE_MAX_CLIENTS, netcode_server_config_t};
use crate::boundary::{self, guard};
use crate::logging;

use object::Handle;
use state::ServerState;

/// Runs `body` with the server behind `server`, inside the boundary's
/// guard: NULL and pointers that are not live servers are logged and get
/// `fallback`, as does a panic.
///
/// # Safety
///
/// As [`Handle::new`] requires: `server` may be any pointer (it is looked
/// up among the live servers first); C's threading contract.
unsafe fn call<R: Copy>(
    function: &'static str,
    server: *mut netcode_server_t,
    fallback: R,
    body: impl FnOnce(&Handle<'_>) -> R,
) -> R {
    guard(function, fallback, || {
        // SAFETY: `Handle::new` looks `server` up before reading it; the
        // threading contract is the caller's promise.
        match unsafe { Handle::new(server, function) } {
            Some(handle) => body(&handle),
            None => fallback,
        }
    })
}

/// [`call`] for a query: `body` reads the state; nothing is delivered
/// after.
///
/// # Safety
///
/// As for [`call`].
unsafe fn query<R: Copy>(
    function: &'static str,
    server: *mut netcode_server_t,
    fallback: R,
    body: impl FnOnce(&mut ServerState) -> R,
) -> R {
    // SAFETY: `call` looks `server` up among the live servers before
    // reading it; the caller promises the rest (this function's # Safety).
    unsafe {
        call(function, server, fallback, |handle| {
            handle.with(fallback, body)
        })
    }
}

/// [`query`] on slot `client_index`: `body` gets the state and the slot;
/// `fallback` when the index is not a slot of the server (logged unless
/// the server is stopped, see [`ServerState::slot`]).
///
/// # Safety
///
/// As for [`call`].
unsafe fn query_slot<R: Copy>(
    function: &'static str,
    server: *mut netcode_server_t,
    client_index: c_int,
    fallback: R,
    body: impl FnOnce(&mut ServerState, usize) -> R,
) -> R {
    let body = |state: &mut ServerState| match state.slot(client_index, function) {
        Some(slot) => body(state, slot),
        None => fallback,
    };
    // SAFETY: as the caller promises (this function's # Safety).
    unsafe { query(function, server, fallback, body) }
}

/// [`call`] for a change: `body` runs on the state, then the connect and
/// disconnect callbacks it caused are delivered.
///
/// # Safety
///
/// As for [`call`].
unsafe fn change(
    function: &'static str,
    server: *mut netcode_server_t,
    body: impl FnOnce(&mut ServerState),
) {
    let body = |handle: &Handle<'_>| {
        handle.with((), body);
        dispatch::deliver_events(handle);
    };
    // SAFETY: `call` looks `server` up among the live servers before
    // reading it; the caller promises the rest (this function's # Safety).
    unsafe { call(function, server, (), body) }
}

/// Fills `config` with the defaults: protocol id 0 and a zero key (the
/// caller's to set), malloc and free, no callbacks, no override, and a
/// token lifetime of `NETCODE_DEFAULT_MAX_CONNECT_TOKEN_LIFETIME`.
///
/// # Safety
///
/// `config` is NULL (logged) or points to a writable config.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_default_server_config(config: *mut netcode_server_config_t) {
    const F: &str = "netcode_default_server_config";
    guard(F, (), || {
        // SAFETY: NULL and misaligned pointers are refused by `write`;
        // otherwise C promises a writable config.
        unsafe { boundary::write(config, netcode_server_config_t::default(), F) };
    })
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
pub unsafe extern "C" fn netcode_server_create(
    server_address: *const c_char,
    config: *const netcode_server_config_t,
    time: f64,
) -> *mut netcode_server_t {
    let _ = time;
    const F: &str = "netcode_server_create";
    guard(F, std::ptr::null_mut(), || {
        // SAFETY: the address is NULL or a C string and the config NULL or
        // readable (this function's contract); `create` refuses NULL and a
        // misaligned config, and reads the string up to 256 bytes.
        unsafe { create::create(F, server_address, std::ptr::null(), config) }
    })
}

/// A stopped dual-stack server on an IPv4 and an IPv6 public address (in
/// either order), or NULL (see `netcode_server_create_error`).
///
/// # Safety
///
/// Each address is NULL or a C string; `config` NULL or a readable config.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_server_create_dual(
    server_address1: *const c_char,
    server_address2: *const c_char,
    config: *const netcode_server_config_t,
    time: f64,
) -> *mut netcode_server_t {
    let _ = time;
    const F: &str = "netcode_server_create_dual";
    guard(F, std::ptr::null_mut(), || {
        // SAFETY: each address is NULL or a C string and the config NULL or
        // readable (this function's contract); `create` refuses NULL and a
        // misaligned config, and reads each string up to 256 bytes.
        unsafe { create::create(F, server_address1, server_address2, config) }
    })
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
    const F: &str = "netcode_server_destroy";
    guard(F, (), || {
        // SAFETY: looked up among the live servers before anything is read;
        // the threading contract is the caller's promise.
        if let Some(handle) = unsafe { Handle::new(server, F) } {
            handle.destroy();
        }
    })
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

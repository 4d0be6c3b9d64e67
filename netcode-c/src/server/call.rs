//! How an exported function reaches its server: [`call`], and its forms
//! [`query`], [`query_slot`] and [`change`]. Each looks the pointer up
//! among the live servers (see `object`), runs the function's body inside
//! the boundary's guard, and ends the call: a destroy that waited for the
//! outermost call is carried out there.

use std::ffi::c_int;

use crate::boundary::guard;

use super::dispatch;
use super::object::{Handle, netcode_server_t};
use super::state::ServerState;

/// Runs `body` with the server behind `server`, inside the boundary's
/// guard: NULL and pointers that are not live servers are logged and get
/// `fallback`, as does a panic.
///
/// # Safety
///
/// As [`Handle::new`] requires: `server` may be any pointer (it is looked
/// up among the live servers first); C's threading contract.
pub(super) unsafe fn call<R: Copy>(
    function: &'static str,
    server: *mut netcode_server_t,
    fallback: R,
    body: impl FnOnce(&Handle<'_>) -> R,
) -> R {
    guard(function, fallback, || {
        // SAFETY: `Handle::new` looks `server` up before reading it; the
        // threading contract is the caller's promise.
        let Some(handle) = (unsafe { Handle::new(server, function) }) else {
            return fallback;
        };
        let result = body(&handle);
        end(&handle);
        result
    })
}

/// The end of a call that returned (a panic skips it, caught by the
/// guard): when a destroy waited for this call, the outermost, the server
/// is stopped (its callbacks fire for the clients it disconnects, as in
/// the reference's destroy) and freed, with what C never freed.
#[inline]
fn end(handle: &Handle<'_>) {
    if handle.destroy_due() {
        handle.with((), ServerState::stop);
        dispatch::deliver_events(handle);
        handle.release();
    }
}

/// [`call`] for a query: `body` reads the state; nothing is delivered
/// after.
///
/// # Safety
///
/// As for [`call`].
pub(super) unsafe fn query<R: Copy>(
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
pub(super) unsafe fn query_slot<R: Copy>(
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
pub(super) unsafe fn change(
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

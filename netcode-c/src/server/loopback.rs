//! Clients in the same process (loopback slots: connected at once, no
//! packets, keep-alives or timeouts; their payloads go through
//! `send_loopback_packet_callback` one way and
//! `netcode_server_process_loopback_packet` the other), and datagrams that
//! arrive some other way than the server's sockets
//! (`netcode_server_process_packet`).

use std::ffi::c_int;
use std::fmt::Display;

use netcode_std::proto::constants::{MAX_PACKET_BYTES, USER_DATA_BYTES};

use crate::abi::netcode_address_t;
use crate::address::to_socket_addr;
use crate::boundary;
use crate::logging;

use super::call::{call, change, query_slot};
use super::dispatch;
use super::object::{Handle, netcode_server_t};
use super::state::ServerState;

/// Puts an in-process client with `client_id` in the free slot
/// `client_index` of the running server (the connect callback fires),
/// with `user_data` (256 bytes, or zeros when NULL). Refused (logged)
/// without a `send_loopback_packet_callback` in the config, as the
/// reference since 1.4.7, and for a stopped server, a slot out of range
/// or taken, or a client id already connected.
///
/// # Safety
///
/// `server`: any pointer (looked up among the live servers first); `user_data` NULL or 256
/// readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_server_connect_loopback_client(
    server: *mut netcode_server_t,
    client_index: c_int,
    client_id: u64,
    user_data: *const u8,
) {
    const F: &str = "netcode_server_connect_loopback_client";
    let body = |handle: &Handle<'_>| {
        let user_data = if user_data.is_null() {
            None
        } else {
            // SAFETY: not NULL, and C promises 256 readable bytes.
            unsafe { boundary::array::<USER_DATA_BYTES>(user_data, "user_data") }
        };
        handle.with((), |state| {
            if state.callbacks.send_loopback.is_none() {
                logging::error(format_args!(
                    "{F}: refused: the config has no send_loopback_packet_callback"
                ));
                return;
            }
            if !state.host.running() {
                logging::error(format_args!("{F}: refused: the server is not running"));
                return;
            }
            let Some(slot) = state.slot(client_index, F) else {
                return;
            };
            let connected = state
                .host
                .connect_loopback_client(slot, client_id, user_data);
            log_slot_error(F, slot, connected);
        });
        dispatch::deliver_events(handle);
    };
    // SAFETY: `call` looks `server` up among the live servers before
    // reading it (`Handle::new`); C promises no other thread uses it
    // meanwhile (this function's # Safety).
    unsafe { call(F, server, (), body) }
}

/// Empties loopback slot `client_index` (the disconnect callback fires).
/// A slot that holds no loopback client is logged and left alone.
///
/// # Safety
///
/// `server`: any pointer (looked up among the live servers first).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_server_disconnect_loopback_client(
    server: *mut netcode_server_t,
    client_index: c_int,
) {
    const F: &str = "netcode_server_disconnect_loopback_client";
    let body = |state: &mut ServerState| {
        if let Some(slot) = state.slot(client_index, F) {
            log_slot_error(F, slot, state.host.disconnect_loopback_client(slot));
        }
    };
    // SAFETY: `change` looks `server` up among the live servers before
    // reading it; C promises no other thread uses it meanwhile (this
    // function's # Safety).
    unsafe { change(F, server, body) }
}

/// 1 when slot `client_index` holds a loopback client, else 0.
///
/// # Safety
///
/// `server`: any pointer (looked up among the live servers first).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_server_client_loopback(
    server: *mut netcode_server_t,
    client_index: c_int,
) -> c_int {
    const F: &str = "netcode_server_client_loopback";
    let body = |state: &mut ServerState, slot| {
        let loopback = match state.departed(slot) {
            Some(departed) => departed.loopback,
            None => state.host.client_loopback(slot),
        };
        c_int::from(loopback)
    };
    // SAFETY: `query_slot` looks `server` up among the live servers
    // before reading it; C promises no other thread uses it meanwhile
    // (this function's # Safety).
    unsafe { query_slot(F, server, client_index, 0, body) }
}

/// Delivers a payload that the loopback client of slot `client_index`
/// sent (1 to `NETCODE_MAX_PACKET_SIZE` bytes), queued for
/// `netcode_server_receive_packet` with `packet_sequence`.
///
/// # Safety
///
/// `server`: any pointer (looked up among the live servers first); `packet_data` NULL (logged)
/// or `packet_bytes` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_server_process_loopback_packet(
    server: *mut netcode_server_t,
    client_index: c_int,
    packet_data: *const u8,
    packet_bytes: c_int,
    packet_sequence: u64,
) {
    const F: &str = "netcode_server_process_loopback_packet";
    let body = |handle: &Handle<'_>| {
        // SAFETY: C promises `packet_bytes` readable bytes at a
        // non-NULL `packet_data`; NULL and sizes outside 1..=1200 are
        // refused first. The slice lives for this call only.
        let Some(data) = (unsafe { boundary::payload(packet_data, packet_bytes, F) }) else {
            return;
        };
        handle.with((), |state| {
            if let Some(slot) = state.slot(client_index, F) {
                let processed = state
                    .host
                    .process_loopback_packet(slot, data, packet_sequence);
                log_slot_error(F, slot, processed);
            }
        });
    };
    // SAFETY: `call` looks `server` up among the live servers before
    // reading it (`Handle::new`); C promises no other thread uses it
    // meanwhile (this function's # Safety).
    unsafe { call(F, server, (), body) }
}

/// Handles one datagram of `packet_bytes` bytes from `from` that arrived
/// some other way than the server's sockets, as if read in an update: a
/// payload queued, a connect or disconnect reported through the callback.
/// The datagram is decrypted in place, as the reference does: what the
/// buffer holds afterwards is unspecified. The replies it causes reach the
/// send override after the last use of the buffer, so the override may
/// reuse it.
///
/// # Safety
///
/// `server`: any pointer (looked up among the live servers first); `from`
/// NULL (logged) or a readable address; `packet_data` NULL (logged) or
/// `packet_bytes` writable bytes, which no callback but the send override
/// touches during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_server_process_packet(
    server: *mut netcode_server_t,
    from: *mut netcode_address_t,
    packet_data: *mut u8,
    packet_bytes: c_int,
) {
    const F: &str = "netcode_server_process_packet";
    let body = |handle: &Handle<'_>| {
        if from.is_null() || !from.is_aligned() {
            logging::error(format_args!("{F}: from ({from:p}) is NULL or misaligned"));
            return;
        }
        // SAFETY: not NULL, aligned, and C promises a readable address;
        // it is copied (any bit pattern is a valid address value).
        let from = unsafe { from.read() };
        let Some(from) = to_socket_addr(&from) else {
            logging::error(format_args!(
                "{F}: from is not an IPv4 or IPv6 address (type {})",
                from.type_
            ));
            return;
        };
        // SAFETY: NULL and sizes out of range are refused by `new`;
        // otherwise C promises `packet_bytes` writable bytes at
        // `packet_data`, which only the send override may use during the
        // call, and it is not called inside `work_on`: the host works on
        // the datagram inside a batch, which holds its replies until it
        // ends, after `work_on`.
        let Some(mut datagram) =
            (unsafe { boundary::Lent::new(packet_data, packet_bytes, MAX_PACKET_BYTES, F) })
        else {
            return;
        };
        let delivery_due = handle.with(false, |state| {
            let mut batch = state.host.batch();
            datagram.work_on(|datagram| batch.process_packet(from, datagram));
            drop(batch);
            state.delivery_due()
        });
        if delivery_due {
            dispatch::deliver_events(handle);
        }
    };
    // SAFETY: `call` looks `server` up among the live servers before
    // reading it (`Handle::new`); C promises no other thread uses it
    // meanwhile (this function's # Safety).
    unsafe { call(F, server, (), body) }
}

/// Logs the error, if any, of what `function` asked the host to do with
/// loopback slot `slot`.
fn log_slot_error(function: &str, slot: usize, result: Result<(), impl Display>) {
    if let Err(error) = result {
        logging::error(format_args!("{function}: slot {slot}: {error}"));
    }
}

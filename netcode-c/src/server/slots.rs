//! What C does with one slot's client: what is known of it, payloads in
//! and out, and disconnecting it.
//!
//! As in the reference, a query on a stopped server returns 0 (or NULL)
//! silently; a negative index, or one past the last slot of a running
//! server, is also logged.

use std::ffi::{c_int, c_void};

use crate::abi::netcode_address_t;
use crate::boundary;
use crate::logging;

use super::call::{call, change, query_slot};
use super::dispatch;
use super::object::{Handle, netcode_server_t};
use super::state::ServerState;

/// 1 when slot `client_index` holds a client, else 0.
///
/// # Safety
///
/// `server`: any pointer (looked up among the live servers first).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_server_client_connected(
    server: *mut netcode_server_t,
    client_index: c_int,
) -> c_int {
    const F: &str = "netcode_server_client_connected";
    let body = |state: &mut ServerState, slot| c_int::from(state.connected(slot));
    // SAFETY: `query_slot` looks `server` up among the live servers
    // before reading it; C promises no other thread uses it meanwhile
    // (this function's # Safety).
    unsafe { query_slot(F, server, client_index, 0, body) }
}

/// The client id of slot `client_index`'s client (0 for a free slot).
///
/// # Safety
///
/// `server`: any pointer (looked up among the live servers first).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_server_client_id(
    server: *mut netcode_server_t,
    client_index: c_int,
) -> u64 {
    const F: &str = "netcode_server_client_id";
    let body = |state: &mut ServerState, slot| match state.departed(slot) {
        Some(departed) => departed.client_id,
        None => state.host.client_id(slot).unwrap_or(0),
    };
    // SAFETY: `query_slot` looks `server` up among the live servers
    // before reading it; C promises no other thread uses it meanwhile
    // (this function's # Safety).
    unsafe { query_slot(F, server, client_index, 0, body) }
}

/// Where to read the address of slot `client_index`'s client (zeroed for a
/// free or loopback slot); NULL when stopped or out of range. The address
/// is held in the server object and stays valid until it is destroyed.
///
/// # Safety
///
/// `server`: any pointer (looked up among the live servers first).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_server_client_address(
    server: *mut netcode_server_t,
    client_index: c_int,
) -> *mut netcode_address_t {
    const F: &str = "netcode_server_client_address";
    // SAFETY: `query_slot` looks `server` up among the live servers
    // before reading it; C promises no other thread uses it meanwhile
    // (this function's # Safety).
    unsafe {
        query_slot(
            F,
            server,
            client_index,
            std::ptr::null_mut(),
            |state, slot| state.address_pointer(slot),
        )
    }
}

/// Where to read the 256 bytes of user data from slot `client_index`'s
/// connect token (zeroed for a free slot); NULL when stopped or out of
/// range. Held in the server object until it is destroyed.
///
/// # Safety
///
/// `server`: any pointer (looked up among the live servers first).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_server_client_user_data(
    server: *mut netcode_server_t,
    client_index: c_int,
) -> *mut c_void {
    const F: &str = "netcode_server_client_user_data";
    // SAFETY: `query_slot` looks `server` up among the live servers
    // before reading it; C promises no other thread uses it meanwhile
    // (this function's # Safety).
    unsafe {
        query_slot(
            F,
            server,
            client_index,
            std::ptr::null_mut(),
            |state, slot| state.user_data_pointer(slot),
        )
    }
}

/// Why slot `client_index` was last vacated
/// (`NETCODE_SERVER_CLIENT_DISCONNECT_REASON_*`; NONE when stopped).
///
/// # Safety
///
/// `server`: any pointer (looked up among the live servers first).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_server_client_disconnect_reason(
    server: *mut netcode_server_t,
    client_index: c_int,
) -> c_int {
    const F: &str = "netcode_server_client_disconnect_reason";
    let body = |state: &mut ServerState, slot| {
        let reason = match state.departed(slot) {
            Some(departed) => departed.reason,
            None => state.host.disconnect_reason(slot),
        };
        c_int::from(reason.code())
    };
    // SAFETY: `query_slot` looks `server` up among the live servers
    // before reading it; C promises no other thread uses it meanwhile
    // (this function's # Safety).
    unsafe { query_slot(F, server, client_index, 0, body) }
}

/// Disconnects slot `client_index`'s client with disconnect packets (the
/// disconnect callback fires); free and loopback slots are left alone.
///
/// # Safety
///
/// `server`: any pointer (looked up among the live servers first).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_server_disconnect_client(
    server: *mut netcode_server_t,
    client_index: c_int,
) {
    const F: &str = "netcode_server_disconnect_client";
    let body = |state: &mut ServerState| {
        if let Some(slot) = state.slot(client_index, F) {
            state.host.disconnect_client(slot);
        }
    };
    // SAFETY: `change` looks `server` up among the live servers before
    // reading it; C promises no other thread uses it meanwhile (this
    // function's # Safety).
    unsafe { change(F, server, body) }
}

/// Disconnects every network client (loopback slots stay).
///
/// # Safety
///
/// `server`: any pointer (looked up among the live servers first).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_server_disconnect_all_clients(server: *mut netcode_server_t) {
    const F: &str = "netcode_server_disconnect_all_clients";
    // SAFETY: `change` looks `server` up among the live servers before
    // reading it; C promises no other thread uses it meanwhile (this
    // function's # Safety).
    unsafe { change(F, server, |state| state.host.disconnect_all_clients()) }
}

/// The sequence the next packet to slot `client_index` will carry (0 for
/// a free slot).
///
/// # Safety
///
/// `server`: any pointer (looked up among the live servers first).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_server_next_packet_sequence(
    server: *mut netcode_server_t,
    client_index: c_int,
) -> u64 {
    const F: &str = "netcode_server_next_packet_sequence";
    // SAFETY: `query_slot` looks `server` up among the live servers
    // before reading it; C promises no other thread uses it meanwhile
    // (this function's # Safety).
    unsafe {
        query_slot(F, server, client_index, 0, |state, slot| {
            state.host.next_packet_sequence(slot).unwrap_or(0)
        })
    }
}

/// Sends `packet_bytes` (1 to `NETCODE_MAX_PACKET_SIZE`) bytes to slot
/// `client_index`'s client; to a loopback client through
/// `send_loopback_packet_callback`. Ignored for a free slot or a stopped
/// server; a NULL payload or a size out of range is logged.
///
/// # Safety
///
/// `server`: any pointer (looked up among the live servers first);
/// `packet_data` NULL (logged) or `packet_bytes` readable bytes, which the
/// send override does not write during this call (it is read while the
/// override runs).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_server_send_packet(
    server: *mut netcode_server_t,
    client_index: c_int,
    packet_data: *const u8,
    packet_bytes: c_int,
) {
    const F: &str = "netcode_server_send_packet";
    let body = |handle: &Handle<'_>| {
        // SAFETY: `payload` refuses NULL and sizes outside 1..=1200;
        // otherwise C promises `packet_bytes` readable bytes at
        // `packet_data`, not written by the send override while the slice
        // lives (this function's contract). The slice lives for this call
        // only.
        let Some(data) = (unsafe { boundary::payload(packet_data, packet_bytes, F) }) else {
            return;
        };
        let sent = handle.with(None, |state| {
            let slot = state.slot(client_index, F)?;
            state.host.send_packet(slot, data).ok()?;
            state.host.client_loopback(slot).then_some(slot)
        });
        if let Some(slot) = sent {
            dispatch::deliver_loopback(handle, slot);
        }
    };
    // SAFETY: `call` looks `server` up among the live servers before
    // reading it (`Handle::new`); C promises no other thread uses it
    // meanwhile (this function's # Safety).
    unsafe { call(F, server, (), body) }
}

/// The oldest payload received from slot `client_index`'s client, its
/// size written to `packet_bytes` and its sequence to `packet_sequence`
/// (when not NULL); NULL when none waits. Give it back with
/// `netcode_server_free_packet` on this server.
///
/// # Safety
///
/// `server`: any pointer (looked up among the live servers first); `packet_bytes` NULL (logged)
/// or writable; `packet_sequence` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_server_receive_packet(
    server: *mut netcode_server_t,
    client_index: c_int,
    packet_bytes: *mut c_int,
    packet_sequence: *mut u64,
) -> *mut u8 {
    const F: &str = "netcode_server_receive_packet";
    let body = |handle: &Handle<'_>| {
        if packet_bytes.is_null() {
            logging::error(format_args!("{F}: packet_bytes is NULL"));
            return std::ptr::null_mut();
        }
        if !packet_bytes.is_aligned() || !packet_sequence.is_aligned() {
            logging::error(format_args!(
                "{F}: packet_bytes or packet_sequence is misaligned"
            ));
            return std::ptr::null_mut();
        }
        let received = handle.with(None, |state| {
            let slot = state.slot(client_index, F)?;
            let packet = state.host.receive_packet(slot)?;
            let pointer = state.packets.hand_out(&state.allocator, packet.data());
            let received = (pointer, packet.len(), packet.sequence());
            state.host.free_packet(packet);
            Some(received)
        });
        let Some((pointer, len, sequence)) = received else {
            return std::ptr::null_mut();
        };
        if pointer.is_null() {
            return pointer;
        }
        // SAFETY: both pointers are aligned, `packet_bytes` is not NULL
        // (checked above), and C promises them writable.
        unsafe {
            packet_bytes.write(c_int::try_from(len).unwrap_or(0));
            if !packet_sequence.is_null() {
                packet_sequence.write(sequence);
            }
        }
        pointer
    };
    // SAFETY: `call` looks `server` up among the live servers before
    // reading it (`Handle::new`); C promises no other thread uses it
    // meanwhile (this function's # Safety).
    unsafe { call(F, server, std::ptr::null_mut(), body) }
}

/// Gives back a payload from `netcode_server_receive_packet` of this
/// server. NULL, a pointer freed already, and one this server did not hand
/// out are logged and left alone.
///
/// # Safety
///
/// `server`: any pointer (looked up among the live servers first). `packet` may be anything: it
/// is looked up among this server's payloads before it is used.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_server_free_packet(
    server: *mut netcode_server_t,
    packet: *mut c_void,
) {
    const F: &str = "netcode_server_free_packet";
    let body = |handle: &Handle<'_>| {
        let freed = handle.with(true, |state| {
            state.packets.take_back(&state.allocator, packet)
        });
        if !freed {
            logging::error(format_args!(
                "{F}: {packet:p} is not a packet this server handed out and has not had back (NULL, freed already, or another object's)"
            ));
        }
    };
    // SAFETY: `call` looks `server` up among the live servers before
    // reading it (`Handle::new`); C promises no other thread uses it
    // meanwhile (this function's # Safety).
    unsafe { call(F, server, (), body) }
}

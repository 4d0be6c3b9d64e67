//! The client API between create and destroy: connecting, the clock,
//! payloads in and out, state, loopback mode, custom transports.
//!
//! Every function takes the client pointer first; NULL, or a pointer that
//! is not a live client, is logged and the function returns its fallback
//! (0, NULL, nothing). Callbacks the call causes run before it returns.

use std::ffi::{c_int, c_void};

use netcode_std::proto::constants::{CONNECT_TOKEN_BYTES, MAX_PACKET_BYTES};
use netcode_std::{ConnectError, SendError};

use super::object::{State, netcode_client_t, query, with};
use crate::abi::{NETCODE_CLIENT_STATE_DISCONNECTED, NETCODE_MAX_CLIENTS, netcode_address_t};
use crate::address::{self, from_socket_addr, to_socket_addr};
use crate::boundary;
use crate::logging;

/// Starts connecting with `connect_token` (2048 bytes from the backend),
/// disconnecting first if connecting or connected. An unreadable token
/// moves the client to `NETCODE_CLIENT_STATE_INVALID_CONNECT_TOKEN`; a
/// token none of whose servers this client has a socket for is logged
/// and changes nothing.
///
/// # Safety
///
/// `client` as for every client call (see `netcode_client_destroy`);
/// `connect_token` NULL (logged) or 2048 readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_client_connect(
    client: *mut netcode_client_t,
    connect_token: *mut u8,
) {
    const FUNCTION: &str = "netcode_client_connect";
    let body = |s: &mut State| {
        // SAFETY: `array` refuses NULL; otherwise 2048 readable bytes (this
        // function's contract).
        let token = unsafe {
            boundary::array::<CONNECT_TOKEN_BYTES>(
                connect_token,
                "netcode_client_connect: the connect token",
            )
        };
        let Some(token) = token else {
            return;
        };
        match s.host.connect(token) {
            Ok(()) => {}
            Err(ConnectError::Token(e)) => {
                logging::error(format_args!("{FUNCTION}: invalid connect token: {e}"));
            }
            Err(e) => logging::error(format_args!("{FUNCTION}: {e}")),
        }
    };
    // SAFETY: `with` looks `client` up among the live clients before
    // reading it; C promises no other thread uses it meanwhile (this
    // function's # Safety).
    unsafe { with(client, FUNCTION, (), body) }
}

/// Advances the client to `time` (the caller's clock, in seconds): reads
/// what arrived, sends what is due, applies expiry and timeouts.
///
/// # Safety
///
/// `client` as for every client call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_client_update(client: *mut netcode_client_t, time: f64) {
    // SAFETY: `with` looks `client` up among the live clients before
    // reading it; C promises no other thread uses it meanwhile (this
    // function's # Safety).
    unsafe { with(client, "netcode_client_update", (), |s| s.host.update(time)) }
}

/// The sequence the next packet sent will carry.
///
/// # Safety
///
/// `client` as for every client call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_client_next_packet_sequence(client: *mut netcode_client_t) -> u64 {
    // SAFETY: `query` looks `client` up among the live clients before
    // reading it; C promises no other thread uses it meanwhile (this
    // function's # Safety).
    unsafe {
        query(client, "netcode_client_next_packet_sequence", 0, |s| {
            s.host.next_packet_sequence()
        })
    }
}

/// Sends a payload of 1 to 1200 bytes to the server (to the loopback
/// callback in loopback mode). A size out of range is logged and ignored;
/// while not connected the payload is silently dropped, as the reference.
///
/// # Safety
///
/// `client` as for every client call; `packet_data` NULL (logged) or
/// `packet_bytes` readable bytes, which the send override does not write
/// during this call (it is read while the override runs).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_client_send_packet(
    client: *mut netcode_client_t,
    packet_data: *const u8,
    packet_bytes: c_int,
) {
    const FUNCTION: &str = "netcode_client_send_packet";
    let body = |s: &mut State| {
        // SAFETY: `payload` refuses NULL and sizes outside 1..=1200;
        // otherwise `packet_bytes` readable bytes, not written by the send
        // override while the slice lives (this function's contract).
        let Some(data) = (unsafe { boundary::payload(packet_data, packet_bytes, FUNCTION) }) else {
            return;
        };
        match s.host.send_packet(data) {
            Ok(()) | Err(SendError::NotConnected) => {}
            Err(e) => logging::error(format_args!("{FUNCTION}: {e}")),
        }
    };
    // SAFETY: `with` looks `client` up among the live clients before
    // reading it; C promises no other thread uses it meanwhile (this
    // function's # Safety).
    unsafe { with(client, FUNCTION, (), body) }
}

/// The oldest received payload, in memory from the config's allocate
/// function (free it with `netcode_client_free_packet`), with its size and
/// sequence written through the two out-pointers; NULL when none waits.
/// NULL out-pointers are logged and the payload stays queued.
///
/// # Safety
///
/// `client` as for every client call; each out-pointer NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_client_receive_packet(
    client: *mut netcode_client_t,
    packet_bytes: *mut c_int,
    packet_sequence: *mut u64,
) -> *mut u8 {
    const FUNCTION: &str = "netcode_client_receive_packet";
    let body = |s: &mut State| {
        // Checked before a payload leaves the queue, so that a refused
        // call loses nothing.
        if packet_bytes.is_null() || packet_sequence.is_null() {
            logging::error(format_args!(
                "{FUNCTION}: packet_bytes or packet_sequence is NULL"
            ));
            return std::ptr::null_mut();
        }
        if !packet_bytes.is_aligned() || !packet_sequence.is_aligned() {
            logging::error(format_args!(
                "{FUNCTION}: packet_bytes {packet_bytes:p} or packet_sequence {packet_sequence:p} is misaligned"
            ));
            return std::ptr::null_mut();
        }
        let Some(packet) = s.host.receive_packet() else {
            return std::ptr::null_mut();
        };
        let pointer = s.packets.hand_out(&s.allocator, packet.data());
        let (bytes, sequence) = (packet.len(), packet.sequence());
        s.host.free_packet(packet);
        if pointer.is_null() {
            return pointer;
        }
        // Payloads are at most 1200 bytes.
        let bytes = c_int::try_from(bytes).unwrap_or(c_int::MAX);
        // SAFETY: `write` refuses NULL and misaligned pointers (checked
        // again); otherwise each is writable (this function's contract).
        let written = unsafe {
            boundary::write(packet_bytes, bytes, FUNCTION)
                && boundary::write(packet_sequence, sequence, FUNCTION)
        };
        if !written {
            s.packets.take_back(&s.allocator, pointer.cast());
            return std::ptr::null_mut();
        }
        pointer
    };
    // SAFETY: `query` looks `client` up among the live clients before
    // reading it; C promises no other thread uses it meanwhile (this
    // function's # Safety).
    unsafe { query(client, FUNCTION, std::ptr::null_mut(), body) }
}

/// Frees a payload from `netcode_client_receive_packet` of this client.
/// Anything else (NULL, freed already, another object's) is logged and
/// ignored.
///
/// # Safety
///
/// `client` as for every client call; `packet` is never dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_client_free_packet(
    client: *mut netcode_client_t,
    packet: *mut c_void,
) {
    const FUNCTION: &str = "netcode_client_free_packet";
    // SAFETY: `query` looks `client` up among the live clients before
    // reading it; C promises no other thread uses it meanwhile (this
    // function's # Safety).
    unsafe {
        query(client, FUNCTION, (), |s| {
            if !s.packets.take_back(&s.allocator, packet) {
                logging::error(format_args!(
                    "{FUNCTION}: {packet:p} is not a packet this client handed out (NULL, freed already, or another object's); ignored"
                ));
            }
        })
    }
}

/// Disconnects: when connecting or connected, sends disconnect packets,
/// then moves to `NETCODE_CLIENT_STATE_DISCONNECTED`.
///
/// # Safety
///
/// `client` as for every client call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_client_disconnect(client: *mut netcode_client_t) {
    // SAFETY: `with` looks `client` up among the live clients before
    // reading it; C promises no other thread uses it meanwhile (this
    // function's # Safety).
    unsafe {
        with(client, "netcode_client_disconnect", (), |s| {
            s.host.disconnect()
        })
    }
}

/// The state, a `NETCODE_CLIENT_STATE_*` value (DISCONNECTED for a pointer
/// that is not a live client).
///
/// # Safety
///
/// `client` as for every client call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_client_state(client: *mut netcode_client_t) -> c_int {
    // SAFETY: `query` looks `client` up among the live clients before
    // reading it; C promises no other thread uses it meanwhile (this
    // function's # Safety).
    unsafe {
        query(
            client,
            "netcode_client_state",
            NETCODE_CLIENT_STATE_DISCONNECTED,
            |s| c_int::from(s.host.state().code()),
        )
    }
}

/// The slot the server gave this client (0 until connected).
///
/// # Safety
///
/// `client` as for every client call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_client_index(client: *mut netcode_client_t) -> c_int {
    // SAFETY: `query` looks `client` up among the live clients before
    // reading it; C promises no other thread uses it meanwhile (this
    // function's # Safety).
    unsafe {
        query(client, "netcode_client_index", 0, |s| {
            c_int::try_from(s.host.client_index()).unwrap_or(c_int::MAX)
        })
    }
}

/// The server's slot count (0 until connected).
///
/// # Safety
///
/// `client` as for every client call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_client_max_clients(client: *mut netcode_client_t) -> c_int {
    // SAFETY: `query` looks `client` up among the live clients before
    // reading it; C promises no other thread uses it meanwhile (this
    // function's # Safety).
    unsafe {
        query(client, "netcode_client_max_clients", 0, |s| {
            c_int::try_from(s.host.max_clients()).unwrap_or(c_int::MAX)
        })
    }
}

/// Becomes the loopback client of an in-process server in slot
/// `client_index` of `max_clients`: connected at once, with no state
/// callback (as the reference). Refused (logged) without a
/// `send_loopback_packet_callback` in the config, while connecting or
/// connected, or for an index that is not below `max_clients`.
///
/// # Safety
///
/// `client` as for every client call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_client_connect_loopback(
    client: *mut netcode_client_t,
    client_index: c_int,
    max_clients: c_int,
) {
    const FUNCTION: &str = "netcode_client_connect_loopback";
    // SAFETY: `with` looks `client` up among the live clients before
    // reading it; C promises no other thread uses it meanwhile (this
    // function's # Safety).
    unsafe {
        with(client, FUNCTION, (), |s| {
            if s.callbacks.send_loopback.is_none() {
                logging::error(format_args!(
                    "{FUNCTION}: the config has no send_loopback_packet_callback; refused"
                ));
                return;
            }
            let (Ok(index), Ok(max)) =
                (usize::try_from(client_index), usize::try_from(max_clients))
            else {
                logging::error(format_args!(
                    "{FUNCTION}: client index {client_index} of {max_clients} is not a slot; refused"
                ));
                return;
            };
            if max_clients > NETCODE_MAX_CLIENTS {
                logging::error(format_args!(
                    "{FUNCTION}: {max_clients} clients is more than NETCODE_MAX_CLIENTS ({NETCODE_MAX_CLIENTS}); refused"
                ));
                return;
            }
            match s.host.connect_loopback(index, max) {
                // The reference sets the state without its callback.
                Ok(()) => while s.host.poll_event().is_some() {},
                Err(e) => logging::error(format_args!("{FUNCTION}: {e}; refused")),
            }
        })
    }
}

/// Leaves loopback mode for `NETCODE_CLIENT_STATE_DISCONNECTED` (with the
/// state callback). Does nothing unless in loopback mode.
///
/// # Safety
///
/// `client` as for every client call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_client_disconnect_loopback(client: *mut netcode_client_t) {
    // SAFETY: `with` looks `client` up among the live clients before
    // reading it; C promises no other thread uses it meanwhile (this
    // function's # Safety).
    unsafe {
        with(client, "netcode_client_disconnect_loopback", (), |s| {
            s.host.disconnect_loopback()
        })
    }
}

/// Handles one datagram from `from` that arrived some other way than the
/// client's socket (a custom transport), as if read in an update. The
/// datagram is decrypted in place, as the reference does: what the buffer
/// holds afterwards is unspecified. The replies it causes reach the send
/// override after the last use of the buffer, so the override may reuse
/// it. A datagram over 1300 bytes or a `from` of no valid type is logged
/// and dropped.
///
/// # Safety
///
/// `client` as for every client call; `from` NULL or a readable address;
/// `packet_data` NULL or `packet_bytes` writable bytes, which no callback
/// but the send override touches during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_client_process_packet(
    client: *mut netcode_client_t,
    from: *mut netcode_address_t,
    packet_data: *mut u8,
    packet_bytes: c_int,
) {
    const FUNCTION: &str = "netcode_client_process_packet";
    let body = |s: &mut State| {
        // SAFETY: `read` refuses NULL and a misaligned pointer; otherwise a
        // readable address (this function's contract), copied.
        let Some(from) = (unsafe { address::read(from, FUNCTION) }) else {
            return;
        };
        let Some(sender) = to_socket_addr(&from) else {
            logging::error(format_args!(
                "{FUNCTION}: the sender address has no valid type"
            ));
            return;
        };
        // SAFETY: NULL and sizes out of range are refused by `new`;
        // otherwise C promises `packet_bytes` writable bytes at
        // `packet_data`, which only the send override may use during the
        // call, and it is not called inside `work_on`: the host works on
        // the datagram inside a batch, which holds its replies until it
        // ends, after `work_on`.
        let datagram =
            unsafe { boundary::Lent::new(packet_data, packet_bytes, MAX_PACKET_BYTES, FUNCTION) };
        let Some(mut datagram) = datagram else {
            return;
        };
        let mut batch = s.host.batch();
        datagram.work_on(|datagram| batch.process_packet(sender, datagram));
    };
    // SAFETY: `with` looks `client` up among the live clients before
    // reading it; C promises no other thread uses it meanwhile (this
    // function's # Safety).
    unsafe { with(client, FUNCTION, (), body) }
}

/// 1 if the client is in loopback mode, 0 otherwise.
///
/// # Safety
///
/// `client` as for every client call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_client_loopback(client: *mut netcode_client_t) -> c_int {
    // SAFETY: `query` looks `client` up among the live clients before
    // reading it; C promises no other thread uses it meanwhile (this
    // function's # Safety).
    unsafe {
        query(client, "netcode_client_loopback", 0, |s| {
            c_int::from(s.host.loopback())
        })
    }
}

/// Delivers a payload (1 to 1200 bytes) the in-process server sent this
/// loopback client, with its sequence; queued for
/// `netcode_client_receive_packet`. Outside loopback mode, or for a size
/// out of range, it is logged and dropped.
///
/// # Safety
///
/// `client` as for every client call; `packet_data` NULL or
/// `packet_bytes` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_client_process_loopback_packet(
    client: *mut netcode_client_t,
    packet_data: *const u8,
    packet_bytes: c_int,
    packet_sequence: u64,
) {
    const FUNCTION: &str = "netcode_client_process_loopback_packet";
    let body = |s: &mut State| {
        // SAFETY: NULL or `packet_bytes` readable bytes (the caller's
        // promise).
        let Some(data) = (unsafe { boundary::payload(packet_data, packet_bytes, FUNCTION) }) else {
            return;
        };
        if let Err(e) = s.host.process_loopback_packet(data, packet_sequence) {
            logging::error(format_args!("{FUNCTION}: {e}; dropped"));
        }
    };
    // SAFETY: `with` looks `client` up among the live clients before
    // reading it; C promises no other thread uses it meanwhile (this
    // function's # Safety).
    unsafe { with(client, FUNCTION, (), body) }
}

/// The port of the first address's socket (the bound one when created
/// with port 0); 0 in override mode, as the reference.
///
/// # Safety
///
/// `client` as for every client call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_client_get_port(client: *mut netcode_client_t) -> u16 {
    // SAFETY: `query` looks `client` up among the live clients before
    // reading it; C promises no other thread uses it meanwhile (this
    // function's # Safety).
    unsafe {
        query(client, "netcode_client_get_port", 0, |s| {
            if s.override_mode { 0 } else { s.host.port() }
        })
    }
}

/// The address of the server being tried or connected to (zeroed, type
/// NONE, when there is none), in the client object: valid until the next
/// call on this client. NULL for a pointer that is not a live client.
///
/// # Safety
///
/// `client` as for every client call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_client_server_address(
    client: *mut netcode_client_t,
) -> *mut netcode_address_t {
    // SAFETY: `query` looks `client` up among the live clients before
    // reading it; C promises no other thread uses it meanwhile (this
    // function's # Safety).
    unsafe {
        query(
            client,
            "netcode_client_server_address",
            std::ptr::null_mut(),
            |s| {
                let address = s.host.server_address();
                let address = address.map_or(netcode_address_t::ZERO, from_socket_addr);
                s.server_address.set(0, address);
                s.server_address.at(0).unwrap_or(std::ptr::null_mut())
            },
        )
    }
}

//! The config's callbacks, called after the calls that give them
//! something to say: `connect_disconnect_callback` for each connect and
//! disconnect the host reported (drained from its event queue, oldest
//! first), and `send_loopback_packet_callback` for each payload sent to a
//! loopback client.
//!
//! Each callback runs with the state released (see `object`), so it may
//! call the server, as in the reference: a nested call delivers its own
//! events, and the outer loop carries on with what is left. During a
//! disconnect callback the slot still reads as it was (connected, its
//! client id, address, user data and reason), as the reference's does:
//! it calls before clearing the slot.

use std::ffi::c_int;

use netcode_std::ServerEvent;

use super::object::Handle;
use super::state::Departed;

/// A callback to make, taken out of the state.
enum Call {
    Connected(usize),
    Disconnected(Departed),
}

/// Calls `connect_disconnect_callback` for every event the host has
/// queued, oldest first.
pub(crate) fn deliver_events(handle: &Handle<'_>) {
    loop {
        // One entry into the state per event, and one to find none.
        let next = handle.with(None, |state| {
            if state.calls.held_back() {
                return None;
            }
            let Some(event) = state.host.poll_event() else {
                state.stopped();
                return None;
            };
            let call = match event {
                ServerEvent::ClientConnected {
                    client_index,
                    client_id,
                    ..
                } => {
                    state.arrived(client_index, client_id);
                    Call::Connected(client_index)
                }
                ServerEvent::ClientDisconnected {
                    client_index,
                    client_id,
                    address,
                    reason,
                } => {
                    let departed = Departed {
                        index: client_index,
                        client_id,
                        loopback: address.is_none(),
                        reason,
                    };
                    state.leaving(departed);
                    Call::Disconnected(departed)
                }
            };
            Some((call, state.callbacks))
        });
        let Some((call, callbacks)) = next else {
            return;
        };
        let (index, connected) = match &call {
            Call::Connected(index) => (*index, 1),
            Call::Disconnected(departed) => (departed.index, 0),
        };
        if let (Some(callback), Ok(index)) = (callbacks.connect_disconnect, c_int::try_from(index))
        {
            handle.callback(|| {
                // SAFETY: the config's callback, which C promises takes its
                // context, a slot index and 1 or 0; nothing of ours is
                // borrowed while it runs, so it may call the server.
                unsafe { callback(callbacks.context, index, connected) }
            });
        }
        if let Call::Disconnected(departed) = call {
            handle.with((), |state| state.left(&departed));
        }
    }
}

/// Calls `send_loopback_packet_callback` for every payload the host holds
/// for the loopback client of slot `index`.
pub(crate) fn deliver_loopback(handle: &Handle<'_>, index: usize) {
    let Ok(slot) = c_int::try_from(index) else {
        return;
    };
    loop {
        let next = handle.with(None, |state| {
            if state.calls.held_back() {
                return None;
            }
            let packet = state.host.poll_loopback_packet(index)?;
            Some((packet, state.callbacks))
        });
        let Some((packet, callbacks)) = next else {
            return;
        };
        if let (Some(callback), Ok(bytes)) =
            (callbacks.send_loopback, c_int::try_from(packet.len()))
        {
            handle.callback(|| {
                // SAFETY: the config's callback, which C promises takes its
                // context, a slot index, `bytes` bytes to read and a
                // sequence; the payload is ours and outlives the call, and
                // nothing of ours is borrowed while it runs.
                unsafe {
                    callback(
                        callbacks.context,
                        slot,
                        packet.data().as_ptr(),
                        bytes,
                        packet.sequence(),
                    )
                }
            });
        }
        handle.with((), |state| state.host.free_packet(packet));
    }
}

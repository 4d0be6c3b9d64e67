//! The client object, `struct netcode_client_t`: its state, and how each
//! call reaches it and delivers the callbacks it caused.

use std::ffi::{c_int, c_void};

use netcode_std::Client;

use crate::abi::{SendLoopbackPacketCallback, StateChangeCallback, netcode_address_t};
use crate::allocator::Allocator;
use crate::boundary::guard;
use crate::logging;
use crate::objects::{self, Kind, Object};
use crate::packets::{Exposed, Packets};
use crate::socket::HostSocket;

/// `struct netcode_client_t`, opaque to C: made by `netcode_client_create`
/// in memory from the config's allocate function, freed by
/// `netcode_client_destroy`. A `netcode_client_t *` C holds is the
/// object's handle (`objects`), never its memory, and is never
/// dereferenced.
#[repr(transparent)]
#[allow(non_camel_case_types)]
pub struct netcode_client_t(Object<State>);

/// What a client object holds.
pub(super) struct State {
    pub(super) host: Client<HostSocket>,
    pub(super) allocator: Allocator,
    /// Payloads handed to C and not yet freed.
    pub(super) packets: Packets,
    pub(super) callbacks: Callbacks,
    /// Override mode: no socket, and port 0 as in the reference.
    pub(super) override_mode: bool,
    /// What `netcode_client_server_address` points to, kept out of the
    /// state's own memory (see [`Exposed`]).
    pub(super) server_address: Exposed<netcode_address_t>,
}

/// The config's callbacks that report to C, with their context.
#[derive(Debug, Clone, Copy)]
pub(super) struct Callbacks {
    pub(super) context: *mut c_void,
    pub(super) state_change: Option<StateChangeCallback>,
    pub(super) send_loopback: Option<SendLoopbackPacketCallback>,
}

impl Kind for State {
    const NAME: &'static str = "client";
}

/// A callback for C, taken out of the client so that it runs outside it.
enum Delivery {
    /// A state change: previous and current state.
    State(StateChangeCallback, c_int, c_int),
    /// A payload for the in-process server, from this loopback client in
    /// slot `index`.
    Loopback(
        SendLoopbackPacketCallback,
        c_int,
        netcode_std::ReceivedPacket,
    ),
}

impl State {
    /// The next callback due, if any, with the callbacks' context: state
    /// changes first, then loopback payloads. Without a callback to call,
    /// they are dropped.
    fn next_delivery(&mut self) -> Option<(Delivery, *mut c_void)> {
        let delivery = self.next()?;
        Some((delivery, self.callbacks.context))
    }

    /// The next callback due, if any.
    fn next(&mut self) -> Option<Delivery> {
        while let Some(netcode_std::ClientEvent::StateChanged { from, to }) = self.host.poll_event()
        {
            if let Some(callback) = self.callbacks.state_change {
                return Some(Delivery::State(
                    callback,
                    c_int::from(from.code()),
                    c_int::from(to.code()),
                ));
            }
        }
        while let Some(packet) = self.host.poll_loopback_packet() {
            let index = c_int::try_from(self.host.client_index()).unwrap_or(c_int::MAX);
            match self.callbacks.send_loopback {
                Some(callback) => return Some(Delivery::Loopback(callback, index, packet)),
                None => self.host.free_packet(packet),
            }
        }
        None
    }
}

/// The client handle `client` as the registry's pointer type.
pub(super) fn pointer(client: *mut netcode_client_t) -> *const Object<State> {
    // A handle of an `Object<State>`, never dereferenced.
    client.cast_const().cast::<Object<State>>()
}

/// Runs `body` on the live client at `client` inside the boundary guard,
/// then calls the callbacks it caused; `fallback` (logged) when `client`
/// is not a live client or the call comes from inside one of its own
/// override callbacks.
///
/// # Safety
///
/// `client` may be any pointer: it is looked up among the live clients
/// before anything is read through it. C's contract (see
/// [`objects::live`]): no other thread uses or destroys it meanwhile.
pub(super) unsafe fn with<R: Copy>(
    client: *mut netcode_client_t,
    function: &'static str,
    fallback: R,
    body: impl FnOnce(&mut State) -> R,
) -> R {
    guard(function, fallback, || {
        let body = |state: &mut State| {
            let result = body(state);
            (result, state.host.delivery_waiting())
        };
        // SAFETY: as for this function (its # Safety).
        let Some(((result, due), serial)) = (unsafe { enter(client, function, body) }) else {
            return fallback;
        };
        if due {
            // SAFETY: `deliver` looks the client up again (by its serial
            // number) before each use; `enter` returned, so nothing of the
            // client is borrowed (a callback may destroy it). The
            // threading contract as above.
            unsafe { deliver(client, serial, function) };
        }
        result
    })
}

/// [`with`] for calls that change nothing C is called back for (queries,
/// receive and free): no delivery after.
///
/// # Safety
///
/// As for [`with`].
pub(super) unsafe fn query<R: Copy>(
    client: *mut netcode_client_t,
    function: &'static str,
    fallback: R,
    body: impl FnOnce(&mut State) -> R,
) -> R {
    guard(function, fallback, || {
        // SAFETY: as for this function (its # Safety).
        let entered = unsafe { enter(client, function, body) };
        entered.map_or(fallback, |(result, _)| result)
    })
}

/// Runs `body` on the live client at `client`: its result and the
/// client's serial number, or `None` (logged) when `client` is not a live
/// client or the call comes from inside one of its own override
/// callbacks.
///
/// # Safety
///
/// As for [`with`].
unsafe fn enter<R>(
    client: *mut netcode_client_t,
    function: &'static str,
    body: impl FnOnce(&mut State) -> R,
) -> Option<(R, u64)> {
    // SAFETY: `live` looks `client` up among the live clients before
    // reading it; C promises no other thread uses it meanwhile.
    let found = unsafe { objects::live(pointer(client), function) }?;
    let result = found.object.enter(function, body)?;
    Some((result, found.serial))
}

/// Calls the callbacks due, one at a time, each outside the client (it may
/// call the client back, or destroy it: the client, of serial number
/// `serial`, is looked up again before each use, quietly).
///
/// # Safety
///
/// As for [`with`].
pub(super) unsafe fn deliver(client: *mut netcode_client_t, serial: u64, function: &str) {
    loop {
        // SAFETY: looked up again each time (a callback may have destroyed
        // it, or another object may have its address now: the serial
        // number tells); C promises no other thread uses it meanwhile.
        let Some(object) = (unsafe { objects::again(pointer(client), serial) }) else {
            return;
        };
        let Some(Some((delivery, context))) = object.enter(function, State::next_delivery) else {
            return;
        };
        match delivery {
            Delivery::State(callback, previous, current) => {
                logging::debug(format_args!(
                    "{function}: state change callback ({previous} -> {current})"
                ));
                // SAFETY: the config's state change callback, which C
                // promises takes its context and two states. Nothing of the
                // client is borrowed while it runs (`enter` returned), so it
                // may call the client or destroy it.
                unsafe { callback(context, previous, current) };
            }
            Delivery::Loopback(callback, index, packet) => {
                let bytes = c_int::try_from(packet.len()).unwrap_or(c_int::MAX);
                // SAFETY: the config's loopback callback, which C promises
                // takes its context, an index, `bytes` readable bytes and a
                // sequence; the packet is ours (owned here, outside the
                // client) and outlives the call; nothing of the client is
                // borrowed while it runs.
                unsafe { callback(context, index, packet.as_ptr(), bytes, packet.sequence()) };
                // SAFETY: looked up again after the callback, as above.
                if let Some(object) = unsafe { objects::again(pointer(client), serial) } {
                    let _ = object.enter(function, |s| s.host.free_packet(packet));
                }
            }
        }
    }
}

//! What a server object holds besides its flags: the host, the config's
//! allocator and callbacks, the payloads handed to C, and the per-slot
//! views C reads through pointers (addresses and user data), with the
//! clients whose disconnect callback is under way, which the accessors
//! still report as the reference does (it calls back before clearing the
//! slot; the host reports after), and, while a stop's callbacks run, the
//! slots the server had (the reference marks itself stopped after them).

use std::ffi::{c_int, c_void};
use std::mem::offset_of;

use netcode_std::{DisconnectReason, Server, USER_DATA_BYTES};

use crate::abi::{
    ConnectDisconnectCallback, NETCODE_MAX_CLIENTS, SendLoopbackPacketCallback, netcode_address_t,
};
use crate::address::from_socket_addr;
use crate::allocator::Allocator;
use crate::logging;
use crate::packets::{Exposed, Packets};
use crate::socket::HostSocket;

/// Slots a C server opens at most (`NETCODE_MAX_CLIENTS`).
pub(crate) const MAX_SLOTS: usize = NETCODE_MAX_CLIENTS as usize;

/// A server object's state.
pub(crate) struct ServerState {
    /// The host: netcode-std's server on the object's sockets.
    pub(crate) host: Box<Server<HostSocket>>,
    /// The config's allocator: the object and received payloads.
    pub(crate) allocator: Allocator,
    /// The config's callbacks and their context.
    pub(crate) callbacks: Callbacks,
    /// Received payloads handed to C and not yet freed.
    pub(crate) packets: Packets,
    /// Whether datagrams go through the send and receive overrides.
    pub(crate) override_mode: bool,
    /// Per slot, what `client_address` and `client_user_data` point to.
    /// Kept out of the state's own memory: C may read them from a send or
    /// receive override while a call holds the state (see [`Exposed`]).
    views: Exposed<SlotView>,
    /// Clients whose disconnect callback is under way, innermost last.
    departed: Vec<Departed>,
    /// While the disconnect callbacks of a stop are delivered: the slots
    /// the server had. It reads as running with them until then, as the
    /// reference's stop calls back before it marks the server stopped.
    stopping: Option<usize>,
    /// The calls under way (see `object`).
    pub(crate) calls: Calls,
}

/// What a call knows of the calls under way on its server: kept in the
/// state, read and changed by the server's handles (see `object`).
#[derive(Debug, Default)]
pub(crate) struct Calls {
    /// Callbacks of the application under way.
    pub(crate) depth: u32,
    /// A destroy was asked for.
    pub(crate) doomed: bool,
    /// The destroy is being carried out.
    pub(crate) destroying: bool,
}

impl Calls {
    /// Whether callbacks are held back: a destroy was asked for and waits
    /// for the outermost call to return, which then delivers what is left
    /// (as the reference's destroy does, through its stop).
    pub(crate) fn held_back(&self) -> bool {
        self.doomed && !self.destroying
    }
}

/// The connect, disconnect and loopback callbacks of a config.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Callbacks {
    /// Their first argument.
    pub(crate) context: *mut c_void,
    /// `connect_disconnect_callback`.
    pub(crate) connect_disconnect: Option<ConnectDisconnectCallback>,
    /// `send_loopback_packet_callback`.
    pub(crate) send_loopback: Option<SendLoopbackPacketCallback>,
}

/// The slot data C reads through pointers into the object.
#[derive(Clone, Copy)]
struct SlotView {
    address: netcode_address_t,
    user_data: [u8; USER_DATA_BYTES],
}

impl SlotView {
    const ZERO: Self = Self {
        address: netcode_address_t::ZERO,
        user_data: [0; USER_DATA_BYTES],
    };
}

/// A client whose disconnect callback is under way: the slot as C still
/// sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Departed {
    pub(crate) index: usize,
    pub(crate) client_id: u64,
    pub(crate) loopback: bool,
    pub(crate) reason: DisconnectReason,
}

impl ServerState {
    /// The state of a new object around `host`.
    pub(crate) fn new(
        host: Server<HostSocket>,
        allocator: Allocator,
        callbacks: Callbacks,
        override_mode: bool,
    ) -> Self {
        Self {
            host: Box::new(host),
            allocator,
            callbacks,
            packets: Packets::default(),
            override_mode,
            views: Exposed::new(SlotView::ZERO, MAX_SLOTS),
            departed: Vec::new(),
            stopping: None,
            calls: Calls::default(),
        }
    }

    /// Stops the host; until its disconnect callbacks are delivered
    /// ([`stopped`](Self::stopped)) the server reads as running with its
    /// slots.
    pub(crate) fn stop(&mut self) {
        if self.host.running() {
            self.stopping = Some(self.host.max_clients());
        }
        self.host.stop();
    }

    /// Every callback of the last stop was delivered.
    pub(crate) fn stopped(&mut self) {
        self.stopping = None;
    }

    /// Whether [`dispatch::deliver_events`](super::dispatch::deliver_events)
    /// has anything to do: an event waits, or a stop is still to be
    /// settled.
    pub(crate) fn delivery_due(&self) -> bool {
        self.host.event_waiting() || self.stopping.is_some()
    }

    /// Whether the server is running, as C sees it.
    pub(crate) fn running(&self) -> bool {
        self.host.running() || self.stopping.is_some()
    }

    /// The open slots, as C sees them.
    pub(crate) fn max_clients(&self) -> usize {
        match self.stopping {
            Some(slots) if !self.host.running() => slots,
            _ => self.host.max_clients(),
        }
    }

    /// `index` as a slot of the running server; `None` when stopped
    /// (silently, as the reference), or logged, naming `function`, when
    /// negative or past the last slot.
    pub(crate) fn slot(&self, index: c_int, function: &str) -> Option<usize> {
        let max_clients = self.max_clients();
        match usize::try_from(index) {
            Ok(slot) if slot < max_clients => Some(slot),
            Ok(_) if !self.running() => None,
            _ => {
                logging::error(format_args!(
                    "{function}: client index {index} is not a slot of this server (0..{max_clients})"
                ));
                None
            }
        }
    }

    /// The client of slot `index` whose disconnect callback is under way.
    pub(crate) fn departed(&self, index: usize) -> Option<&Departed> {
        self.departed.iter().rev().find(|d| d.index == index)
    }

    /// Clients whose disconnect callback is under way.
    pub(crate) fn departed_count(&self) -> usize {
        self.departed.len()
    }

    /// Whether slot `index` holds a client, as C sees it.
    pub(crate) fn connected(&self, index: usize) -> bool {
        self.departed(index).is_some() || self.host.client_connected(index)
    }

    /// A client took slot `index`: its address and user data are copied
    /// for C (zeroed when the slot no longer holds that client).
    pub(crate) fn arrived(&mut self, index: usize, client_id: u64) {
        let view = match self.host.client_id(index) {
            Some(id) if id == client_id => self.host_view(index),
            _ => SlotView::ZERO,
        };
        self.views.set(index, view);
    }

    /// A client left: its slot reads as it was until [`left`](Self::left).
    pub(crate) fn leaving(&mut self, departed: Departed) {
        self.departed.push(departed);
    }

    /// The disconnect callback for `departed` returned: the slot reads as
    /// the host says, and its view is zeroed as the reference's reset does.
    pub(crate) fn left(&mut self, departed: &Departed) {
        if let Some(position) = self
            .departed
            .iter()
            .rposition(|d| d.index == departed.index && d.client_id == departed.client_id)
        {
            self.departed.remove(position);
        }
        if self.departed(departed.index).is_none() {
            self.views.set(departed.index, SlotView::ZERO);
        }
    }

    /// Slot `index` as the host has it now (zeroed where it holds nothing).
    fn host_view(&self, index: usize) -> SlotView {
        SlotView {
            address: self
                .host
                .client_address(index)
                .map_or(netcode_address_t::ZERO, from_socket_addr),
            user_data: self
                .host
                .client_user_data(index)
                .copied()
                .unwrap_or([0; USER_DATA_BYTES]),
        }
    }

    /// Where C reads the view of slot `index`, brought up to date with the
    /// host unless its client's disconnect callback is under way.
    fn view(&mut self, index: usize) -> Option<*mut SlotView> {
        let pointer = self.views.at(index)?;
        if self.departed(index).is_none() {
            self.views.set(index, self.host_view(index));
        }
        Some(pointer)
    }

    /// Where C reads the address of slot `index`'s client (zeroed for a
    /// free or loopback slot).
    pub(crate) fn address_pointer(&mut self, index: usize) -> *mut netcode_address_t {
        self.view(index).map_or(std::ptr::null_mut(), |view| {
            view.wrapping_byte_add(offset_of!(SlotView, address))
                .cast::<netcode_address_t>()
        })
    }

    /// Where C reads the user data of slot `index`'s client (zeroed for a
    /// free slot).
    pub(crate) fn user_data_pointer(&mut self, index: usize) -> *mut c_void {
        self.view(index).map_or(std::ptr::null_mut(), |view| {
            view.wrapping_byte_add(offset_of!(SlotView, user_data))
                .cast::<c_void>()
        })
    }
}

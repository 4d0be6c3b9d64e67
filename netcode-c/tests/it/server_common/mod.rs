//! What the server tests share: a [`World`] that every callback of a C
//! server config reaches through its context (the events it reported,
//! what the accessors said inside the callbacks, loopback payloads, an
//! in-memory network for override mode, and allocator counters), the
//! config that points every callback at it, and small wrappers over the
//! extern functions.
#![allow(dead_code, unreachable_pub)]

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::ffi::{CString, c_int, c_void};
use std::net::SocketAddr;

use netcode::*;
use test_fixtures::{PRIVATE_KEY, PROTOCOL_ID};

use crate::globals::create_alone;

// The in-memory network, shared with the client tests.
pub use crate::common::{Network, NetworkSocket};

unsafe extern "C" {
    fn malloc(size: usize) -> *mut c_void;
    fn free(pointer: *mut c_void);
}

/// A test's hook run inside each connect/disconnect callback: the world,
/// the slot, and 1 (connected) or 0.
pub type EventHook = fn(&World, c_int, c_int);

/// What a connect/disconnect callback saw of its slot, through the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    pub index: c_int,
    pub connected: c_int,
    pub slot_connected: c_int,
    pub client_id: u64,
    pub reason: c_int,
    pub loopback: c_int,
    pub num_connected: c_int,
    pub user_data_first: u8,
    pub running: c_int,
    pub max_clients: c_int,
    /// The type of the slot's address (NONE when NULL or zeroed).
    pub address_type: u8,
}

/// Everything the callbacks of one server reach.
pub struct World {
    /// The server, once made (callbacks query it).
    pub server: Cell<*mut netcode_server_t>,
    /// Each connect (1) and disconnect (0) callback, with its slot.
    pub events: RefCell<Vec<(c_int, c_int)>>,
    /// What the API said of the slot inside each of those callbacks.
    pub seen: RefCell<Vec<Seen>>,
    /// Run inside each connect/disconnect callback after it is recorded.
    pub on_event: Cell<Option<EventHook>>,
    /// Payloads the server sent to loopback clients.
    pub loopback: RefCell<VecDeque<(c_int, Vec<u8>, u64)>>,
    /// Override mode's network, and the server's address on it.
    pub network: Network,
    pub address: Cell<Option<SocketAddr>>,
    /// Datagrams the send override was given: destination and size.
    pub sent: RefCell<Vec<(SocketAddr, usize)>>,
    /// Whether the receive override reads the network (else returns 0).
    pub receive_enabled: Cell<bool>,
    /// Run inside each receive override call.
    pub on_receive: Cell<Option<fn(&World)>>,
    /// Allocator counters, and whether the next allocations fail.
    pub allocations: Cell<usize>,
    pub frees: Cell<usize>,
    pub fail_allocations: Cell<bool>,
    /// Keep the blocks freed from now on until the world is dropped,
    /// rather than give them back to malloc: a test that passes a
    /// destroyed server's pointer again sets it, so that no object of a
    /// test on another thread can be made at that address meanwhile.
    pub keep_freed: Cell<bool>,
    kept: RefCell<Vec<usize>>,
    /// A buffer of the test's (and its length) that the send override
    /// fills with 0xEE after it has taken each datagram: the buffer a test
    /// is handing to `netcode_server_process_packet`, reused meanwhile.
    pub scribble: Cell<(*mut u8, usize)>,
}

impl World {
    /// A world, boxed so that its address (the callbacks' context) is fixed.
    pub fn new() -> Box<Self> {
        Box::new(Self {
            server: Cell::new(std::ptr::null_mut()),
            events: RefCell::default(),
            seen: RefCell::default(),
            on_event: Cell::new(None),
            loopback: RefCell::default(),
            network: Network::default(),
            address: Cell::new(None),
            sent: RefCell::default(),
            receive_enabled: Cell::new(true),
            on_receive: Cell::new(None),
            allocations: Cell::new(0),
            frees: Cell::new(0),
            fail_allocations: Cell::new(false),
            keep_freed: Cell::new(false),
            scribble: Cell::new((std::ptr::null_mut(), 0)),
            kept: RefCell::default(),
        })
    }

    /// A server config with the fixtures' protocol id and key, this world's
    /// counting allocator, and its connect/disconnect and loopback
    /// callbacks.
    pub fn config(&self) -> netcode_server_config_t {
        let mut config = netcode_server_config_t::default();
        // SAFETY: a writable config.
        unsafe { netcode_default_server_config_v2(&mut config) };
        config.protocol_id = PROTOCOL_ID;
        config.private_key = PRIVATE_KEY;
        config.allocator_context = self.context();
        config.allocate_function = Some(counting_allocate);
        config.free_function = Some(counting_free);
        config.callback_context = self.context();
        config.connect_disconnect_callback = Some(record_event);
        config.send_loopback_packet_callback = Some(record_loopback);
        config
    }

    /// [`config`](Self::config) in override mode: the send and receive
    /// overrides carry datagrams through this world's network.
    pub fn override_config(&self) -> netcode_server_config_t {
        let mut config = self.config();
        config.override_send_and_receive = 1;
        config.send_packet_override = Some(network_send);
        config.receive_packet_override = Some(network_receive);
        config
    }

    fn context(&self) -> *mut c_void {
        std::ptr::from_ref(self).cast_mut().cast()
    }

    /// The events so far.
    pub fn events(&self) -> Vec<(c_int, c_int)> {
        self.events.borrow().clone()
    }

    /// Whether every allocation was freed (and there was at least one).
    pub fn balanced(&self) -> bool {
        self.allocations.get() > 0 && self.allocations.get() == self.frees.get()
    }

    /// Asserts that every allocation was freed (and there was at least
    /// one).
    #[track_caller]
    pub fn assert_balanced(&self) {
        assert!(
            self.balanced(),
            "allocations {} frees {}",
            self.allocations.get(),
            self.frees.get()
        );
    }

    /// A socket of this world's network at `local`, for a netcode-std
    /// client.
    pub fn socket(&self, local: SocketAddr) -> NetworkSocket {
        NetworkSocket {
            network: self.network.clone(),
            local,
        }
    }

    /// Takes the oldest datagram waiting for `to`.
    pub fn take_datagram(&self, to: SocketAddr) -> Option<(Vec<u8>, SocketAddr)> {
        self.network.borrow_mut().get_mut(&to)?.pop_front()
    }
}

impl Drop for World {
    fn drop(&mut self) {
        for pointer in self.kept.get_mut().drain(..) {
            // SAFETY: a block from malloc that `counting_free` kept instead
            // of freeing.
            unsafe { free(pointer as *mut c_void) };
        }
    }
}

/// # Safety
///
/// `context` is a live [`World`].
unsafe fn world<'a>(context: *mut c_void) -> &'a World {
    // SAFETY: every config of these tests passes a boxed World that
    // outlives its server.
    unsafe { &*context.cast::<World>() }
}

/// The counting allocate function: malloc, counted; NULL while
/// `fail_allocations` is set.
pub unsafe extern "C" fn counting_allocate(context: *mut c_void, bytes: usize) -> *mut c_void {
    // SAFETY: the context is the World (see `World::config`).
    let world = unsafe { world(context) };
    if world.fail_allocations.get() {
        return std::ptr::null_mut();
    }
    world.allocations.set(world.allocations.get() + 1);
    // SAFETY: malloc takes any size.
    unsafe { malloc(bytes) }
}

/// The counting free function (which keeps the block while
/// `keep_freed` is set).
pub unsafe extern "C" fn counting_free(context: *mut c_void, pointer: *mut c_void) {
    // SAFETY: the context is the World.
    let world = unsafe { world(context) };
    world.frees.set(world.frees.get() + 1);
    if world.keep_freed.get() {
        world.kept.borrow_mut().push(pointer as usize);
        return;
    }
    // SAFETY: the library frees what counting_allocate returned, once.
    unsafe { free(pointer) }
}

/// Records a connect/disconnect and what the API says of its slot now.
unsafe extern "C" fn record_event(context: *mut c_void, index: c_int, connected: c_int) {
    // SAFETY: the context is the World.
    let world = unsafe { world(context) };
    world.events.borrow_mut().push((index, connected));
    let server = world.server.get();
    if !server.is_null() {
        // SAFETY: the live server this world belongs to; the library lets
        // its callbacks call it.
        let seen = unsafe {
            let user_data = netcode_server_client_user_data(server, index).cast::<u8>();
            let address = netcode_server_client_address(server, index);
            Seen {
                running: netcode_server_running(server),
                max_clients: netcode_server_max_clients(server),
                address_type: if address.is_null() {
                    0
                } else {
                    (*address).type_
                },
                index,
                connected,
                slot_connected: netcode_server_client_connected(server, index),
                client_id: netcode_server_client_id(server, index),
                reason: netcode_server_client_disconnect_reason(server, index),
                loopback: netcode_server_client_loopback(server, index),
                num_connected: netcode_server_num_connected_clients(server),
                user_data_first: if user_data.is_null() { 0 } else { *user_data },
            }
        };
        world.seen.borrow_mut().push(seen);
    }
    if let Some(hook) = world.on_event.get() {
        hook(world, index, connected);
    }
}

/// Records a payload for a loopback client.
unsafe extern "C" fn record_loopback(
    context: *mut c_void,
    index: c_int,
    data: *const u8,
    bytes: c_int,
    sequence: u64,
) {
    // SAFETY: the context is the World.
    let world = unsafe { world(context) };
    // SAFETY: the library passes `bytes` readable bytes.
    let data = unsafe { std::slice::from_raw_parts(data, bytes as usize) }.to_vec();
    world
        .loopback
        .borrow_mut()
        .push_back((index, data, sequence));
}

/// Override mode's send: into the network, from the server's address.
unsafe extern "C" fn network_send(
    context: *mut c_void,
    to: *mut netcode_address_t,
    data: *const u8,
    bytes: c_int,
) {
    // SAFETY: the context is the World; the library passes a readable
    // address and `bytes` readable bytes.
    let (world, to, data) = unsafe {
        (
            world(context),
            address_of(&*to),
            std::slice::from_raw_parts(data, bytes as usize),
        )
    };
    let from = world.address.get().expect("the server's address is set");
    world.sent.borrow_mut().push((to, data.len()));
    world
        .network
        .borrow_mut()
        .entry(to)
        .or_default()
        .push_back((data.to_vec(), from));
    let (buffer, len) = world.scribble.get();
    if !buffer.is_null() {
        // SAFETY: the test's buffer of `len` bytes, which it handed to the
        // library for this call only (`scribble`'s contract).
        unsafe { buffer.write_bytes(0xEE, len) };
    }
}

/// Override mode's receive: the oldest datagram for the server's address.
unsafe extern "C" fn network_receive(
    context: *mut c_void,
    from: *mut netcode_address_t,
    buffer: *mut u8,
    max: c_int,
) -> c_int {
    // SAFETY: the context is the World.
    let world = unsafe { world(context) };
    if let Some(hook) = world.on_receive.get() {
        hook(world);
    }
    if !world.receive_enabled.get() {
        return 0;
    }
    let Some(to) = world.address.get() else {
        return 0;
    };
    let Some((datagram, sender)) = world.take_datagram(to) else {
        return 0;
    };
    assert!(datagram.len() <= max as usize);
    // SAFETY: the library passes a writable address and `max` writable
    // bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(datagram.as_ptr(), buffer, datagram.len());
        from.write(c_address(sender));
    }
    datagram.len() as c_int
}

/// The C address of `address`, through `netcode_parse_address`.
pub fn c_address(address: SocketAddr) -> netcode_address_t {
    let text = CString::new(address.to_string()).unwrap();
    let mut parsed = netcode_address_t::default();
    // SAFETY: a C string and a writable address.
    let ok = unsafe { netcode_parse_address(text.as_ptr(), &mut parsed) };
    assert_eq!(ok, NETCODE_OK, "parse {address}");
    parsed
}

/// The Rust address of a C address (IPv4 or IPv6).
pub fn address_of(address: &netcode_address_t) -> SocketAddr {
    let mut buffer = [0 as std::ffi::c_char; 256];
    // SAFETY: a readable address and a buffer of the size the function
    // writes at most.
    let text = unsafe {
        let text =
            netcode_address_to_string(std::ptr::from_ref(address).cast_mut(), buffer.as_mut_ptr());
        std::ffi::CStr::from_ptr(text)
    };
    let text = text.to_str().unwrap();
    netcode_std::parse_address(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

thread_local! {
    /// `netcode_server_create_error` after this thread's last create.
    static CREATE_ERROR: Cell<c_int> = const { Cell::new(-1) };
}

/// Runs `create` and records `netcode_server_create_error` after it, with
/// no other create of this binary in between (a global, as the
/// reference's: see `globals`).
fn creating(create: impl FnOnce() -> *mut netcode_server_t) -> *mut netcode_server_t {
    create_alone(|| {
        let server = create();
        CREATE_ERROR.with(|e| e.set(netcode_server_create_error()));
        server
    })
}

/// `netcode_server_create_error` right after this thread's last
/// [`create`] or [`create_dual`].
pub fn create_error() -> c_int {
    CREATE_ERROR.with(Cell::get)
}

/// `netcode_server_create` on `address` (a Rust string).
pub fn create(address: &str, config: &netcode_server_config_t) -> *mut netcode_server_t {
    let address = CString::new(address).unwrap();
    // SAFETY: a C string and a readable config.
    creating(|| unsafe { netcode_server_create_v2(address.as_ptr(), config, 0.0) })
}

/// `netcode_server_create_dual` on two addresses.
pub fn create_dual(
    first: &str,
    second: &str,
    config: &netcode_server_config_t,
) -> *mut netcode_server_t {
    let (first, second) = (CString::new(first).unwrap(), CString::new(second).unwrap());
    // SAFETY: C strings and a readable config.
    creating(|| unsafe {
        netcode_server_create_dual_v2(first.as_ptr(), second.as_ptr(), config, 0.0)
    })
}

/// `netcode_server_create_v2(_dual)` with raw pointers (any of them NULL).
pub fn create_raw(
    first: *const std::ffi::c_char,
    second: Option<*const std::ffi::c_char>,
    config: *const netcode_server_config_t,
) -> *mut netcode_server_t {
    // SAFETY: the tests pass NULL, C strings and readable configs.
    creating(|| unsafe {
        match second {
            Some(second) => netcode_server_create_dual_v2(first, second, config, 0.0),
            None => netcode_server_create_v2(first, config, 0.0),
        }
    })
}

/// A payload received from slot `index`, copied, with its sequence; the
/// buffer is freed.
pub fn receive(server: *mut netcode_server_t, index: c_int) -> Option<(Vec<u8>, u64)> {
    let mut bytes = 0;
    let mut sequence = 0;
    // SAFETY: a live server and writable out-pointers.
    unsafe {
        let packet = netcode_server_receive_packet(server, index, &mut bytes, &mut sequence);
        if packet.is_null() {
            return None;
        }
        let data = std::slice::from_raw_parts(packet, bytes as usize).to_vec();
        netcode_server_free_packet(server, packet.cast());
        Some((data, sequence))
    }
}

/// `netcode_server_send_packet` of `data` to slot `index`.
pub fn send(server: *mut netcode_server_t, index: c_int, data: &[u8]) {
    // SAFETY: a live server and `data.len()` readable bytes.
    unsafe { netcode_server_send_packet(server, index, data.as_ptr(), data.len() as c_int) }
}

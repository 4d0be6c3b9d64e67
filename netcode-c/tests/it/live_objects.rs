//! The registry of live objects, from C's side: a client or server
//! destroyed twice, called after its destroy, passed to the other kind's
//! functions, destroyed on another thread than the one that called it
//! last, and destroyed from its own callback with a new object made at the
//! same address. Each bad call is an error line and nothing else; on Linux
//! the destroyed objects' pages are made unreadable, so a read of a
//! destroyed object's memory would crash the test instead of passing.
#![cfg(not(miri))]

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::{c_int, c_void};

use netcode::*;

use crate::globals::{capture_log, create_alone, create_client, settings_unchanged};

unsafe extern "C" {
    fn malloc(size: usize) -> *mut c_void;
    fn free(pointer: *mut c_void);
}

/// The send override of every object here: datagrams go nowhere.
unsafe extern "C" fn send_nowhere(
    _context: *mut c_void,
    _to: *mut netcode_address_t,
    _data: *const u8,
    _bytes: c_int,
) {
}

/// The receive override of every object here: nothing arrives.
unsafe extern "C" fn receive_nothing(
    _context: *mut c_void,
    _from: *mut netcode_address_t,
    _buffer: *mut u8,
    _max: c_int,
) -> c_int {
    0
}

/// A loopback callback that drops the payload.
unsafe extern "C" fn drop_loopback(
    _context: *mut c_void,
    _index: c_int,
    _data: *const u8,
    _bytes: c_int,
    _sequence: u64,
) {
}

/// An allocator whose freed blocks become unreadable: each allocation is
/// its own mapping, made inaccessible (never unmapped, so never reused)
/// when freed. On other systems, malloc, and the blocks freed kept (so not
/// reused either) until the allocator is dropped.
#[derive(Default)]
struct Guarded {
    sizes: RefCell<HashMap<usize, usize>>,
    allocations: Cell<usize>,
    frees: Cell<usize>,
    #[cfg(not(target_os = "linux"))]
    kept: RefCell<Vec<usize>>,
}

#[cfg(not(target_os = "linux"))]
impl Drop for Guarded {
    fn drop(&mut self) {
        for pointer in self.kept.get_mut().drain(..) {
            // SAFETY: a block from malloc, kept by `guarded_free`.
            unsafe { free(pointer as *mut c_void) };
        }
    }
}

#[cfg(target_os = "linux")]
mod pages {
    use std::ffi::{c_int, c_void};

    unsafe extern "C" {
        pub(super) fn mmap(
            address: *mut c_void,
            len: usize,
            prot: c_int,
            flags: c_int,
            fd: c_int,
            offset: i64,
        ) -> *mut c_void;
        pub(super) fn mprotect(address: *mut c_void, len: usize, prot: c_int) -> c_int;
    }
    pub(super) const PROT_NONE: c_int = 0;
    pub(super) const PROT_READ_WRITE: c_int = 1 | 2;
    pub(super) const MAP_PRIVATE_ANONYMOUS: c_int = 0x02 | 0x20;
    pub(super) const MAP_FAILED: *mut c_void = !0usize as *mut c_void;
}

/// `Guarded`'s allocate function.
///
/// # Safety
///
/// `context` points to a live `Guarded`.
unsafe extern "C" fn guarded_allocate(context: *mut c_void, bytes: usize) -> *mut c_void {
    // SAFETY: the test's setup.
    let guarded = unsafe { &*context.cast::<Guarded>() };
    guarded.allocations.set(guarded.allocations.get() + 1);
    #[cfg(target_os = "linux")]
    {
        let len = bytes.max(1).next_multiple_of(4096);
        // SAFETY: a fresh anonymous mapping.
        let pointer = unsafe {
            pages::mmap(
                std::ptr::null_mut(),
                len,
                pages::PROT_READ_WRITE,
                pages::MAP_PRIVATE_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(pointer, pages::MAP_FAILED);
        guarded.sizes.borrow_mut().insert(pointer as usize, len);
        pointer
    }
    #[cfg(not(target_os = "linux"))]
    {
        // SAFETY: malloc takes any size.
        unsafe { malloc(bytes) }
    }
}

/// `Guarded`'s free function.
///
/// # Safety
///
/// `context` points to a live `Guarded`; `pointer` came from
/// `guarded_allocate`.
unsafe extern "C" fn guarded_free(context: *mut c_void, pointer: *mut c_void) {
    // SAFETY: the test's setup.
    let guarded = unsafe { &*context.cast::<Guarded>() };
    guarded.frees.set(guarded.frees.get() + 1);
    #[cfg(target_os = "linux")]
    {
        let len = guarded.sizes.borrow_mut().remove(&(pointer as usize));
        let len = len.expect("a block of this allocator, freed once");
        // SAFETY: the mapping made for this block; nothing may read it now.
        let protected = unsafe { pages::mprotect(pointer, len, pages::PROT_NONE) };
        assert_eq!(protected, 0);
    }
    #[cfg(not(target_os = "linux"))]
    guarded.kept.borrow_mut().push(pointer as usize);
}

impl Guarded {
    /// Whether every block allocated was freed.
    fn balanced(&self) -> bool {
        self.allocations.get() == self.frees.get()
    }
}

/// An override-mode config of type `$config` (a client's or a server's:
/// these fields have the same names in both) with the allocator of
/// `$guarded` (an `Option<&Guarded>`), or malloc.
macro_rules! override_config {
    ($config:ty, $guarded:expr) => {{
        let mut config = <$config>::default();
        config.override_send_and_receive = 1;
        config.send_packet_override = Some(send_nowhere);
        config.receive_packet_override = Some(receive_nothing);
        config.send_loopback_packet_callback = Some(drop_loopback);
        if let Some(guarded) = $guarded {
            config.allocator_context = std::ptr::from_ref(guarded).cast_mut().cast();
            config.allocate_function = Some(guarded_allocate);
            config.free_function = Some(guarded_free);
        }
        config
    }};
}

/// An override-mode client config with `guarded`'s allocator (or malloc).
fn client_config(guarded: Option<&Guarded>) -> netcode_client_config_t {
    override_config!(netcode_client_config_t, guarded)
}

/// An override-mode server config with `guarded`'s allocator (or malloc).
fn server_config(guarded: Option<&Guarded>) -> netcode_server_config_t {
    override_config!(netcode_server_config_t, guarded)
}

fn new_client(config: &netcode_client_config_t) -> *mut netcode_client_t {
    // SAFETY: a C string and a readable config whose contexts outlive the
    // client.
    let client = create_client(|| unsafe {
        netcode_client_create(c"10.77.0.2:50000".as_ptr(), config, 0.0)
    });
    assert!(!client.is_null());
    client
}

fn new_server(config: &netcode_server_config_t) -> *mut netcode_server_t {
    // SAFETY: as for `new_client`.
    let server = create_alone(|| unsafe {
        netcode_server_create_v2(c"10.77.0.1:40000".as_ptr(), config, 0.0)
    });
    assert!(!server.is_null());
    server
}

/// Runs `calls`, which returns how many calls it made, with the log
/// captured: each call must have logged one line, holding `refusal`.
fn assert_one_refusal_each(refusal: &str, calls: impl FnOnce() -> usize) {
    let _settings = capture_log();
    let calls = calls();
    let lines = netcode::test_log::take();
    assert_eq!(count(&lines, &[refusal]), calls, "{lines:?}");
    assert_eq!(lines.len(), calls, "one line per call: {lines:?}");
}

/// How many captured lines hold every one of `words`.
fn count(lines: &[String], words: &[&str]) -> usize {
    lines
        .iter()
        .filter(|l| words.iter().all(|w| l.contains(w)))
        .count()
}

/// Calls every client function but create and destroy on `client`;
/// returns how many calls that is.
///
/// # Safety
///
/// `client` is any pointer (each function looks it up first).
unsafe fn every_client_call(client: *mut netcode_client_t) -> usize {
    let mut token = [0u8; 2048];
    let mut bytes = 0;
    let mut sequence = 0;
    let mut from = netcode_address_t::ZERO;
    let mut datagram = [0u8; 16];
    // SAFETY: every other pointer is valid; `client` is the caller's.
    unsafe {
        netcode_client_connect(client, token.as_mut_ptr());
        netcode_client_update(client, 1.0);
        assert_eq!(netcode_client_next_packet_sequence(client), 0);
        netcode_client_send_packet(client, b"x".as_ptr(), 1);
        assert!(netcode_client_receive_packet(client, &mut bytes, &mut sequence).is_null());
        netcode_client_free_packet(client, token.as_mut_ptr().cast());
        netcode_client_disconnect(client);
        assert_eq!(
            netcode_client_state(client),
            NETCODE_CLIENT_STATE_DISCONNECTED
        );
        assert_eq!(netcode_client_index(client), 0);
        assert_eq!(netcode_client_max_clients(client), 0);
        netcode_client_connect_loopback(client, 0, 1);
        netcode_client_disconnect_loopback(client);
        netcode_client_process_packet(client, &mut from, datagram.as_mut_ptr(), 16);
        assert_eq!(netcode_client_loopback(client), 0);
        netcode_client_process_loopback_packet(client, b"x".as_ptr(), 1, 0);
        assert_eq!(netcode_client_get_port(client), 0);
        assert!(netcode_client_server_address(client).is_null());
    }
    17
}

/// Calls every server function but create and destroy on `server`;
/// returns how many calls that is.
///
/// # Safety
///
/// `server` is any pointer (each function looks it up first).
unsafe fn every_server_call(server: *mut netcode_server_t) -> usize {
    let mut bytes = 0;
    let mut sequence = 0;
    let mut from = netcode_address_t::ZERO;
    let mut datagram = [0u8; 16];
    let payload = [1u8; 8];
    // SAFETY: every other pointer is valid; `server` is the caller's.
    unsafe {
        netcode_server_start(server, 4);
        netcode_server_stop(server);
        assert_eq!(netcode_server_running(server), 0);
        assert_eq!(netcode_server_max_clients(server), 0);
        netcode_server_update(server, 1.0);
        assert_eq!(netcode_server_client_connected(server, 0), 0);
        assert_eq!(netcode_server_client_id(server, 0), 0);
        assert!(netcode_server_client_address(server, 0).is_null());
        assert_eq!(netcode_server_client_disconnect_reason(server, 0), 0);
        netcode_server_disconnect_client(server, 0);
        netcode_server_disconnect_all_clients(server);
        assert_eq!(netcode_server_next_packet_sequence(server, 0), 0);
        netcode_server_send_packet(server, 0, payload.as_ptr(), 8);
        let packet = netcode_server_receive_packet(server, 0, &mut bytes, &mut sequence);
        assert!(packet.is_null());
        netcode_server_free_packet(server, payload.as_ptr().cast_mut().cast());
        assert_eq!(netcode_server_num_connected_clients(server), 0);
        assert!(netcode_server_client_user_data(server, 0).is_null());
        netcode_server_connect_loopback_client(server, 0, 1, std::ptr::null());
        netcode_server_disconnect_loopback_client(server, 0);
        assert_eq!(netcode_server_client_loopback(server, 0), 0);
        netcode_server_process_loopback_packet(server, 0, payload.as_ptr(), 8, 0);
        netcode_server_process_packet(server, &mut from, datagram.as_mut_ptr(), 16);
        assert_eq!(netcode_server_get_port(server), 0);
    }
    23
}

#[test]
fn a_destroyed_client_is_never_read_again() {
    let guarded = Guarded::default();
    let config = client_config(Some(&guarded));
    let client = new_client(&config);
    // SAFETY: a live client with a loopback callback.
    unsafe {
        netcode_client_connect_loopback(client, 0, 1);
        netcode_client_destroy(client);
    }
    assert!(guarded.balanced());
    // SAFETY: destroyed: every function looks the pointer up first, and its
    // memory is unreadable (Linux), so a read would crash.
    assert_one_refusal_each("is not a live object: not a live client", || unsafe {
        netcode_client_destroy(client);
        let calls = every_client_call(client);
        netcode_client_destroy(client);
        calls + 2
    });
    assert!(guarded.balanced());
}

#[test]
fn a_destroyed_server_is_never_read_again() {
    let guarded = Guarded::default();
    let config = server_config(Some(&guarded));
    let server = new_server(&config);
    // SAFETY: a live server.
    unsafe {
        netcode_server_start(server, 2);
        netcode_server_connect_loopback_client(server, 0, 9, std::ptr::null());
        netcode_server_destroy(server);
    }
    assert!(guarded.balanced());
    // SAFETY: destroyed, as for the client above.
    assert_one_refusal_each("is not a live object: not a live server", || unsafe {
        netcode_server_destroy(server);
        let calls = every_server_call(server);
        netcode_server_destroy(server);
        calls + 2
    });
    assert!(guarded.balanced());
}

#[test]
fn a_client_is_not_a_server_and_a_server_is_not_a_client() {
    let client = new_client(&client_config(None));
    let server = new_server(&server_config(None));
    // SAFETY: both live; each is passed to the other kind's functions,
    // which look it up (and refuse it) before reading it.
    unsafe {
        netcode_server_start(server, 2);
        let _settings = capture_log();
        let as_client = server.cast::<netcode_client_t>();
        let as_server = client.cast::<netcode_server_t>();
        let calls = every_client_call(as_client);
        netcode_client_destroy(as_client);
        let lines = netcode::test_log::take();
        assert_eq!(
            count(&lines, &["is a live server, not a client"]),
            calls + 1,
            "{lines:?}"
        );
        let calls = every_server_call(as_server);
        netcode_server_destroy(as_server);
        let lines = netcode::test_log::take();
        assert_eq!(
            count(&lines, &["is a live client, not a server"]),
            calls + 1,
            "{lines:?}"
        );
        // Both untouched, and still working.
        assert_eq!(netcode_server_running(server), 1);
        assert_eq!(netcode_server_max_clients(server), 2);
        assert_eq!(
            netcode_client_state(client),
            NETCODE_CLIENT_STATE_DISCONNECTED
        );
        netcode_client_connect_loopback(client, 0, 1);
        assert_eq!(netcode_client_loopback(client), 1);
        assert!(netcode::test_log::take().is_empty());
        netcode_client_destroy(client);
        netcode_server_destroy(server);
    }
}

#[test]
fn a_destroy_on_another_thread_is_seen_by_this_one() {
    // Guarded memory, never given back: no object of a test on another
    // thread can be made at these addresses once they are destroyed.
    let guarded = Guarded::default();
    let client = new_client(&client_config(Some(&guarded)));
    let server = new_server(&server_config(Some(&guarded)));
    let _settings = settings_unchanged();
    // SAFETY: live; this thread uses them, then another thread destroys
    // them (one thread at a time, as C's contract asks: the allocator's
    // context too is used by one thread at a time), then this thread
    // passes the pointers again, which are looked up first.
    unsafe {
        assert_eq!(netcode_client_get_port(client), 0);
        assert_eq!(netcode_server_running(server), 0);
        let (c, s) = (client as usize, server as usize);
        std::thread::spawn(move || {
            netcode_client_destroy(c as *mut netcode_client_t);
            netcode_server_destroy(s as *mut netcode_server_t);
        })
        .join()
        .unwrap();
        netcode::test_log::start();
        assert_eq!(netcode_client_get_port(client), 0);
        assert_eq!(netcode_server_running(server), 0);
        netcode_client_destroy(client);
        netcode_server_destroy(server);
    }
    let lines = netcode::test_log::take();
    assert_eq!(count(&lines, &["is not a live object"]), 4, "{lines:?}");
    assert!(guarded.balanced());
}

/// An allocator that hands the last block freed back to the next
/// allocation of the same size, so an object made right after another's
/// destroy lands at the same address.
#[derive(Default)]
struct Reusing {
    sizes: RefCell<HashMap<usize, usize>>,
    spare: Cell<Option<(usize, usize)>>,
    /// How many times a freed block was handed out again.
    reused: Cell<u32>,
}

/// `Reusing`'s allocate function.
///
/// # Safety
///
/// `context` points to a live `Reusing`.
unsafe extern "C" fn reusing_allocate(context: *mut c_void, bytes: usize) -> *mut c_void {
    // SAFETY: the test's setup.
    let reusing = unsafe { &*context.cast::<Reusing>() };
    let pointer = match reusing.spare.take() {
        Some((pointer, size)) if size == bytes => {
            reusing.reused.set(reusing.reused.get() + 1);
            pointer as *mut c_void
        }
        spare => {
            reusing.spare.set(spare);
            // SAFETY: malloc takes any size.
            unsafe { malloc(bytes) }
        }
    };
    reusing.sizes.borrow_mut().insert(pointer as usize, bytes);
    pointer
}

/// `Reusing`'s free function: keeps the last block freed.
///
/// # Safety
///
/// `context` points to a live `Reusing`; `pointer` came from
/// `reusing_allocate`.
unsafe extern "C" fn reusing_free(context: *mut c_void, pointer: *mut c_void) {
    // SAFETY: the test's setup.
    let reusing = unsafe { &*context.cast::<Reusing>() };
    let size = reusing.sizes.borrow_mut().remove(&(pointer as usize));
    let size = size.expect("a block of this allocator, freed once");
    if let Some((old, _)) = reusing.spare.replace(Some((pointer as usize, size))) {
        // SAFETY: a block from malloc, freed once.
        unsafe { free(old as *mut c_void) };
    }
}

impl Drop for Reusing {
    fn drop(&mut self) {
        if let Some((pointer, _)) = self.spare.take() {
            // SAFETY: a block from malloc, freed once.
            unsafe { free(pointer as *mut c_void) };
        }
    }
}

/// What the state callback below reaches: the config, the client, and
/// what it saw of the new client it made.
struct Replace {
    config: Cell<netcode_client_config_t>,
    client: Cell<*mut netcode_client_t>,
    /// The old and new client, and the new one's index inside the callback.
    replaced: Cell<Option<(*mut netcode_client_t, *mut netcode_client_t, c_int)>>,
}

/// A state callback that, on the way to DISCONNECTED, destroys its client
/// and makes another (at the same address, by the allocator above), then
/// uses the new one.
///
/// # Safety
///
/// `context` points to a live `Replace`.
unsafe extern "C" fn replace_on_disconnect(context: *mut c_void, _previous: c_int, current: c_int) {
    // SAFETY: the test's setup.
    let replace = unsafe { &*context.cast::<Replace>() };
    if current != NETCODE_CLIENT_STATE_DISCONNECTED || replace.replaced.get().is_some() {
        return;
    }
    let old = replace.client.get();
    // SAFETY: the live client this callback belongs to; then a new one.
    unsafe {
        netcode_client_destroy(old);
        let config = replace.config.get();
        let new = new_client(&config);
        netcode_client_connect_loopback(new, 1, 2);
        replace
            .replaced
            .set(Some((old, new, netcode_client_index(new))));
        replace.client.set(new);
    }
}

#[test]
fn a_new_object_in_a_destroyed_ones_memory_is_another_object() {
    let reusing = Reusing::default();
    let replace = Replace {
        config: Cell::new(netcode_client_config_t::default()),
        client: Cell::new(std::ptr::null_mut()),
        replaced: Cell::new(None),
    };
    let mut config = client_config(None);
    config.allocator_context = std::ptr::from_ref(&reusing).cast_mut().cast();
    config.allocate_function = Some(reusing_allocate);
    config.free_function = Some(reusing_free);
    config.callback_context = std::ptr::from_ref(&replace).cast_mut().cast();
    config.state_change_callback = Some(replace_on_disconnect);
    replace.config.set(config);
    let client = new_client(&config);
    replace.client.set(client);
    let _settings = capture_log();
    // SAFETY: live; its state callback destroys it and makes another, at
    // the same address; the test then only uses the new one.
    unsafe {
        netcode_client_connect_loopback(client, 0, 1);
        netcode_client_disconnect_loopback(client);
        let (old, new, index) = replace.replaced.get().expect("replaced in the callback");
        assert_eq!(
            reusing.reused.get(),
            1,
            "the allocator put the new client where the old one was"
        );
        assert_ne!(old, new, "the new client has a handle of its own");
        assert_eq!(index, 1, "the new client worked inside the callback");
        assert_eq!(netcode_client_loopback(new), 1);
        assert_eq!(netcode_client_index(new), 1);
        // The old pointer is refused: it does not reach the new client.
        assert_eq!(netcode_client_loopback(old), 0);
        netcode_client_destroy(old);
        assert_eq!(
            netcode_client_loopback(new),
            1,
            "a stale destroy left it alone"
        );
        netcode_client_destroy(new);
    }
    let lines = netcode::test_log::take();
    assert_eq!(count(&lines, &["is not a live object"]), 2, "{lines:?}");
}

/// malloc's blocks, each one's address remembered: the allocator of the
/// malloc test below.
#[derive(Default)]
struct Recording {
    /// Every block handed out, in order.
    handed_out: RefCell<Vec<usize>>,
}

/// `Recording`'s allocate function: malloc, remembered.
///
/// # Safety
///
/// `context` points to a live `Recording`.
unsafe extern "C" fn recording_allocate(context: *mut c_void, bytes: usize) -> *mut c_void {
    // SAFETY: the test's setup.
    let recording = unsafe { &*context.cast::<Recording>() };
    // SAFETY: malloc takes any size.
    let block = unsafe { malloc(bytes) };
    recording.handed_out.borrow_mut().push(block as usize);
    block
}

/// `Recording`'s free function: free.
///
/// # Safety
///
/// `pointer` came from `recording_allocate`.
unsafe extern "C" fn recording_free(_context: *mut c_void, pointer: *mut c_void) {
    // SAFETY: a block from malloc, freed once.
    unsafe { free(pointer) };
}

/// With malloc, a destroyed server's pointer is refused, and never stops
/// or destroys a server made after it, even one that malloc put in the
/// same block (glibc hands a freed block of that size to the next
/// request of that size).
#[test]
fn a_destroyed_servers_pointer_never_reaches_the_next_server() {
    let recording = Recording::default();
    let mut config = server_config(None);
    config.allocator_context = std::ptr::from_ref(&recording).cast_mut().cast();
    config.allocate_function = Some(recording_allocate);
    config.free_function = Some(recording_free);
    let mut old = new_server(&config);
    let mut same_block = 0;
    // SAFETY: each server is live until destroyed here; afterwards its
    // pointer is only passed, as C may.
    unsafe {
        for _ in 0..8 {
            let old_block = *recording.handed_out.borrow().last().expect("a block");
            netcode_server_destroy(old);
            let new = new_server(&config);
            let new_block = *recording.handed_out.borrow().last().expect("a block");
            if new_block == old_block {
                same_block += 1;
            }
            assert_ne!(old, new, "a pointer is never handed out twice");
            // A stale start would start the new server, and a stale
            // destroy destroy it: both are refused.
            assert_one_refusal_each("is not a live object", || {
                netcode_server_start(old, 4);
                netcode_server_destroy(old);
                2
            });
            // Still live and not started: a call on it logs nothing.
            assert_one_refusal_each("", || {
                assert_eq!(netcode_server_running(new), 0, "a stale pointer started it");
                0
            });
            old = new;
        }
        netcode_server_destroy(old);
    }
    eprintln!("malloc put {same_block} of 8 servers in their predecessor's block");
    assert!(
        same_block > 0,
        "malloc never put a new server in its predecessor's block: nothing was shown"
    );
}

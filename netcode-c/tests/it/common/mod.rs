//! What the Rust tests of the C API share: a counting allocator for the
//! configs, a recorder of state changes, an in-memory network for
//! netcode-std's side of override-mode tests, and the workspace's
//! fixtures.
#![allow(dead_code, unreachable_pub)]

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::ffi::{c_int, c_void};
use std::io;
use std::net::SocketAddr;
use std::rc::Rc;

use netcode_std::transport::Socket;

#[allow(unused_imports)]
pub use test_fixtures::*;

unsafe extern "C" {
    fn malloc(size: usize) -> *mut c_void;
    fn free(pointer: *mut c_void);
}

/// Allocations and frees made through a config's allocator callbacks.
#[derive(Debug, Default)]
pub struct Counter {
    pub allocations: Cell<usize>,
    pub frees: Cell<usize>,
    /// Make the next allocations fail.
    pub fail: Cell<bool>,
    /// Keep freed blocks instead of freeing them (so a destroyed object's
    /// memory stays readable for a second destroy).
    pub keep: Cell<bool>,
    pub kept: RefCell<Vec<usize>>,
    /// The first block this allocator handed out (an object's memory).
    pub first: Cell<usize>,
    /// When not 0: the next allocation returns this address instead, not
    /// counted (a broken allocator handing out memory in use).
    pub in_use: Cell<usize>,
}

impl Counter {
    /// Whether every allocation was freed.
    pub fn balanced(&self) -> bool {
        self.allocations.get() == self.frees.get()
    }

    /// Frees what was kept.
    pub fn release(&self) {
        for pointer in self.kept.borrow_mut().drain(..) {
            // SAFETY: kept blocks came from malloc and were not freed.
            unsafe { free(pointer as *mut c_void) };
        }
    }
}

/// An allocate function counting into the `Counter` its context points to.
///
/// # Safety
///
/// `context` points to a live `Counter`.
pub unsafe extern "C" fn counted_allocate(context: *mut c_void, bytes: usize) -> *mut c_void {
    // SAFETY: the context is a live Counter (the test's setup).
    let counter = unsafe { &*context.cast::<Counter>() };
    if counter.fail.get() {
        return std::ptr::null_mut();
    }
    let in_use = counter.in_use.replace(0);
    if in_use != 0 {
        return std::ptr::without_provenance_mut(in_use);
    }
    counter.allocations.set(counter.allocations.get() + 1);
    // SAFETY: malloc takes any size.
    let block = unsafe { malloc(bytes) };
    if counter.first.get() == 0 {
        counter.first.set(block as usize);
    }
    block
}

/// The free function matching [`counted_allocate`].
///
/// # Safety
///
/// `context` points to a live `Counter`; `pointer` came from
/// `counted_allocate`.
pub unsafe extern "C" fn counted_free(context: *mut c_void, pointer: *mut c_void) {
    // SAFETY: the context is a live Counter (the test's setup).
    let counter = unsafe { &*context.cast::<Counter>() };
    counter.frees.set(counter.frees.get() + 1);
    if counter.keep.get() {
        counter.kept.borrow_mut().push(pointer as usize);
        return;
    }
    // SAFETY: a block from malloc, freed once.
    unsafe { free(pointer) };
}

/// What the callbacks of a client or server saw.
#[derive(Debug, Default)]
pub struct Seen {
    /// State changes (previous, current), or connects/disconnects (index,
    /// connected).
    pub changes: RefCell<Vec<(c_int, c_int)>>,
    /// Loopback payloads: index, bytes, sequence.
    pub loopback: RefCell<Vec<(c_int, Vec<u8>, u64)>>,
}

/// A state change callback recording into the `Seen` its context points to.
///
/// # Safety
///
/// `context` points to a live `Seen`.
pub unsafe extern "C" fn record_change(context: *mut c_void, a: c_int, b: c_int) {
    // SAFETY: the test's setup.
    let seen = unsafe { &*context.cast::<Seen>() };
    seen.changes.borrow_mut().push((a, b));
}

/// A loopback callback recording into the `Seen` its context points to.
///
/// # Safety
///
/// `context` points to a live `Seen`; `data` to `bytes` readable bytes.
pub unsafe extern "C" fn record_loopback(
    context: *mut c_void,
    index: c_int,
    data: *const u8,
    bytes: c_int,
    sequence: u64,
) {
    // SAFETY: the test's setup, and the library's promise on `data`.
    let (seen, data) = unsafe {
        (
            &*context.cast::<Seen>(),
            std::slice::from_raw_parts(data, bytes as usize),
        )
    };
    seen.loopback
        .borrow_mut()
        .push((index, data.to_vec(), sequence));
}

/// Whether the log lines mention `text`.
pub fn logged(lines: &[String], text: &str) -> bool {
    lines.iter().any(|l| l.contains(text))
}

/// Datagrams waiting for each address, with their senders: an in-memory
/// network.
pub type Network = Rc<RefCell<HashMap<SocketAddr, VecDeque<(Vec<u8>, SocketAddr)>>>>;

/// A netcode-std socket at `local` on a [`Network`].
#[derive(Debug)]
pub struct NetworkSocket {
    pub network: Network,
    pub local: SocketAddr,
}

impl Socket for NetworkSocket {
    fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<usize> {
        self.network
            .borrow_mut()
            .entry(to)
            .or_default()
            .push_back((datagram.to_vec(), self.local));
        Ok(datagram.len())
    }

    fn recv_from(&self, buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        let next = self
            .network
            .borrow_mut()
            .get_mut(&self.local)
            .and_then(VecDeque::pop_front);
        let Some((datagram, from)) = next else {
            return Err(io::ErrorKind::WouldBlock.into());
        };
        let len = datagram.len().min(buffer.len());
        buffer[..len].copy_from_slice(&datagram[..len]);
        Ok((len, from))
    }
}

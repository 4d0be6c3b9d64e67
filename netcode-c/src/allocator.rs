//! A config's allocator: its context and its allocate and free callbacks
//! ([`Allocator`]), the C library's malloc and free by default. A leaf:
//! the registry of live objects (objects.rs) and the payloads handed out
//! (packets.rs) both stand on it.

use std::ffi::c_void;
use std::ptr::NonNull;

use crate::abi::{AllocateFunction, FreeFunction};

unsafe extern "C" {
    fn malloc(size: usize) -> *mut c_void;
    fn free(pointer: *mut c_void);
}

/// The default allocate function (what `netcode_default_*_config` writes):
/// the C library's `malloc`; the context is unused.
pub(crate) unsafe extern "C" fn default_allocate(
    _context: *mut c_void,
    bytes: usize,
) -> *mut c_void {
    // SAFETY: malloc accepts any size and returns NULL or a fresh block.
    unsafe { malloc(bytes) }
}

/// The default free function: the C library's `free`; the context is
/// unused.
pub(crate) unsafe extern "C" fn default_free(_context: *mut c_void, pointer: *mut c_void) {
    // SAFETY: the caller frees a block from `default_allocate` (malloc), or
    // NULL, which free ignores.
    unsafe { free(pointer) }
}

/// A config's allocator: its context and its allocate and free callbacks,
/// each malloc / free where the config has NULL.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Allocator {
    context: *mut c_void,
    allocate: AllocateFunction,
    free: FreeFunction,
}

impl Allocator {
    /// The allocator of a config's three fields.
    pub(crate) fn new(
        context: *mut c_void,
        allocate: Option<AllocateFunction>,
        free: Option<FreeFunction>,
    ) -> Self {
        Self {
            context,
            allocate: allocate.unwrap_or(default_allocate),
            free: free.unwrap_or(default_free),
        }
    }

    /// `bytes` bytes from the allocate callback, or `None` when it returns
    /// NULL.
    pub(crate) fn alloc(&self, bytes: usize) -> Option<NonNull<u8>> {
        // SAFETY: the config's allocate function, which C promises behaves
        // as malloc does (NULL or `bytes` fresh bytes), with its context.
        let pointer = unsafe { (self.allocate)(self.context, bytes) };
        NonNull::new(pointer.cast::<u8>())
    }

    /// Gives back what [`alloc`](Self::alloc) returned.
    ///
    /// # Safety
    ///
    /// `pointer` came from `alloc` of this allocator and is not used, nor
    /// freed, again.
    pub(crate) unsafe fn free(&self, pointer: NonNull<u8>) {
        // SAFETY: the config's free function, given a block from its
        // allocate function once (the caller's promise).
        unsafe { (self.free)(self.context, pointer.as_ptr().cast::<c_void>()) }
    }

    /// Gives back the memory of a value placed in memory from
    /// [`alloc`](Self::alloc) (`Object::place`) without dropping the value
    /// (the caller has moved it out or dropped it).
    ///
    /// # Safety
    ///
    /// `pointer` came from `alloc` of this allocator and is not used, nor
    /// freed, again.
    pub(crate) unsafe fn unplace<T>(&self, pointer: NonNull<T>) {
        // SAFETY: a block from `alloc` (the caller's promise).
        unsafe { self.free(pointer.cast()) }
    }
}

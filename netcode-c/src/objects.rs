//! The objects handed to C (`netcode_client_t`, `netcode_server_t`): the
//! wrapper both are ([`Object`]), and the registry of the live ones, which
//! every call consults before it reads anything through the pointer C
//! passed ([`live`]).
//!
//! C never holds the object's memory: the pointer it gets is a handle, a
//! value the library never hands out twice (see [`handle_of`]), which the
//! registry maps to the memory, its kind and a serial number. An object is
//! registered by [`Object::place`] and unregistered by [`Object::retire`],
//! before its memory goes back to the allocator. So a pointer from a
//! destroyed object stays refused whatever happens after its destroy, even
//! when the allocator hands the same block to the next object (glibc does,
//! and a one-block pool must). A pointer that is NULL, misaligned, not a
//! live handle (destroyed already, or never made here) or the handle of
//! the other kind is logged and refused; a handle is never dereferenced.
//! What cannot be detected: an object used by two threads at once or
//! destroyed by one thread while another calls it (C's threading
//! contract, as the reference's).
//!
//! The cost: a handle is a number, so it costs nothing to keep; the
//! registry holds one entry per live object (and one per live block, to
//! refuse an allocator that hands out memory inside a live object).
//!
//! The cost per call: the registry is a `Mutex<BTreeMap>`, taken only on a
//! thread's first call on an object and after a destroy. Each thread keeps
//! the objects it found live in a cache of 256 entries, one per serial
//! number modulo 256 (16 KiB a thread), each stamped with the registry's
//! generation (an atomic counter every unregistration increments under
//! the lock); a call finds its object there with one atomic load (a plain
//! load on x86 and ARM, no read-modify-write, no cache line shared by
//! writers) and one entry read. A stamp that differs from the generation
//! (something was destroyed since, on any thread) sends the call to the
//! registry. A destroy that happened before a call, by any synchronisation
//! C used, changed the generation the call reads, so a stale cache never
//! vouches for a destroyed object.

use std::any::TypeId;
use std::cell::{Cell, UnsafeCell};
use std::collections::BTreeMap;
use std::ops::Bound;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::allocator::Allocator;
use crate::logging;

/// The state of a kind of object handed to C; its name is for logs.
pub(crate) trait Kind: 'static {
    /// "client", "server".
    const NAME: &'static str;
}

/// A library object handed to C: a mark set while a call is inside it,
/// and its state.
///
/// C only ever holds a pointer to it, looked up with [`live`]. The state
/// is reached through [`enter`](Self::enter) alone, which refuses a call
/// made while another is inside (a callback calling back into the object
/// it came from), so two `&mut` to the state never exist together.
/// Callbacks that may call back in are called outside `enter`.
pub(crate) struct Object<T> {
    /// Whether a call is inside the state.
    busy: Cell<bool>,
    state: UnsafeCell<T>,
}

impl<T: Kind> Object<T> {
    /// Moves `state` into memory from `allocator`, registers it as a live
    /// object and returns its handle (what C holds; never dereferenced);
    /// `None` (logged, naming `function`) when the allocator returns NULL,
    /// misaligned memory (given back), or memory of an object still live
    /// (a broken allocator: left alone, unwritten).
    pub(crate) fn place(allocator: &Allocator, state: T, function: &str) -> Option<NonNull<Self>> {
        const { assert!(align_of::<Self>() <= HANDLE_STEP) };
        let Some(memory) = allocator.alloc(size_of::<Self>()) else {
            logging::error(format_args!(
                "{function}: the allocate function returned NULL"
            ));
            return None;
        };
        let pointer = memory.cast::<Self>();
        if !pointer.is_aligned() {
            logging::error(format_args!(
                "{function}: the allocate function returned {pointer:p}, not aligned to {} bytes",
                align_of::<Self>()
            ));
            // SAFETY: fresh from this allocator's `alloc`, never used.
            unsafe { allocator.free(memory) };
            return None;
        }
        let mut registry = registry();
        if let Some(name) = registry.overlapping(address(pointer.as_ptr()), size_of::<Self>()) {
            // Logged with the lock released: the printf hook may call us.
            drop(registry);
            logging::error(format_args!(
                "{function}: the allocate function returned {pointer:p}, memory of a live {name}; refused"
            ));
            return None;
        }
        // SAFETY: `size_of::<Self>()` bytes fresh from the allocator (no
        // live object of ours is there: checked above), aligned for Self.
        unsafe {
            pointer.write(Object {
                busy: Cell::new(false),
                state: UnsafeCell::new(state),
            });
        }
        let handle = registry.register::<T>(Memory(pointer.cast()), size_of::<Self>());
        NonNull::new(handle.cast::<Self>())
    }

    /// Marks the object of `handle` destroyed (unregistered: every later
    /// call with the handle is refused) and moves its state out, with the
    /// memory it was in, unless a call is inside it (then logs and returns
    /// `None`, and nothing changes). The memory is the caller's to give
    /// back to the allocator afterwards.
    ///
    /// # Safety
    ///
    /// `handle` was found by [`live`] (or [`again`]) during this call,
    /// with the same contract.
    pub(crate) unsafe fn retire(
        handle: NonNull<Self>,
        function: &str,
    ) -> Option<(T, NonNull<Self>)> {
        let known = find(address(handle.as_ptr()))?;
        let pointer = known.memory.0.cast::<Self>();
        // SAFETY: a live object (found in the registry during this call,
        // and only this thread uses it: C's contract); shared reference.
        let object = unsafe { pointer.as_ref() };
        if object.busy.get() {
            logging::error(format_args!(
                "{function}: called from inside a callback of the same object; refused"
            ));
            return None;
        }
        registry().unregister(address(handle.as_ptr()), known.memory);
        // SAFETY: no call is inside (busy is false) so nothing borrows the
        // state; it is moved out once: the object left the registry above,
        // so no call reaches it again.
        Some((unsafe { object.state.get().read() }, pointer))
    }
}

impl<T> Object<T> {
    /// Runs `body` on the state, unless a call is already inside it (then
    /// logs, naming `function`, and returns `None`). A panic in `body`
    /// still clears the mark as it leaves.
    pub(crate) fn enter<R>(&self, function: &str, body: impl FnOnce(&mut T) -> R) -> Option<R> {
        if self.busy.replace(true) {
            logging::error(format_args!(
                "{function}: called from inside a callback of the same object; refused"
            ));
            return None;
        }
        /// Clears the mark on every way out of `enter`.
        struct Leave<'a>(&'a Cell<bool>);
        impl Drop for Leave<'_> {
            fn drop(&mut self) {
                self.0.set(false);
            }
        }
        let _leave = Leave(&self.busy);
        // SAFETY: `busy` was false and is true until `_leave` drops, so no
        // other `&mut T` exists or is made meanwhile (the state is reached
        // only here, and by `retire`, which refuses while busy); `&self`
        // keeps the object alive for the call (destroy refuses while busy).
        let state = unsafe { &mut *self.state.get() };
        Some(body(state))
    }
}

/// A live object found by [`live`], with its serial number (see [`again`]).
pub(crate) struct Found<'a, T> {
    /// The object.
    pub(crate) object: &'a Object<T>,
    /// Its serial number: another object made later at the same address
    /// has another.
    pub(crate) serial: u64,
}

/// The object whose handle is `pointer`, if it is a live object of kind
/// `T`; otherwise logs why (naming `function`) and returns `None`. Nothing
/// is ever read through `pointer`.
///
/// # Safety
///
/// Nothing is asked of `pointer` itself. C's contract, which cannot be
/// checked: the object is not used by another thread during the call
/// (nor destroyed there), and its memory was not freed other than by its
/// destroy. `'a` ends with the exported call, and before any callback
/// that may destroy the object (re-check with [`again`]).
pub(crate) unsafe fn live<'a, T: Kind>(
    pointer: *const Object<T>,
    function: &str,
) -> Option<Found<'a, T>> {
    let found = (!pointer.is_null() && pointer.is_aligned())
        .then(|| find(address(pointer)))
        .flatten();
    let Some(known) = found.filter(|known| known.kind == TypeId::of::<T>()) else {
        refuse::<T>(pointer, found, function);
        return None;
    };
    // SAFETY: the memory registered for this handle as an `Object<T>` by
    // `place`, not retired since, so it is one, alive; only shared
    // references to it are made. That no other thread uses or destroys it
    // meanwhile is C's contract (this function's # Safety).
    let object = unsafe { known.memory.0.cast::<Object<T>>().as_ref() };
    Some(Found {
        object,
        serial: known.serial,
    })
}

/// Logs why [`live`] refused `pointer` (named by `function`), of which
/// the registry knew `known`.
#[cold]
#[inline(never)]
fn refuse<T: Kind>(pointer: *const Object<T>, known: Option<Known>, function: &str) {
    if pointer.is_null() {
        logging::error(format_args!("{function}: the object is NULL"));
    } else if !pointer.is_aligned() {
        logging::error(format_args!(
            "{function}: {pointer:p} is misaligned: not a live {}",
            T::NAME
        ));
    } else if let Some(known) = known {
        logging::error(format_args!(
            "{function}: {pointer:p} is a live {}, not a {}; refused",
            known.name,
            T::NAME
        ));
    } else {
        logging::error(format_args!(
            "{function}: {pointer:p} is not a live object: not a live {} (destroyed already, or not made by this library); refused",
            T::NAME
        ));
    }
}

/// The object at `pointer` if it is still the live object of kind `T` and
/// serial number `serial` that [`live`] found earlier in the call; `None`,
/// silently, when a callback destroyed it meanwhile (even if another
/// object was made at the same address since).
///
/// # Safety
///
/// As for [`live`].
pub(crate) unsafe fn again<'a, T: Kind>(
    pointer: *const Object<T>,
    serial: u64,
) -> Option<&'a Object<T>> {
    let known = find(address(pointer))?;
    if known.kind != TypeId::of::<T>() || known.serial != serial {
        return None;
    }
    // SAFETY: as in `live`: registered as an `Object<T>` and not retired.
    Some(unsafe { known.memory.0.cast::<Object<T>>().as_ref() })
}

/// The kind of a live object whose memory the `bytes` from `start` would
/// overlap, if any: memory an allocator must not hand out again.
pub(crate) fn live_memory(start: *const u8, bytes: usize) -> Option<&'static str> {
    registry().overlapping(address(start), bytes)
}

/// The registry's key for `pointer`.
fn address<T>(pointer: *const T) -> usize {
    pointer as usize
}

/// Where a live object's memory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Memory(NonNull<u8>);

// SAFETY: a `Memory` is an address the registry keeps for the object
// placed there; it is dereferenced only by `live`, `again` and `retire`,
// under C's contract that one thread at a time uses an object. Moving the
// address between threads (the registry is shared) reads nothing.
unsafe impl Send for Memory {}

/// What the registry knows of a live object.
#[derive(Debug, Clone, Copy)]
struct Known {
    /// `TypeId::of::<T>()` of its `Object<T>`.
    kind: TypeId,
    /// `T::NAME`, for logs.
    name: &'static str,
    serial: u64,
    /// Its memory.
    memory: Memory,
}

/// The first handle; handles step by [`HANDLE_STEP`]. On 64-bit targets
/// a non-canonical address (bit 62 set), which no memory of the process
/// can have on x86-64 or ARM64: a handle never equals a real pointer.
#[cfg(target_pointer_width = "64")]
const HANDLE_BASE: usize = 1 << 62;
/// The first handle on narrower targets, whose handles run out (and would
/// come round again) only after 2^26 objects.
#[cfg(not(target_pointer_width = "64"))]
const HANDLE_BASE: usize = 1 << 12;
/// The distance between handles: every `Object<T>` is aligned to it.
const HANDLE_STEP: usize = 64;

/// The handle of the object with serial number `serial`: distinct for
/// every serial, so never handed out twice.
fn handle_of(serial: u64) -> *mut u8 {
    let offset = usize::try_from(serial)
        .unwrap_or(usize::MAX)
        .wrapping_mul(HANDLE_STEP);
    std::ptr::without_provenance_mut(HANDLE_BASE.wrapping_add(offset))
}

/// The live objects by handle, their memory by address (start to end),
/// and the last serial number given.
struct Registry {
    objects: BTreeMap<usize, Known>,
    blocks: BTreeMap<usize, (usize, &'static str)>,
    last_serial: u64,
}

impl Registry {
    /// Registers the object of kind `T` at `memory` (`bytes` long); its
    /// handle.
    fn register<T: Kind>(&mut self, memory: Memory, bytes: usize) -> *mut u8 {
        self.last_serial += 1;
        let handle = handle_of(self.last_serial);
        let known = Known {
            kind: TypeId::of::<T>(),
            name: T::NAME,
            serial: self.last_serial,
            memory,
        };
        self.objects.insert(address(handle), known);
        let start = address(memory.0.as_ptr());
        self.blocks
            .insert(start, (start.saturating_add(bytes), T::NAME));
        handle
    }

    /// The kind of a live object whose memory `bytes` from `start` would
    /// overlap, if any.
    fn overlapping(&self, start: usize, bytes: usize) -> Option<&'static str> {
        let end = start.saturating_add(bytes);
        let (_, &(block_end, name)) = self
            .blocks
            .range((Bound::Unbounded, Bound::Excluded(end)))
            .next_back()?;
        (block_end > start).then_some(name)
    }

    fn unregister(&mut self, handle: usize, memory: Memory) {
        self.objects.remove(&handle);
        self.blocks.remove(&address(memory.0.as_ptr()));
        // Under the lock: a lookup that holds it reads a generation that
        // matches the map it sees.
        GENERATION.fetch_add(1, Ordering::Release);
    }
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    objects: BTreeMap::new(),
    blocks: BTreeMap::new(),
    last_serial: 0,
});

/// How many objects were ever unregistered: a thread's cache of live
/// objects is good while this has not changed.
static GENERATION: AtomicU64 = AtomicU64::new(1);

/// The registry, locked (nothing panics while it is held; a poisoned lock
/// is taken as is).
fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Entries in a thread's cache, a power of two. A handle's entry is its
/// serial number modulo this, so any run of this many objects made one
/// after another (a test's clients, a batch of handshakes) never evict
/// each other. 64 bytes an entry: 16 KiB a thread that calls the library.
const CACHED: usize = 256;

/// One entry of a thread's cache: what the registry said of `handle`
/// while its generation was `generation` (`None` in an empty entry).
#[derive(Clone, Copy)]
struct Cached {
    handle: usize,
    generation: u64,
    known: Option<Known>,
}

/// An empty entry.
const EMPTY: Cached = Cached {
    handle: 0,
    generation: 0,
    known: None,
};

thread_local! {
    /// A thread's last objects found live, each in the entry its serial
    /// number picks.
    static CACHE: [Cell<Cached>; CACHED] = const { [const { Cell::new(EMPTY) }; CACHED] };
}

/// The cache entry of `handle`, if it is one of ours.
fn entry_of(handle: usize) -> Option<usize> {
    let offset = handle.checked_sub(HANDLE_BASE)?;
    Some((offset / HANDLE_STEP) % CACHED)
}

/// What the registry knows of `address`: from this thread's cache while
/// nothing was unregistered since the entry was filled, else from the
/// registry (and then remembered).
#[inline]
fn find(address: usize) -> Option<Known> {
    let generation = GENERATION.load(Ordering::Acquire);
    let entry = entry_of(address)?;
    // A thread being torn down has no cache: the registry answers.
    if let Ok(cached) = CACHE.try_with(|cache| cache[entry].get())
        && cached.handle == address
        && cached.generation == generation
        && let Some(known) = cached.known
    {
        return Some(known);
    }
    find_in_registry(address, entry)
}

/// [`find`] when this thread's cache has no answer: the registry's,
/// remembered in cache entry `entry`.
#[inline(never)]
fn find_in_registry(address: usize, entry: usize) -> Option<Known> {
    let registry = registry();
    let known = *registry.objects.get(&address)?;
    // Read under the lock: the map above is exactly this generation's.
    let generation = GENERATION.load(Ordering::Relaxed);
    drop(registry);
    let _ = CACHE.try_with(|cache| {
        cache[entry].set(Cached {
            handle: address,
            generation,
            known: Some(known),
        });
    });
    Some(known)
}

#[cfg(test)]
mod tests;

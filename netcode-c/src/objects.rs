//! The objects handed to C (`netcode_client_t`, `netcode_server_t`): the
//! wrapper both are ([`Object`]), and the registry of the live ones, which
//! every call consults before it reads anything through the pointer C
//! passed ([`live`]).
//!
//! An object is registered by [`Object::place`] (its address, its kind and
//! a serial number) and unregistered by [`Object::retire`], before its
//! memory goes back to the allocator. A pointer that is NULL, misaligned,
//! not registered (destroyed already, or never made here) or registered
//! as the other kind is logged and refused without a byte of it read. What
//! cannot be detected: memory C freed itself (not through destroy), and an
//! object used by two threads at once or destroyed by one thread while
//! another calls it (C's threading contract, as the reference's).
//!
//! The cost per call: the registry is a `Mutex<BTreeMap>`, taken only on a
//! thread's first call on an object and after a destroy. Each thread keeps
//! the last objects it found live, stamped with the registry's generation
//! (an atomic counter every unregistration increments under the lock); a
//! call finds its object there with one atomic load (a plain load on x86
//! and ARM, no read-modify-write, no cache line shared by writers) and a
//! scan of 8 entries. A stamp that differs from the generation (something
//! was destroyed since, on any thread) sends the call to the registry. A
//! destroy that happened before a call, by any synchronisation C used,
//! changed the generation the call reads, so a stale cache never vouches
//! for a destroyed object.

use std::any::TypeId;
use std::cell::{Cell, RefCell, UnsafeCell};
use std::collections::BTreeMap;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::logging;
use crate::packets::Allocator;

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
    /// Moves `state` into memory from `allocator` and registers it as a
    /// live object; `None` (logged, naming `function`) when the allocator
    /// returns NULL, misaligned memory (given back), or the memory of an
    /// object still live (a broken allocator: left alone, unwritten).
    pub(crate) fn place(allocator: &Allocator, state: T, function: &str) -> Option<NonNull<Self>> {
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
        if let Some(taken) = registry.objects.get(&address(pointer.as_ptr())) {
            let name = taken.name;
            // Logged with the lock released: the printf hook may call us.
            drop(registry);
            logging::error(format_args!(
                "{function}: the allocate function returned {pointer:p}, the memory of a live {name}; refused"
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
        registry.register::<T>(address(pointer.as_ptr()));
        Some(pointer)
    }

    /// Marks the object destroyed (unregistered: every later call with its
    /// pointer is refused without reading it) and moves its state out,
    /// unless a call is inside it (then logs and returns `None`, and
    /// nothing changes). The memory is the caller's to give back to the
    /// allocator afterwards.
    ///
    /// # Safety
    ///
    /// `pointer` was found by [`live`] (or [`again`]) during this call,
    /// with the same contract; it is not used again after this returns
    /// `Some`.
    pub(crate) unsafe fn retire(pointer: NonNull<Self>, function: &str) -> Option<T> {
        // SAFETY: a live object (found in the registry during this call,
        // and only this thread uses it: C's contract); shared reference.
        let object = unsafe { pointer.as_ref() };
        if object.busy.get() {
            logging::error(format_args!(
                "{function}: called from inside a callback of the same object; refused"
            ));
            return None;
        }
        registry().unregister(address(pointer.as_ptr()));
        // SAFETY: no call is inside (busy is false) so nothing borrows the
        // state; it is moved out once: the object left the registry above,
        // so no call reaches it again.
        Some(unsafe { object.state.get().read() })
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

/// The object at `pointer`, if it is a live object of kind `T`; otherwise
/// logs why (naming `function`) and returns `None`. Nothing is read
/// through `pointer` before it is found in the registry.
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
    if pointer.is_null() {
        logging::error(format_args!("{function}: the object is NULL"));
        return None;
    }
    if !pointer.is_aligned() {
        logging::error(format_args!(
            "{function}: {pointer:p} is misaligned: not a live {}",
            T::NAME
        ));
        return None;
    }
    let Some(known) = find(address(pointer)) else {
        logging::error(format_args!(
            "{function}: {pointer:p} is not a live object: not a live {} (destroyed already, or not made by this library); refused",
            T::NAME
        ));
        return None;
    };
    if known.kind != TypeId::of::<T>() {
        logging::error(format_args!(
            "{function}: {pointer:p} is a live {}, not a {}; refused",
            known.name,
            T::NAME
        ));
        return None;
    }
    // SAFETY: registered as an `Object<T>` by `place` and not retired
    // since, so it is one, alive; only shared references to it are made.
    // That no other thread uses or frees it meanwhile is C's contract
    // (this function's # Safety).
    let object = unsafe { &*pointer };
    Some(Found {
        object,
        serial: known.serial,
    })
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
    Some(unsafe { &*pointer })
}

/// The registry's key for `pointer`.
fn address<T>(pointer: *const T) -> usize {
    pointer as usize
}

/// What the registry knows of a live object.
#[derive(Debug, Clone, Copy)]
struct Known {
    /// `TypeId::of::<T>()` of its `Object<T>`.
    kind: TypeId,
    /// `T::NAME`, for logs.
    name: &'static str,
    serial: u64,
}

/// The live objects by address, and the next serial number.
struct Registry {
    objects: BTreeMap<usize, Known>,
    next_serial: u64,
}

impl Registry {
    fn register<T: Kind>(&mut self, address: usize) {
        self.next_serial += 1;
        let known = Known {
            kind: TypeId::of::<T>(),
            name: T::NAME,
            serial: self.next_serial,
        };
        self.objects.insert(address, known);
    }

    fn unregister(&mut self, address: usize) {
        self.objects.remove(&address);
        // Under the lock: a lookup that holds it reads a generation that
        // matches the map it sees.
        GENERATION.fetch_add(1, Ordering::Release);
    }
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    objects: BTreeMap::new(),
    next_serial: 0,
});

/// How many objects were ever unregistered: a thread's cache of live
/// objects is good while this has not changed.
static GENERATION: AtomicU64 = AtomicU64::new(1);

/// The registry, locked (nothing panics while it is held; a poisoned lock
/// is taken as is).
fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Entries a thread's cache holds.
const CACHED: usize = 8;

/// A thread's last objects found live, good for one generation: their
/// addresses (0: none; NULL is never registered), scanned on every call,
/// and what the registry said of each.
struct Cache {
    generation: u64,
    addresses: [usize; CACHED],
    known: [Option<Known>; CACHED],
    /// The entry the next miss replaces.
    next: usize,
}

thread_local! {
    static CACHE: RefCell<Cache> = const {
        RefCell::new(Cache {
            generation: 0,
            addresses: [0; CACHED],
            known: [None; CACHED],
            next: 0,
        })
    };
}

/// What the registry knows of `address`: from this thread's cache while
/// nothing was unregistered since it was filled, else from the registry.
fn find(address: usize) -> Option<Known> {
    let generation = GENERATION.load(Ordering::Acquire);
    let cached = CACHE.try_with(|cache| {
        let cache = cache.try_borrow().ok()?;
        if cache.generation != generation {
            return None;
        }
        let index = cache.addresses.iter().position(|&a| a == address)?;
        cache.known[index]
    });
    if let Ok(Some(known)) = cached {
        return Some(known);
    }
    let registry = registry();
    let known = *registry.objects.get(&address)?;
    // Read under the lock: the map above is exactly this generation's.
    let generation = GENERATION.load(Ordering::Relaxed);
    drop(registry);
    // A thread being torn down has no cache: nothing to remember.
    let _ = CACHE.try_with(|cache| {
        if let Ok(mut cache) = cache.try_borrow_mut() {
            if cache.generation != generation {
                cache.generation = generation;
                cache.addresses = [0; CACHED];
                cache.known = [None; CACHED];
            }
            let next = cache.next;
            cache.addresses[next] = address;
            cache.known[next] = Some(known);
            cache.next = (next + 1) % CACHED;
        }
    });
    Some(known)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Thing(u32);
    impl Kind for Thing {
        const NAME: &'static str = "thing";
    }
    struct Other;
    impl Kind for Other {
        const NAME: &'static str = "other";
    }

    fn allocator() -> Allocator {
        Allocator::new(std::ptr::null_mut(), None, None)
    }

    /// Retires and frees a placed object.
    fn destroy<T: Kind>(pointer: NonNull<Object<T>>) -> Option<T> {
        // SAFETY: placed and live; not used again.
        let state = unsafe { Object::retire(pointer, "destroy") }?;
        // SAFETY: the memory `place` got from this allocator.
        unsafe { allocator().unplace(pointer) };
        Some(state)
    }

    #[test]
    fn objects_are_found_while_live_and_not_after() {
        let pointer = Object::place(&allocator(), Thing(5), "test").unwrap();
        let raw = pointer.as_ptr().cast_const();
        // SAFETY: the pointers are looked up before any use; this thread
        // alone uses them.
        unsafe {
            let found = live(raw, "f").unwrap();
            assert_eq!(found.object.enter("f", |s| s.0), Some(5));
            let nested = found.object.enter("f", |_| found.object.enter("g", |_| ()));
            assert_eq!(nested, Some(None), "re-entry refused");
            assert!(again(raw, found.serial).is_some());
            assert!(again(raw, found.serial + 1).is_none(), "another serial");
            assert!(live(raw.cast::<Object<Other>>(), "f").is_none(), "kind");
            assert!(live::<Thing>(std::ptr::null(), "f").is_none());
            let misaligned = raw.cast::<u8>().wrapping_add(1).cast::<Object<Thing>>();
            assert!(live(misaligned, "f").is_none());
            let serial = found.serial;
            assert!(destroy(pointer).is_some_and(|t| t.0 == 5));
            assert!(live(raw, "f").is_none(), "destroyed");
            assert!(again(raw, serial).is_none(), "destroyed");
        }
    }

    #[test]
    fn a_busy_object_is_not_retired() {
        let pointer = Object::place(&allocator(), Thing(1), "test").unwrap();
        // SAFETY: live, this thread alone.
        let found = unsafe { live(pointer.as_ptr().cast_const(), "f") }.unwrap();
        // SAFETY: live, this thread alone; `retire` is refused while inside.
        let inside = found
            .object
            .enter("f", |_| unsafe { Object::retire(pointer, "g") }.is_none());
        assert_eq!(inside, Some(true));
        assert!(destroy(pointer).is_some());
    }

    #[test]
    fn a_destroy_on_another_thread_reaches_this_threads_cache() {
        let pointer = Object::place(&allocator(), Thing(2), "test").unwrap();
        // The address crosses to the other thread as an integer, its
        // provenance exposed, as C's pointers do.
        let raw = pointer.as_ptr().expose_provenance();
        let object = std::ptr::with_exposed_provenance_mut::<Object<Thing>>;
        // SAFETY: live; found here (and cached), then destroyed on another
        // thread after which this thread only looks it up.
        unsafe {
            assert!(live(object(raw), "f").is_some());
            std::thread::spawn(move || {
                let pointer = NonNull::new(object(raw)).unwrap();
                assert!(live(pointer.as_ptr().cast_const(), "f").is_some());
                assert!(destroy(pointer).is_some());
            })
            .join()
            .unwrap();
            assert!(live(object(raw), "f").is_none());
        }
    }

    /// The per-call cost of the lookup: `cargo test --release -p netcode-c
    /// --lib -- --ignored --nocapture lookup_cost`.
    #[test]
    #[ignore = "a measurement, not a check"]
    fn lookup_cost() {
        use std::hint::black_box;
        use std::time::Instant;
        const CALLS: u32 = 10_000_000;
        let pointer = Object::place(&allocator(), Thing(0), "test").unwrap();
        let address = address(pointer.as_ptr());
        let time = |what: &str, f: &dyn Fn() -> bool| {
            let start = Instant::now();
            for _ in 0..CALLS {
                assert!(black_box(f()));
            }
            let ns = start.elapsed().as_secs_f64() * 1e9 / f64::from(CALLS);
            println!("{what}: {ns:.1} ns per call");
        };
        time("live() through the thread's cache", &|| {
            // SAFETY: live, this thread alone.
            unsafe { live(black_box(pointer.as_ptr().cast_const()), "f") }.is_some()
        });
        time(
            "the registry under its lock (every call missing the cache)",
            &|| registry().objects.contains_key(&black_box(address)),
        );
        let mutex = Mutex::new(());
        time("an uncontended std Mutex lock alone", &|| {
            black_box(mutex.lock()).is_ok()
        });
        assert!(destroy(pointer).is_some());
        // Four threads, each calling its own object, at once.
        for (what, cached) in [("cache", true), ("registry lock", false)] {
            let start = Instant::now();
            let threads: Vec<_> = (0..4)
                .map(|_| {
                    std::thread::spawn(move || {
                        let pointer = Object::place(&allocator(), Thing(0), "t").unwrap();
                        let address = super::address(pointer.as_ptr());
                        for _ in 0..CALLS / 4 {
                            let found = if cached {
                                // SAFETY: live, this thread alone.
                                unsafe { live(black_box(pointer.as_ptr().cast_const()), "f") }
                                    .is_some()
                            } else {
                                registry().objects.contains_key(&black_box(address))
                            };
                            assert!(found);
                        }
                        assert!(destroy(pointer).is_some());
                    })
                })
                .collect();
            for thread in threads {
                thread.join().unwrap();
            }
            let ns = start.elapsed().as_secs_f64() * 1e9 / f64::from(CALLS / 4);
            println!("4 threads at once, {what}: {ns:.1} ns per call per thread");
        }
    }

    #[test]
    fn many_objects_overflow_the_cache_and_stay_found() {
        let pointers: Vec<_> = (0..3 * CACHED as u32)
            .map(|i| Object::place(&allocator(), Thing(i), "test").unwrap())
            .collect();
        for _ in 0..2 {
            for (i, pointer) in pointers.iter().enumerate() {
                // SAFETY: live, this thread alone.
                let found = unsafe { live(pointer.as_ptr().cast_const(), "f") }.unwrap();
                assert_eq!(found.object.enter("f", |s| s.0), Some(i as u32));
            }
        }
        for pointer in pointers {
            assert!(destroy(pointer).is_some());
        }
    }
}

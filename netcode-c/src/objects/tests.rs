//! The registry's tests: lookups while live and after destroy, re-entry,
//! handles that stay refused when a block is reused, memory inside a live
//! object, other threads' destroys, and the cost of a lookup.

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
fn destroy<T: Kind>(handle: NonNull<Object<T>>) -> Option<T> {
    // SAFETY: placed and live.
    let (state, memory) = unsafe { Object::retire(handle, "destroy") }?;
    // SAFETY: the memory `place` got from this allocator.
    unsafe { allocator().unplace(memory) };
    Some(state)
}

/// An allocator of one block, which it hands out again once freed: a
/// pool of one, as games and embedded programs use.
mod pool {
    use std::cell::Cell;
    use std::ffi::c_void;

    #[repr(align(64))]
    pub(super) struct Block(#[allow(dead_code)] pub(super) [u8; 4096]);

    thread_local! {
        pub(super) static BLOCK: Cell<*mut Block> = const { Cell::new(std::ptr::null_mut()) };
        pub(super) static TAKEN: Cell<bool> = const { Cell::new(false) };
    }

    pub(super) unsafe extern "C" fn allocate(_: *mut c_void, bytes: usize) -> *mut c_void {
        if TAKEN.get() || bytes > 4096 {
            return std::ptr::null_mut();
        }
        TAKEN.set(true);
        BLOCK.get().cast()
    }

    pub(super) unsafe extern "C" fn free(_: *mut c_void, _: *mut c_void) {
        TAKEN.set(false);
    }
}

#[test]
fn a_destroyed_objects_handle_stays_refused_when_its_block_is_reused() {
    let block = Box::into_raw(Box::new(pool::Block([0; 4096])));
    pool::BLOCK.set(block);
    let one_block = Allocator::new(std::ptr::null_mut(), Some(pool::allocate), Some(pool::free));
    let first = Object::place(&one_block, Thing(1), "test").unwrap();
    let stale = first.as_ptr().cast_const();
    // SAFETY: live, this thread alone.
    let (state, memory) = unsafe { Object::retire(first, "destroy") }.unwrap();
    assert_eq!(state.0, 1);
    // SAFETY: the pool's block, placed above; not used again.
    unsafe { one_block.unplace(memory) };
    let second = Object::place(&one_block, Thing(2), "test").unwrap();
    assert_ne!(second, first, "a handle is never handed out twice");
    // SAFETY: handles are looked up, never read; this thread alone.
    unsafe {
        assert!(
            live(stale, "f").is_none(),
            "the stale handle reached the new object"
        );
        let found = live(second.as_ptr().cast_const(), "f").unwrap();
        assert_eq!(found.object.enter("f", |s| s.0), Some(2));
        assert!(Object::retire(first, "destroy").is_none());
    }
    // SAFETY: live, this thread alone.
    let (state, memory) = unsafe { Object::retire(second, "destroy") }.unwrap();
    assert_eq!(state.0, 2);
    // SAFETY: as above.
    unsafe { one_block.unplace(memory) };
    // SAFETY: the box made above, no longer used.
    drop(unsafe { Box::from_raw(block) });
}

#[test]
fn memory_inside_a_live_object_is_refused() {
    let live_object = Object::place(&allocator(), Thing(3), "test").unwrap();
    // SAFETY: live, this thread alone.
    let found = unsafe { live(live_object.as_ptr().cast_const(), "f") }.unwrap();
    let middle = size_of::<Object<Thing>>() / 2;
    let inside = std::ptr::from_ref(found.object)
        .cast::<u8>()
        .wrapping_add(middle);
    let start = address(inside);
    assert_eq!(registry().overlapping(start, 1), Some("thing"));
    let before = address(std::ptr::from_ref(found.object)) - 4;
    assert_eq!(
        registry().overlapping(before, 8),
        Some("thing"),
        "reaching into it"
    );
    let end = address(std::ptr::from_ref(found.object)) + size_of::<Object<Thing>>();
    assert_eq!(registry().overlapping(end, 8), None, "just past it");
    assert!(destroy(live_object).is_some());
    assert_eq!(registry().overlapping(start, 1), None, "destroyed");
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
                            unsafe { live(black_box(pointer.as_ptr().cast_const()), "f") }.is_some()
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

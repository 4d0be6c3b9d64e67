//! A global allocator that forwards to the system allocator and counts
//! allocations on the current thread, so a test can assert that a code path
//! allocates nothing while other test threads run; it also keeps the
//! current thread's live heap bytes (allocated minus freed on that thread),
//! so a bench can say how much heap a thread's state holds.
//!
//! ```text
//! #[global_allocator]
//! static GLOBAL: counting_alloc::Counting = counting_alloc::Counting;
//!
//! let (allocations, result) = counting_alloc::count(|| work());
//! assert_eq!(allocations, 0);
//! let before = counting_alloc::live_bytes();
//! let state = build();
//! let held = counting_alloc::live_bytes() - before;
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
    static LIVE_BYTES: Cell<i64> = const { Cell::new(0) };
}

/// The counting allocator; install it with `#[global_allocator]`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counting;

/// Counts one allocation of `bytes` on this thread.
fn allocated(bytes: usize) {
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
    let _ = LIVE_BYTES.try_with(|c| c.set(c.get().wrapping_add(bytes as i64)));
}

/// Counts `bytes` freed on this thread.
fn freed(bytes: usize) {
    let _ = LIVE_BYTES.try_with(|c| c.set(c.get().wrapping_sub(bytes as i64)));
}

// SAFETY: every call is forwarded unchanged to the system allocator, which
// upholds the GlobalAlloc contract; counting touches only thread-local
// integers and never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's layout contract is passed through unchanged.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            allocated(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            allocated(layout.size());
        }
        ptr
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` and `layout` come from this allocator, which is the
        // system allocator's, as the caller guarantees.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            freed(layout.size());
            allocated(new_size);
        }
        new
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        freed(layout.size());
        // SAFETY: as for `realloc`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Allocations made so far on this thread.
pub fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// Runs `f` and returns how many allocations it made on this thread.
pub fn count<T>(f: impl FnOnce() -> T) -> (u64, T) {
    let before = allocations();
    let result = f();
    (allocations() - before, result)
}

/// Heap bytes allocated on this thread and not yet freed, minus those it
/// freed that another thread had allocated (so only differences taken on
/// one thread mean anything). Requested sizes, not the allocator's
/// rounded-up blocks.
pub fn live_bytes() -> i64 {
    LIVE_BYTES.with(Cell::get)
}

/// Whether [`Counting`] is the global allocator of this program: whether
/// an allocation here is counted.
pub fn installed() -> bool {
    let (allocations, boxed) = count(|| std::hint::black_box(Box::new(0u64)));
    drop(boxed);
    allocations > 0
}

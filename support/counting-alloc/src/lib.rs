//! A global allocator that forwards to the system allocator and counts
//! allocations on the current thread, so a test can assert that a code path
//! allocates nothing while other test threads run.
//!
//! ```text
//! #[global_allocator]
//! static GLOBAL: counting_alloc::Counting = counting_alloc::Counting;
//!
//! let (allocations, result) = counting_alloc::count(|| work());
//! assert_eq!(allocations, 0);
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

/// The counting allocator; install it with `#[global_allocator]`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counting;

// SAFETY: every call is forwarded unchanged to the system allocator, which
// upholds the GlobalAlloc contract; counting touches only a thread-local
// integer and never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: the caller's layout contract is passed through unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: `ptr` and `layout` come from this allocator, which is the
        // system allocator's, as the caller guarantees.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
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

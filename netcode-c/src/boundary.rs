//! The C boundary's defences: [`guard`], which keeps every panic on the
//! Rust side, and the checks of what C hands us (pointers, lengths,
//! strings), each failure logged at error level. Object pointers are
//! checked by `objects` (the registry of live objects).
//!
//! What can be detected is: NULL, a misaligned pointer, a negative length
//! or one over the maximum, an unterminated string within its limit. A
//! pointer to memory that is not what it claims beyond that (a wrong
//! length for a real buffer) cannot be detected from here.

use std::ffi::{c_char, c_int};
use std::panic::{AssertUnwindSafe, catch_unwind};

use netcode_std::proto::constants::MAX_PAYLOAD_BYTES;

use crate::logging;

/// Runs `body`, the whole of an exported function; a panic in it is
/// caught, logged as `netcode: {function}: internal error (panic caught at
/// the C boundary)`, and turned into `fallback`.
pub(crate) fn guard<R>(function: &'static str, fallback: R, body: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(value) => value,
        Err(_) => {
            // Logging itself must not panic here: it takes no lock that a
            // panic could have poisoned.
            logging::error(format_args!(
                "{function}: internal error (panic caught at the C boundary)"
            ));
            fallback
        }
    }
}

/// `len` bytes at `data`, if `data` is not NULL and `len` is in
/// `0..=max`; otherwise logs why (naming `what`) and returns `None`.
///
/// # Safety
///
/// When `data` is not NULL and `len` is in range, `data` must point to
/// `len` readable bytes that nothing writes while the slice lives (`'a`
/// is the caller's choice: keep it within the exported call).
pub(crate) unsafe fn bytes<'a>(
    data: *const u8,
    len: c_int,
    max: usize,
    what: &str,
) -> Option<&'a [u8]> {
    let len = length(data, len, max, what)?;
    // SAFETY: `data` is not NULL, and the caller promises `len` readable
    // bytes there, unchanged while the slice lives; u8 has alignment 1.
    Some(unsafe { std::slice::from_raw_parts(data, len) })
}

/// `bytes` bytes at `data` if they are a payload's size (1 to
/// `MAX_PAYLOAD_BYTES`, 1200); otherwise logs why (naming `function`) and
/// returns `None`.
///
/// # Safety
///
/// As for [`bytes`]: when `data` is not NULL and `bytes` is in range,
/// `data` must point to `bytes` readable bytes that nothing writes while
/// the slice lives.
pub(crate) unsafe fn payload<'a>(
    data: *const u8,
    bytes: c_int,
    function: &str,
) -> Option<&'a [u8]> {
    // SAFETY: `bytes` refuses NULL and lengths outside 0..=1200; otherwise
    // `data` holds `bytes` readable bytes (this function's contract).
    let data = unsafe { self::bytes(data, bytes, MAX_PAYLOAD_BYTES, function) }?;
    if data.is_empty() {
        logging::error(format_args!(
            "{function}: 0 bytes is not a payload (1 to {MAX_PAYLOAD_BYTES})"
        ));
        return None;
    }
    Some(data)
}

/// [`bytes`], writable: `len` bytes at `data` that the caller lets us
/// change.
///
/// # Safety
///
/// When `data` is not NULL and `len` is in range, `data` must point to
/// `len` writable bytes that nothing else reads or writes while the slice
/// lives.
pub(crate) unsafe fn bytes_mut<'a>(
    data: *mut u8,
    len: c_int,
    max: usize,
    what: &str,
) -> Option<&'a mut [u8]> {
    let len = length(data, len, max, what)?;
    // SAFETY: `data` is not NULL, and the caller promises `len` writable
    // bytes there, used by nothing else while the slice lives.
    Some(unsafe { std::slice::from_raw_parts_mut(data, len) })
}

/// A buffer C lends for the length of an exported call, checked (not
/// NULL, its length in range) but not yet borrowed: [`work_on`](Self::work_on)
/// makes the slice for one closure only, so no Rust reference to C's
/// memory outlives the work on it, and a callback into C made after that
/// work (the send override at the end of a batch) may touch the buffer.
pub(crate) struct Lent {
    data: *mut u8,
    len: usize,
}

impl Lent {
    /// The `len` bytes at `data`, if `data` is not NULL and `len` is in
    /// `0..=max`; otherwise logs why (naming `what`) and returns `None`.
    ///
    /// # Safety
    ///
    /// When `data` is not NULL and `len` is in range, `data` must point to
    /// `len` writable bytes for as long as the `Lent` lives, which nothing
    /// but C's callbacks reads or writes meanwhile, and none of those that
    /// may run inside [`work_on`](Self::work_on)'s closure (the printf
    /// hook, for a log line).
    pub(crate) unsafe fn new(data: *mut u8, len: c_int, max: usize, what: &str) -> Option<Self> {
        let len = length(data, len, max, what)?;
        Some(Self { data, len })
    }

    /// Runs `work` on the bytes, writable.
    pub(crate) fn work_on<R>(&mut self, work: impl FnOnce(&mut [u8]) -> R) -> R {
        // SAFETY: `data` is not NULL and holds `len` writable bytes that
        // nothing else uses while the closure runs (`new`'s contract); the
        // slice lives for the closure only.
        work(unsafe { std::slice::from_raw_parts_mut(self.data, self.len) })
    }
}

/// Checks a buffer pointer and its length from C.
#[inline]
fn length(data: *const u8, len: c_int, max: usize, what: &str) -> Option<usize> {
    match usize::try_from(len) {
        Ok(n) if n <= max && !data.is_null() => Some(n),
        _ => {
            refuse_length(data, len, max, what);
            None
        }
    }
}

/// Logs why [`length`] refused a buffer.
#[cold]
#[inline(never)]
fn refuse_length(data: *const u8, len: c_int, max: usize, what: &str) {
    if data.is_null() {
        logging::error(format_args!("{what} is NULL"));
    } else {
        logging::error(format_args!("{what}: {len} bytes is not in 0..={max}"));
    }
}

/// Exactly `N` bytes at `data`, for fixed-size arguments (a key, user
/// data, a connect token); logs and returns `None` for NULL.
///
/// # Safety
///
/// When `data` is not NULL it must point to `N` readable bytes.
pub(crate) unsafe fn array<'a, const N: usize>(data: *const u8, what: &str) -> Option<&'a [u8; N]> {
    if data.is_null() {
        logging::error(format_args!("{what} is NULL"));
        return None;
    }
    // SAFETY: not NULL, and the caller promises N readable bytes; [u8; N]
    // has alignment 1.
    Some(unsafe { &*data.cast::<[u8; N]>() })
}

/// The bytes of the C string at `text` before its first NUL, or its first
/// `max` bytes when there is no NUL among them (then `complete` is false):
/// never reads past the first NUL, nor past `max` bytes.
///
/// # Safety
///
/// `text` is not NULL, and the bytes from `text` up to its first NUL, or
/// its first `max` bytes if there is no NUL within them, are readable and
/// unchanged while the slice lives.
pub(crate) unsafe fn c_prefix<'a>(text: *const c_char, max: usize) -> (&'a [u8], bool) {
    let text = text.cast::<u8>();
    let mut len = 0;
    // SAFETY: every byte read is before the first NUL, or the NUL itself,
    // and within `max` bytes of `text`: readable by the caller's promise.
    while len < max && unsafe { *text.add(len) } != 0 {
        len += 1;
    }
    // SAFETY: the `len` bytes just read (none when `len` is 0), readable and
    // unchanged while the slice lives (the caller's promise); u8 has
    // alignment 1.
    let bytes = unsafe { std::slice::from_raw_parts(text, len) };
    (bytes, len < max)
}

/// The C string at `text`, if it is not NULL, ends within `max` bytes and
/// is UTF-8; otherwise logs why and returns `None`. Never reads past the
/// first NUL, nor past `max` bytes.
///
/// # Safety
///
/// When `text` is not NULL, the bytes from `text` up to its first NUL, or
/// its first `max` bytes if there is no NUL within them, must be readable.
pub(crate) unsafe fn c_str<'a>(text: *const c_char, max: usize, what: &str) -> Option<&'a str> {
    if text.is_null() {
        logging::error(format_args!("{what} is NULL"));
        return None;
    }
    // SAFETY: not NULL; the caller promises the bytes `c_prefix` reads.
    let (bytes, complete) = unsafe { c_prefix(text, max) };
    if !complete {
        logging::error(format_args!(
            "{what} is not a string of less than {max} bytes"
        ));
        return None;
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => Some(text),
        Err(_) => {
            logging::error(format_args!("{what} is not UTF-8"));
            None
        }
    }
}

/// Writes `value` through the out-pointer `out` unless it is NULL or
/// misaligned (then logs, naming `what`); returns whether it wrote.
///
/// # Safety
///
/// When `out` is not NULL and aligned, it must point to memory writable as
/// a `T`.
pub(crate) unsafe fn write<T>(out: *mut T, value: T, what: &str) -> bool {
    if out.is_null() {
        logging::error(format_args!("{what} is NULL"));
        return false;
    }
    if !out.is_aligned() {
        logging::error(format_args!("{what} ({out:p}) is misaligned"));
        return false;
    }
    // SAFETY: not NULL, aligned, and writable as a T by the caller's
    // promise; `write` does not read or drop what was there.
    unsafe { out.write(value) };
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_the_fallback() {
        assert_eq!(guard("test", -1, || panic!("boom")), -1);
        assert_eq!(guard("test", -1, || 7), 7);
    }

    #[test]
    fn lengths_are_checked() {
        let data = [1u8, 2, 3];
        // SAFETY: `data` holds 3 bytes.
        unsafe {
            assert_eq!(bytes(data.as_ptr(), 3, 3, "data"), Some(&data[..]));
            assert_eq!(bytes(data.as_ptr(), 4, 3, "data"), None);
            assert_eq!(bytes(data.as_ptr(), -1, 3, "data"), None);
            assert_eq!(bytes(std::ptr::null(), 0, 3, "data"), None);
        }
    }

    #[test]
    fn strings_are_bounded() {
        let text = c"127.0.0.1";
        // SAFETY: a NUL-terminated string; the bounded one is read within
        // its bytes.
        unsafe {
            assert_eq!(c_str(text.as_ptr(), 256, "s"), Some("127.0.0.1"));
            assert_eq!(c_str(text.as_ptr(), 4, "s"), None);
            assert_eq!(c_str(std::ptr::null(), 4, "s"), None);
            let bad = [0xffu8, 0];
            assert_eq!(c_str(bad.as_ptr().cast(), 4, "s"), None);
        }
    }

    #[test]
    fn out_pointers_are_checked() {
        let mut value = 0u64;
        // SAFETY: `value` is writable; NULL is refused before any write.
        unsafe {
            assert!(write(&mut value, 9, "out"));
            assert!(!write(std::ptr::null_mut::<u64>(), 9, "out"));
        }
        assert_eq!(value, 9);
    }
}

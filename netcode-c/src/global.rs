//! The library's global functions: `netcode_init` / `netcode_term`, the
//! log level and the printf and assert hooks (with the exported variable
//! `netcode_assert_function`), random bytes, sleep and time, and packet
//! tagging for the sockets created afterwards.

use std::ffi::{c_char, c_int};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, Instant};

use netcode_std::PacketTagging;

use crate::abi::{AssertFunction, NETCODE_OK, PrintfFunction};
use crate::boundary::{self, guard};
use crate::logging;

/// How many `netcode_init` calls have no `netcode_term` yet.
static INITIALIZED: AtomicI32 = AtomicI32::new(0);

/// Whether `netcode_enable_packet_tagging` was called.
static PACKET_TAGGING: AtomicBool = AtomicBool::new(false);

/// The assert handler the `netcode_assert` macro of the header calls: by
/// default [`default_assert_handler`]. C may read and assign it directly,
/// or through `netcode_set_assert_function`. This library itself never
/// asserts: it logs and refuses instead.
#[unsafe(no_mangle)]
#[allow(non_upper_case_globals)]
pub static mut netcode_assert_function: Option<AssertFunction> = Some(default_assert_handler);

/// Bytes of each string the default assert handler prints at most.
const MAX_ASSERT_TEXT_BYTES: usize = 4096;

/// The default assert handler: prints the failed condition and where,
/// through the printf hook, then aborts the process.
///
/// # Safety
///
/// Each string is NULL or a C string (or at least 4096 readable bytes:
/// each is read up to its NUL or 4096 bytes).
pub unsafe extern "C" fn default_assert_handler(
    condition: *const c_char,
    function: *const c_char,
    file: *const c_char,
    line: c_int,
) {
    /// The text of a C string from the assert macro (its first
    /// `MAX_ASSERT_TEXT_BYTES` bytes at most), or `?` for NULL.
    ///
    /// # Safety
    ///
    /// `text` is NULL or readable up to its first NUL or
    /// `MAX_ASSERT_TEXT_BYTES` bytes.
    unsafe fn text(text: *const c_char) -> String {
        if text.is_null() {
            return "?".to_owned();
        }
        // SAFETY: not NULL; `c_prefix` reads no further than the first NUL
        // or `MAX_ASSERT_TEXT_BYTES` bytes, which the caller promises
        // readable.
        let (bytes, _) = unsafe { boundary::c_prefix(text, MAX_ASSERT_TEXT_BYTES) };
        String::from_utf8_lossy(bytes).into_owned()
    }
    // SAFETY: each is NULL or a C string (the macro passes string literals;
    // this function's contract), read up to its NUL or a bound.
    let (condition, function, file) = unsafe { (text(condition), text(function), text(file)) };
    logging::print_raw(&format!(
        "netcode: assertion failed: {condition} (in {function}, {file}:{line})\n"
    ));
    std::process::abort();
}

/// Initializes the library, counting calls (each `netcode_term` undoes
/// one): installs the logger through which netcode-std's log records reach
/// the printf hook. Always `NETCODE_OK`.
#[unsafe(no_mangle)]
pub extern "C" fn netcode_init() -> c_int {
    guard("netcode_init", NETCODE_OK, || {
        logging::install();
        INITIALIZED.fetch_add(1, Ordering::Relaxed);
        NETCODE_OK
    })
}

/// Undoes one `netcode_init`; more calls than inits are ignored (logged).
#[unsafe(no_mangle)]
pub extern "C" fn netcode_term() {
    guard("netcode_term", (), || {
        let undone = INITIALIZED.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
            (n > 0).then(|| n - 1)
        });
        if undone.is_err() {
            logging::error(format_args!("netcode_term: called without netcode_init"));
        }
    })
}

/// Sets the log level: `NETCODE_LOG_LEVEL_NONE` (the default) to
/// `NETCODE_LOG_LEVEL_DEBUG`.
#[unsafe(no_mangle)]
pub extern "C" fn netcode_log_level(level: c_int) {
    guard("netcode_log_level", (), || {
        logging::install();
        logging::set_level(level);
    })
}

/// Sets the function every log line is printed with (`printf`-like, called
/// as `function("%s", line)`); NULL restores the default, the C library's
/// `printf`.
#[unsafe(no_mangle)]
pub extern "C" fn netcode_set_printf_function(function: Option<PrintfFunction>) {
    guard("netcode_set_printf_function", (), || {
        logging::set_printf(function);
    })
}

/// Sets `netcode_assert_function`; NULL restores the default handler.
#[unsafe(no_mangle)]
pub extern "C" fn netcode_set_assert_function(function: Option<AssertFunction>) {
    guard("netcode_set_assert_function", (), || {
        let function = function.or(Some(default_assert_handler));
        // SAFETY: the library is single-threaded by contract (as the
        // reference); the write goes through a raw pointer, making no
        // reference to the mutable static.
        unsafe { (&raw mut netcode_assert_function).write(function) };
    })
}

/// Fills `bytes` bytes at `data` from the operating system's generator.
/// NULL or a negative count is logged and ignored. A generator that fails
/// aborts the process: keys must never be predictable.
///
/// # Safety
///
/// `data` is NULL or `bytes` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_random_bytes(data: *mut u8, bytes: c_int) {
    guard("netcode_random_bytes", (), || {
        // SAFETY: `bytes_mut` refuses NULL and a negative count; otherwise
        // `bytes` writable bytes (this function's contract), used by
        // nothing else while filled (no callback runs meanwhile).
        let Some(data) =
            (unsafe { boundary::bytes_mut(data, bytes, usize::MAX, "netcode_random_bytes: data") })
        else {
            return;
        };
        if let Err(e) = getrandom::fill(data) {
            logging::print_raw(&format!(
                "netcode: netcode_random_bytes: the operating system's random generator failed ({e}); aborting\n"
            ));
            std::process::abort();
        }
    })
}

/// Sleeps `seconds`; a negative, NaN or unrepresentable time is logged and
/// ignored.
#[unsafe(no_mangle)]
pub extern "C" fn netcode_sleep(seconds: f64) {
    guard("netcode_sleep", (), || {
        match Duration::try_from_secs_f64(seconds) {
            Ok(duration) => std::thread::sleep(duration),
            Err(_) => logging::error(format_args!(
                "netcode_sleep: {seconds} is not a time to sleep"
            )),
        }
    })
}

/// Seconds on a monotonic clock since the first call (which returns 0.0).
#[unsafe(no_mangle)]
pub extern "C" fn netcode_time() -> f64 {
    guard("netcode_time", 0.0, || {
        static START: OnceLock<Instant> = OnceLock::new();
        let mut first = false;
        let start = START.get_or_init(|| {
            first = true;
            Instant::now()
        });
        if first {
            0.0
        } else {
            start.elapsed().as_secs_f64()
        }
    })
}

/// Marks every datagram of the sockets created afterwards with the
/// reference's type-of-service byte (46, `IP_TOS` / `IPV6_TCLASS`).
#[unsafe(no_mangle)]
pub extern "C" fn netcode_enable_packet_tagging() {
    guard("netcode_enable_packet_tagging", (), || {
        PACKET_TAGGING.store(true, Ordering::Relaxed);
    })
}

/// The tagging of sockets created now.
pub(crate) fn packet_tagging() -> PacketTagging {
    if PACKET_TAGGING.load(Ordering::Relaxed) {
        PacketTagging::Reference
    } else {
        PacketTagging::Off
    }
}

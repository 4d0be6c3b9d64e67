//! The C library's logging: a global level (`netcode_log_level`, default
//! NONE), a printf-style sink (`netcode_set_printf_function`, default the
//! C library's `printf`, as the reference), and the lines this crate and
//! netcode-std write.
//!
//! Every line is `netcode: <message>\n`: pass [`error`], [`info`] and
//! [`debug`] the message alone. netcode-std's records (target `netcode`)
//! reach the same sink through [`Logger`], installed as the `log` crate's
//! logger by `netcode_init` (unless the process already has one): `error`
//! and `warn` records at NETCODE_LOG_LEVEL_ERROR, `info` at INFO, `debug`
//! and `trace` at DEBUG.

#[cfg(not(windows))]
use std::ffi::c_char;
use std::ffi::{CString, c_int};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, Ordering};

use crate::abi::{
    NETCODE_LOG_LEVEL_DEBUG, NETCODE_LOG_LEVEL_ERROR, NETCODE_LOG_LEVEL_INFO,
    NETCODE_LOG_LEVEL_NONE, PrintfFunction,
};

/// The level set by `netcode_log_level`.
static LEVEL: AtomicI32 = AtomicI32::new(NETCODE_LOG_LEVEL_NONE);

/// The printf hook as a pointer (NULL: the default). A pointer, not an
/// integer, so that the function pointer read back keeps its provenance.
static PRINTF: AtomicPtr<()> = AtomicPtr::new(std::ptr::null_mut());

/// Whether [`Logger`] is the process's `log` logger.
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Sets the level; levels above DEBUG count as DEBUG, below NONE as NONE.
pub(crate) fn set_level(level: c_int) {
    let level = level.clamp(NETCODE_LOG_LEVEL_NONE, NETCODE_LOG_LEVEL_DEBUG);
    LEVEL.store(level, Ordering::Relaxed);
    if INSTALLED.load(Ordering::Relaxed) {
        log::set_max_level(filter(level));
    }
}

/// The current level.
pub(crate) fn level() -> c_int {
    LEVEL.load(Ordering::Relaxed)
}

/// Sets the printf hook (`None`: the default, the C library's printf).
pub(crate) fn set_printf(function: Option<PrintfFunction>) {
    let pointer = function.map_or(std::ptr::null_mut(), |f| f as *mut ());
    PRINTF.store(pointer, Ordering::Relaxed);
}

#[cfg(not(windows))]
unsafe extern "C" {
    /// The C library's printf, the default sink.
    #[link_name = "printf"]
    fn c_printf(format: *const c_char, ...) -> c_int;
}

/// The printf hook, or the C library's printf (on Windows, whose C library
/// has no printf symbol to link, `None`: Rust's standard output).
fn printf() -> Option<PrintfFunction> {
    let pointer = PRINTF.load(Ordering::Relaxed);
    if pointer.is_null() {
        #[cfg(not(windows))]
        return Some(c_printf);
        #[cfg(windows)]
        return None;
    }
    // SAFETY: a non-NULL pointer here was stored by `set_printf` from a
    // `PrintfFunction` cast to `*mut ()` (same size, provenance kept: a
    // pointer-to-pointer transmute, not one from an integer), so this turns
    // it back into the very function pointer C gave us.
    Some(unsafe { std::mem::transmute::<*mut (), PrintfFunction>(pointer) })
}

/// Prints `text` as is through the printf hook (not filtered by the
/// level); interior NULs are dropped.
pub(crate) fn print_raw(text: &str) {
    let Some(function) = printf() else {
        use std::io::Write;
        let _ = std::io::stdout().lock().write_all(text.as_bytes());
        return;
    };
    let mut text = text.to_owned();
    text.retain(|c| c != '\0');
    let Ok(text) = CString::new(text) else {
        return;
    };
    // SAFETY: the hook is the C program's printf-like function (or the C
    // library's printf); it gets a constant "%s" format and one
    // NUL-terminated string argument, which outlives the call.
    unsafe {
        function(c"%s".as_ptr(), text.as_ptr());
    }
}

/// Installs [`Logger`] as the `log` crate's logger, once, unless the
/// process has another.
pub(crate) fn install() {
    static LOGGER: Logger = Logger;
    if INSTALLED.load(Ordering::Relaxed) {
        return;
    }
    if log::set_logger(&LOGGER).is_ok() {
        INSTALLED.store(true, Ordering::Relaxed);
        log::set_max_level(filter(level()));
    }
}

/// The `log` filter of a C level.
fn filter(level: c_int) -> log::LevelFilter {
    match level {
        NETCODE_LOG_LEVEL_NONE => log::LevelFilter::Off,
        NETCODE_LOG_LEVEL_ERROR => log::LevelFilter::Warn,
        NETCODE_LOG_LEVEL_INFO => log::LevelFilter::Info,
        _ => log::LevelFilter::Trace,
    }
}

/// The C level of a `log` level.
fn c_level(level: log::Level) -> c_int {
    match level {
        log::Level::Error | log::Level::Warn => NETCODE_LOG_LEVEL_ERROR,
        log::Level::Info => NETCODE_LOG_LEVEL_INFO,
        log::Level::Debug | log::Level::Trace => NETCODE_LOG_LEVEL_DEBUG,
    }
}

/// Logs `message` at error level.
pub(crate) fn error(message: fmt::Arguments<'_>) {
    print(NETCODE_LOG_LEVEL_ERROR, message);
}

/// Logs `message` at info level.
pub(crate) fn info(message: fmt::Arguments<'_>) {
    print(NETCODE_LOG_LEVEL_INFO, message);
}

/// Logs `message` at debug level.
pub(crate) fn debug(message: fmt::Arguments<'_>) {
    print(NETCODE_LOG_LEVEL_DEBUG, message);
}

/// Prints `netcode: {message}\n` through the hook when `at` is within the
/// level.
fn print(at: c_int, message: fmt::Arguments<'_>) {
    #[cfg(feature = "test-hooks")]
    capture::record(message);
    if at > level() || at == NETCODE_LOG_LEVEL_NONE {
        return;
    }
    print_raw(&format!("netcode: {message}\n"));
}

/// The Rust tests' view of the log (feature `test-hooks`): the lines this
/// thread logged, at any level, while capturing.
#[cfg(feature = "test-hooks")]
pub mod capture {
    use std::cell::RefCell;
    use std::fmt;

    thread_local! {
        static LINES: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
    }

    /// Starts (or restarts, emptied) capturing this thread's log lines.
    pub fn start() {
        LINES.with(|l| *l.borrow_mut() = Some(Vec::new()));
    }

    /// The lines captured since [`start`] or the last call, without the
    /// `netcode: ` prefix.
    pub fn take() -> Vec<String> {
        LINES.with(|l| {
            l.borrow_mut()
                .as_mut()
                .map(std::mem::take)
                .unwrap_or_default()
        })
    }

    /// Records a line when this thread captures.
    pub(super) fn record(message: fmt::Arguments<'_>) {
        LINES.with(|l| {
            if let Ok(mut lines) = l.try_borrow_mut()
                && let Some(lines) = lines.as_mut()
            {
                lines.push(message.to_string());
            }
        });
    }
}

/// netcode-std's `log` records, printed as this library's lines.
#[derive(Debug)]
pub(crate) struct Logger;

impl log::Log for Logger {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.target().starts_with("netcode") && c_level(metadata.level()) <= level()
    }

    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            print(c_level(record.level()), *record.args());
        }
    }

    fn flush(&self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_map_both_ways() {
        assert_eq!(filter(NETCODE_LOG_LEVEL_NONE), log::LevelFilter::Off);
        assert_eq!(filter(NETCODE_LOG_LEVEL_DEBUG), log::LevelFilter::Trace);
        assert_eq!(c_level(log::Level::Warn), NETCODE_LOG_LEVEL_ERROR);
        assert_eq!(c_level(log::Level::Info), NETCODE_LOG_LEVEL_INFO);
        assert_eq!(c_level(log::Level::Trace), NETCODE_LOG_LEVEL_DEBUG);
    }

    #[cfg(not(windows))]
    #[test]
    fn the_printf_hook_comes_back_as_given() {
        let given: PrintfFunction = c_printf;
        set_printf(Some(given));
        assert!(printf().is_some_and(|f| std::ptr::fn_addr_eq(f, given)));
        set_printf(None);
        assert!(PRINTF.load(Ordering::Relaxed).is_null());
    }
}

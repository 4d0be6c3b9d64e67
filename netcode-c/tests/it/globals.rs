//! The library's process-wide state, which every test of this binary
//! shares with the tests running beside it on other threads, and how they
//! keep out of each other's way:
//!
//! * **The log settings** (`netcode_log_level`, the printf and assert
//!   hooks): a test that changes them holds [`settings_changed`], which
//!   waits for every test that reads its thread's log lines to finish
//!   ([`capture_log`], [`settings_unchanged`]). While the level is above NONE, netcode-std's own
//!   records reach the lines of whatever thread made them, and a test
//!   counting its lines would count those too.
//! * **The create errors** (`netcode_client_create_error`,
//!   `netcode_server_create_error`: one value per process, as in the
//!   reference): every create of the binary runs alone with the read of
//!   its error after it ([`create_alone`]; [`create_client`] for clients,
//!   `server_common::create` for servers), so another test's create cannot
//!   land in between.
//!
//! The rest is per object or per thread and needs nothing: the registry of
//! live objects (a test's objects are its own; pointers a test passes
//! after their destroy point to memory the test keeps from being reused,
//! see `Counter::keep`, `World::keep_freed`, and live_objects' allocators),
//! the lines a thread logged, `netcode_init` / `netcode_term` (a count:
//! each test pairs them), and `netcode_time` (one monotonic clock).
#![allow(dead_code, unreachable_pub)]

use std::cell::Cell;
use std::ffi::c_int;
use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use netcode::{netcode_client_create_error, netcode_client_t};

/// Held shared by the tests that read their log lines, exclusively by a
/// test that changes the log settings.
static SETTINGS: RwLock<()> = RwLock::new(());

/// Held by a create and the read of its error after it.
static CREATES: Mutex<()> = Mutex::new(());

/// The log settings to this test alone until the guard drops: no test
/// that reads its log lines runs meanwhile. The holder leaves them as it
/// found them (level NONE, the default hooks).
pub fn settings_changed() -> RwLockWriteGuard<'static, ()> {
    SETTINGS.write().unwrap_or_else(PoisonError::into_inner)
}

/// Keeps the log settings at their defaults until the guard drops, for a
/// test that reads its log lines (take them before the guard drops).
#[must_use = "the settings may change once the guard is dropped"]
pub fn settings_unchanged() -> RwLockReadGuard<'static, ()> {
    SETTINGS.read().unwrap_or_else(PoisonError::into_inner)
}

/// [`settings_unchanged`], and starts capturing this thread's log lines
/// (`netcode::test_log`).
#[must_use = "the settings may change once the guard is dropped"]
pub fn capture_log() -> RwLockReadGuard<'static, ()> {
    let settings = settings_unchanged();
    netcode::test_log::start();
    settings
}

/// Runs `create`, a create call and the read of its create error, with no
/// other create of this binary in between.
pub fn create_alone<T>(create: impl FnOnce() -> T) -> T {
    let _alone: MutexGuard<'_, ()> = CREATES.lock().unwrap_or_else(PoisonError::into_inner);
    create()
}

thread_local! {
    /// `netcode_client_create_error` after this thread's last
    /// [`create_client`].
    static CLIENT_CREATE_ERROR: Cell<c_int> = const { Cell::new(-1) };
}

/// Runs `create` (a `netcode_client_create(_dual)` call) and records
/// `netcode_client_create_error` after it, with no other create of this
/// binary in between.
pub fn create_client(create: impl FnOnce() -> *mut netcode_client_t) -> *mut netcode_client_t {
    create_alone(|| {
        let client = create();
        CLIENT_CREATE_ERROR.with(|e| e.set(netcode_client_create_error()));
        client
    })
}

/// `netcode_client_create_error` right after this thread's last
/// [`create_client`].
pub fn client_create_error() -> c_int {
    CLIENT_CREATE_ERROR.with(Cell::get)
}

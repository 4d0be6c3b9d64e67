//! The server object a C program holds: its type, where its memory comes
//! from and goes back to, and the way every call reaches it.
//!
//! The object is an [`objects::Object`]: a pointer from C is looked up in
//! the registry of live objects (NULL, misaligned, destroyed, a client, or
//! anything else is refused) before anything is read through it, and the
//! state is reached only inside [`Handle::with`], which refuses a call
//! made while another call on the same server is inside the host (from a
//! send or receive override, or an allocator callback). Connect,
//! disconnect and loopback callbacks run outside it
//! ([`Handle::callback`]), so they may call the server freely, as the
//! reference allows. A destroy asked for while a call is under way (from
//! any callback) is carried out when the outermost call returns (the end
//! of every call, in `call`, asks [`Handle::destroy_due`]): no call ever
//! continues on freed memory.

use std::cell::Cell;
use std::ptr::NonNull;

use crate::allocator::Allocator;
use crate::logging;
use crate::objects::{self, Kind, Object};

use super::state::ServerState;

/// `struct netcode_server_t`: opaque to C. Made in memory from the
/// config's allocator by `netcode_server_create` and given back to its
/// free function by `netcode_server_destroy`. A `netcode_server_t *` C
/// holds is the object's handle (`objects`), never its memory, and is
/// never dereferenced.
#[repr(transparent)]
#[allow(non_camel_case_types)]
pub struct netcode_server_t(Object<ServerState>);

impl Kind for ServerState {
    const NAME: &'static str = "server";
}

/// Puts `state` in memory from `allocator` (its alignment checked) and
/// registers it as a live server; NULL (logged) when the allocator fails.
pub(crate) fn allocate(
    function: &str,
    allocator: &Allocator,
    state: ServerState,
) -> *mut netcode_server_t {
    match Object::place(allocator, state, function) {
        // The handle of an `Object<ServerState>`, as C holds it.
        Some(handle) => handle.as_ptr().cast::<netcode_server_t>(),
        None => std::ptr::null_mut(),
    }
}

/// A call's way into a live server object.
pub(crate) struct Handle<'a> {
    object: &'a Object<ServerState>,
    pointer: *mut netcode_server_t,
    function: &'static str,
    /// The state was refused once (the call came from inside the host):
    /// it stays so for the whole call, which gives up quietly after the
    /// one error line.
    refused: Cell<bool>,
}

impl Handle<'_> {
    /// The object behind `server`, or `None` (logged) for NULL, a
    /// misaligned pointer, or a pointer that is not a live server (looked
    /// up in the registry of live objects before anything is read). Made
    /// by `call::call` alone, which ends every call it makes this way.
    ///
    /// # Safety
    ///
    /// `server` may be any pointer. C's contract, which cannot be
    /// checked: a server is not used by two threads at once (nor destroyed
    /// by one while another uses it), and its memory is freed only by
    /// `netcode_server_destroy`.
    pub(crate) unsafe fn new(
        server: *mut netcode_server_t,
        function: &'static str,
    ) -> Option<Self> {
        // SAFETY: looked up before use, the threading contract is the
        // caller's promise; `server` is looked up as the handle of an
        // `Object<ServerState>`. The object outlives the handle: it is
        // freed only by `release`, which runs once no call is under way on
        // it (no callback, not busy), when no other handle exists.
        let found =
            unsafe { objects::live(server.cast_const().cast::<Object<ServerState>>(), function) }?;
        Some(Handle {
            object: found.object,
            pointer: server,
            function,
            refused: Cell::new(false),
        })
    }

    /// The name of the exported function this handle serves, for logs.
    pub(crate) fn function(&self) -> &'static str {
        self.function
    }

    /// Runs `body` on the server's state, or returns `fallback` (logged)
    /// when a call on this server is already inside it: a call from a send
    /// or receive override, or from an allocator callback.
    pub(crate) fn with<R>(&self, fallback: R, body: impl FnOnce(&mut ServerState) -> R) -> R {
        if self.refused.get() {
            return fallback;
        }
        match self.object.enter(self.function, body) {
            Some(value) => value,
            None => {
                self.refused.set(true);
                fallback
            }
        }
    }

    /// Runs `call`, which calls into the application, counted as a
    /// callback under way so that a destroy asked for meanwhile waits.
    pub(crate) fn callback(&self, call: impl FnOnce()) {
        self.with((), |state| state.calls.depth += 1);
        /// Counts the callback finished on every way out.
        struct Done<'h, 'a>(&'h Handle<'a>);
        impl Drop for Done<'_, '_> {
            fn drop(&mut self) {
                self.0.with((), |state| {
                    state.calls.depth = state.calls.depth.saturating_sub(1)
                });
            }
        }
        let _done = Done(self);
        call();
    }

    /// Asks for the server to be destroyed: at once when no call is under
    /// way on it, otherwise when the outermost call returns (the end of
    /// that call does it, see [`destroy_due`](Self::destroy_due)).
    pub(crate) fn destroy(&self) {
        let asked = self.with(None, |state| {
            let calls = &mut state.calls;
            let first = !calls.doomed;
            calls.doomed = true;
            Some((first, calls.depth > 0))
        });
        match asked {
            Some((false, _)) => logging::info(format_args!(
                "{}: the server is already being destroyed",
                self.function
            )),
            Some((true, true)) => logging::info(format_args!(
                "{}: called from a callback; the server is destroyed when the call that ran the callback returns",
                self.function
            )),
            Some((true, false)) => {}
            // Inside the host (from an override or allocator callback):
            // refused, and logged by `with`.
            None => {}
        }
        if let Some((true, _)) = asked {
            DOOMED.with(|d| d.set(d.get() + 1));
        }
        // The end of this call destroys now when nothing is under way.
    }

    /// Whether the end of this call, the outermost, is where a destroy
    /// that waited for it is carried out: then the server is marked as
    /// being destroyed, and the caller stops it, delivers its callbacks
    /// and [`release`](Self::release)s it.
    #[inline]
    pub(crate) fn destroy_due(&self) -> bool {
        DOOMED.with(Cell::get) != 0 && self.doomed_now()
    }

    /// [`destroy_due`](Self::destroy_due) once some server of this thread
    /// waits for its destroy.
    #[inline(never)]
    fn doomed_now(&self) -> bool {
        let now = self.with(None, |state| {
            let calls = &mut state.calls;
            let now = calls.doomed && !calls.destroying && calls.depth == 0;
            calls.destroying |= now;
            Some(now)
        });
        if now == Some(true) {
            DOOMED.with(|d| d.set(d.get().saturating_sub(1)));
            return true;
        }
        false
    }

    /// Frees what C never freed, drops the host and gives the object's
    /// memory back to the config's free function: the last step of a
    /// destroy, once [`destroy_due`](Self::destroy_due) said so and the
    /// server was stopped with its callbacks delivered. The object is not
    /// used again.
    pub(crate) fn release(&self) {
        let handle = self;
        let Some(allocator) = handle.with(None, |state| {
            let left = state.packets.free_all(&state.allocator);
            if left > 0 {
                logging::info(format_args!(
                    "{}: freed {left} received packets the application never freed",
                    handle.function
                ));
            }
            Some(state.allocator)
        }) else {
            return;
        };
        // The handle C passed (`netcode_server_t` stands for an
        // `Object<ServerState>`).
        let Some(pointer) = NonNull::new(handle.pointer.cast::<Object<ServerState>>()) else {
            return;
        };
        // SAFETY: the object is live (its handle found it) and no call is
        // under way on it: the end of a call runs this only after
        // `destroy_due` (depth 0, outside `enter`), so no other handle or
        // borrow of the state exists, and `destroying` keeps it from
        // running twice. After `retire` the object is not used again (the
        // call ends with this).
        let Some((state, pointer)) = (unsafe { Object::retire(pointer, handle.function) }) else {
            return;
        };
        drop(state);
        // SAFETY: the object was placed by `allocate` with this allocator, its
        // state has been moved out and dropped, and it is freed once (it left
        // the registry in `retire`: no call reaches it again).
        unsafe { allocator.unplace(pointer) };
    }
}

thread_local! {
    /// Servers of this thread whose destroy was asked for and not yet
    /// carried out (a destroy waits for the outermost call, on the thread
    /// of the callback that asked for it). While none, a call's end has
    /// nothing to check.
    static DOOMED: Cell<usize> = const { Cell::new(0) };
}

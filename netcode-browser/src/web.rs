//! The browser's side of a session (wasm32 only): the clock, the datagram
//! writer as a [`DatagramSink`], the task that reads datagrams into an
//! [`Inbox`] and then records how the session closed, and readable
//! messages from JavaScript errors.
//!
//! Nothing here unwraps anything from JavaScript: every value is checked,
//! every promise's rejection is handled.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Function, Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    Performance, ReadableStreamDefaultReader, ReadableStreamReadResult, WebTransport,
    WebTransportCloseInfo, WebTransportDatagramDuplexStream, WritableStream,
    WritableStreamDefaultWriter,
};

use crate::driver::DatagramSink;
use crate::queue::Inbox;

#[wasm_bindgen]
extern "C" {
    /// A promise, seen only for its `catch` with a plain function.
    #[wasm_bindgen(js_name = Promise)]
    type CatchablePromise;

    /// `promise.catch(handler)`, with a plain JavaScript function as the
    /// handler (one per client, shared by every write).
    #[wasm_bindgen(method, js_name = catch)]
    fn catch(this: &CatchablePromise, handler: &Function) -> JsValue;

    /// A promise, seen only for a `then` with plain functions.
    #[wasm_bindgen(js_name = Promise)]
    type ThenablePromise;

    /// `promise.then(onFulfilled, onRejected)`, with plain JavaScript
    /// functions.
    #[wasm_bindgen(method, js_name = then)]
    fn then_either(
        this: &ThenablePromise,
        on_fulfilled: &Function,
        on_rejected: &Function,
    ) -> JsValue;

    /// A WebTransport session, seen only for a `close` that cannot throw
    /// into Rust.
    #[wasm_bindgen(js_name = WebTransport)]
    type ClosableTransport;

    /// `transport.close()`, with whatever it might throw caught.
    #[wasm_bindgen(method, catch, js_name = close)]
    fn close(this: &ClosableTransport) -> Result<(), JsValue>;
}

/// Whether the global object (a window or a worker) has a property `name`.
pub(crate) fn global_has(name: &str) -> bool {
    Reflect::get(&js_sys::global(), &JsValue::from_str(name))
        .map(|value| !value.is_undefined() && !value.is_null())
        .unwrap_or(false)
}

/// The global `performance` object, in a window or a worker.
pub(crate) fn performance() -> Option<Performance> {
    Reflect::get(&js_sys::global(), &JsValue::from_str("performance"))
        .ok()
        .filter(JsValue::is_object)
        .map(JsCast::unchecked_into)
}

/// Milliseconds on the page's monotonic clock (`performance.now()`), or on
/// the wall clock (`Date.now()`) where there is no `performance`. The
/// [`Clock`](crate::Clock) that reads it never goes back.
pub(crate) fn now_millis(performance: Option<&Performance>) -> f64 {
    performance.map_or_else(js_sys::Date::now, Performance::now)
}

/// A readable message from a JavaScript value thrown or rejected with.
pub(crate) fn js_message(value: &JsValue) -> String {
    if let Some(error) = value.dyn_ref::<js_sys::Error>() {
        let name = String::from(error.name());
        let message = String::from(error.message());
        return match (name.is_empty(), message.is_empty()) {
            (_, true) => name,
            (true, false) => message,
            (false, false) => format!("{name}: {message}"),
        };
    }
    value.as_string().unwrap_or_else(|| format!("{value:?}"))
}

/// A promise that resolves after `milliseconds` (the global `setTimeout`,
/// in a window or a worker), or at once where there is none.
pub(crate) fn delay(milliseconds: i32) -> Promise {
    Promise::new(&mut |resolve: Function, _reject: Function| {
        let global = js_sys::global();
        let scheduled = Reflect::get(&global, &JsValue::from_str("setTimeout"))
            .ok()
            .and_then(|value| value.dyn_into::<Function>().ok())
            .is_some_and(|set_timeout| {
                set_timeout
                    .call2(&global, &resolve, &JsValue::from(milliseconds))
                    .is_ok()
            });
        if !scheduled {
            let _ = resolve.call0(&JsValue::UNDEFINED);
        }
    })
}

/// How [`settle_within`] ended.
#[derive(Debug)]
pub(crate) enum Settled {
    /// The promise fulfilled.
    Fulfilled,
    /// The promise rejected, with this reason.
    Rejected(JsValue),
    /// The bound passed first.
    TimedOut,
}

/// Waits for `promise` for at most `milliseconds`. A rejection that comes
/// after the bound is still handled (never reported as unhandled).
pub(crate) async fn settle_within(promise: &JsValue, milliseconds: i32) -> Settled {
    // Resolves with `true`, the rejection's reason wrapped in an array, or
    // `false` (the timer's), whichever comes first.
    let first = Promise::new(&mut |resolve: Function, _reject: Function| {
        let fulfilled = resolve.clone();
        let on_fulfilled = Closure::once_into_js(move |_: JsValue| {
            let _ = fulfilled.call1(&JsValue::NULL, &JsValue::TRUE);
        });
        let rejected = resolve.clone();
        let on_rejected = Closure::once_into_js(move |reason: JsValue| {
            let _ = rejected.call1(&JsValue::NULL, &js_sys::Array::of1(&reason));
        });
        promise
            .unchecked_ref::<ThenablePromise>()
            .then_either(on_fulfilled.unchecked_ref(), on_rejected.unchecked_ref());
        let on_time = Closure::once_into_js(move |_: JsValue| {
            let _ = resolve.call1(&JsValue::NULL, &JsValue::FALSE);
        });
        let never = Closure::once_into_js(|_: JsValue| {});
        delay(milliseconds)
            .unchecked_ref::<ThenablePromise>()
            .then_either(on_time.unchecked_ref(), never.unchecked_ref());
    });
    match JsFuture::from(first).await {
        Ok(value) if value.as_bool() == Some(true) => Settled::Fulfilled,
        Ok(value) if value.as_bool() == Some(false) => Settled::TimedOut,
        Ok(value) => Settled::Rejected(Reflect::get_u32(&value, 0).unwrap_or(value)),
        // The promise made here never rejects.
        Err(reason) => Settled::Rejected(reason),
    }
}

/// Closes the session, ignoring what it might throw.
pub(crate) fn close(transport: &WebTransport) {
    let _ = transport.unchecked_ref::<ClosableTransport>().close();
}

/// A writer of the session's datagrams: from the datagram stream's
/// `createWritable()` where it has one (Safari 26, whose datagram stream
/// has no `writable` attribute, and the current draft of the standard),
/// else from its `writable` stream (Chromium, Firefox).
pub(crate) fn datagram_writer(
    datagrams: &WebTransportDatagramDuplexStream,
) -> Result<WritableStreamDefaultWriter, JsValue> {
    let create = Reflect::get(datagrams, &JsValue::from_str("createWritable"))?;
    let stream: WritableStream = match create.dyn_ref::<Function>() {
        Some(create) => create.call0(datagrams)?.unchecked_into(),
        None => datagrams.writable(),
    };
    stream.get_writer()
}

/// The session's datagram writer as a [`DatagramSink`]: each datagram is
/// copied into a `Uint8Array` and written without waiting (the writer
/// queues it); a write that rejects is counted, never left unhandled.
#[derive(Debug)]
pub(crate) struct Writer {
    writer: WritableStreamDefaultWriter,
    on_reject: Function,
    rejected: Rc<Cell<u64>>,
    last: Option<Promise>,
}

impl Writer {
    /// Writes through `writer`.
    pub(crate) fn new(writer: WritableStreamDefaultWriter) -> Self {
        let rejected = Rc::new(Cell::new(0u64));
        let count = Rc::clone(&rejected);
        // One handler for the client's whole life, owned by the JavaScript
        // garbage collector: a write may reject after the client is gone.
        let on_reject = Closure::<dyn FnMut(JsValue)>::new(move |_reason: JsValue| {
            count.set(count.get().saturating_add(1));
        })
        .into_js_value()
        .unchecked_into::<Function>();
        Self {
            writer,
            on_reject,
            rejected,
            last: None,
        }
    }

    /// Writes that rejected (the session closed under them).
    pub(crate) fn rejected(&self) -> u64 {
        self.rejected.get()
    }

    /// The promise of the last write, taken: it settles once every earlier
    /// write has been handed to the session.
    pub(crate) fn take_last(&mut self) -> Option<Promise> {
        self.last.take()
    }
}

impl DatagramSink for Writer {
    fn write(&mut self, datagram: &[u8]) {
        let chunk = Uint8Array::from(datagram);
        let written = self.writer.write_with_chunk(&chunk);
        // The promise `catch` returns never rejects: the handler returns.
        let _ = written
            .unchecked_ref::<CatchablePromise>()
            .catch(&self.on_reject);
        self.last = Some(written);
    }
}

/// How the session ends: the `closed` promise, handled from the moment
/// the session is made (so that its rejection is never unhandled, even
/// when the session fails to open).
pub(crate) type Closed = JsFuture<WebTransportCloseInfo, JsValue>;

/// Starts watching how `transport` closes.
pub(crate) fn watch_closed(transport: &WebTransport) -> Closed {
    JsFuture::from(transport.closed())
}

/// Reads the session's incoming datagrams into `inbox` until the stream
/// ends or fails, then records in it how the session closed: the server's
/// code and reason, or the error it failed with.
pub(crate) async fn read_datagrams(
    reader: ReadableStreamDefaultReader,
    closed: Closed,
    inbox: Rc<RefCell<Inbox>>,
) {
    let failure = loop {
        let result = match JsFuture::from(reader.read()).await {
            Ok(result) => result.unchecked_into::<ReadableStreamReadResult>(),
            Err(e) => break Some(js_message(&e)),
        };
        if result.get_done().unwrap_or(false) {
            break None;
        }
        let Ok(datagram) = result.get_value().dyn_into::<Uint8Array>() else {
            continue;
        };
        if let Ok(mut inbox) = inbox.try_borrow_mut() {
            inbox.push(datagram.to_vec());
        }
    };
    // The datagram stream ends with the session: its closing says why.
    let reason = match closed.await {
        Ok(info) => {
            let code = info.get_close_code().unwrap_or(0);
            match info.get_reason().filter(|r| !r.is_empty()) {
                Some(reason) => format!("the session closed (code {code}: {reason})"),
                None => format!("the session closed (code {code})"),
            }
        }
        Err(e) => format!("the session failed: {}", js_message(&e)),
    };
    let reason = match failure {
        Some(read_error) => format!("{reason}; reading datagrams failed: {read_error}"),
        None => reason,
    };
    if let Ok(mut inbox) = inbox.try_borrow_mut() {
        inbox.close(reason);
    }
}

//! The WebSocket fallback's side in the browser (wasm32 only): opening a
//! WebSocket within a bound, its binary messages into the client's
//! [`Inbox`] and its closing recorded there, and its sends as a
//! [`DatagramSink`]. Each message is one netcode packet, as the server's
//! WebSocket door (netcode-webtransport) expects.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{ArrayBuffer, Function, Promise, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{BinaryType, CloseEvent, MessageEvent, WebSocket};

use crate::driver::DatagramSink;
use crate::queue::Inbox;
use crate::web::{self, Settled};

/// Bytes the browser may hold unsent for the socket before further
/// packets are dropped (and counted): behind a stalled TCP connection,
/// netcode's packets go stale; holding more only delays the fresh ones.
pub(crate) const MAX_BUFFERED_BYTES: u32 = 64 * 1024;

/// Opens a WebSocket at `url` within `bound_ms` milliseconds; its messages
/// then go to `inbox`, and its closing too. Fails with the reason.
pub(crate) async fn open(
    url: &str,
    inbox: &Rc<RefCell<Inbox>>,
    bound_ms: i32,
) -> Result<WebSocket, String> {
    let socket = WebSocket::new(url).map_err(|e| web::js_message(&e))?;
    socket.set_binary_type(BinaryType::Arraybuffer);
    // Opened: resolves with `true`; closed before opening (an error event
    // comes first, without a reason a page may read): rejects.
    let opened = Promise::new(&mut |resolve: Function, reject: Function| {
        let on_open = Closure::once_into_js(move || {
            let _ = resolve.call1(&JsValue::NULL, &JsValue::TRUE);
        });
        let on_close = Closure::once_into_js(move |event: CloseEvent| {
            let reason = format!("closed before opening (code {})", event.code());
            let _ = reject.call1(&JsValue::NULL, &JsValue::from_str(&reason));
        });
        socket.set_onopen(Some(on_open.unchecked_ref()));
        socket.set_onclose(Some(on_close.unchecked_ref()));
    });
    let settled = web::settle_within(&opened, bound_ms).await;
    socket.set_onopen(None);
    socket.set_onclose(None);
    match settled {
        Settled::Fulfilled => {}
        Settled::TimedOut => {
            close(&socket);
            return Err(format!("not open after {bound_ms} ms"));
        }
        Settled::Rejected(reason) => return Err(web::js_message(&reason)),
    }
    // Handlers owned by the JavaScript garbage collector: an event may
    // come after the client is gone.
    let messages = Rc::clone(inbox);
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
        // Binary messages only; the server sends nothing else.
        let Ok(buffer) = event.data().dyn_into::<ArrayBuffer>() else {
            return;
        };
        if let Ok(mut inbox) = messages.try_borrow_mut() {
            inbox.push(Uint8Array::new(&buffer).to_vec());
        }
    })
    .into_js_value();
    let closes = Rc::clone(inbox);
    let on_close = Closure::<dyn FnMut(CloseEvent)>::new(move |event: CloseEvent| {
        let reason = event.reason();
        let why = if reason.is_empty() {
            format!("the socket closed (code {})", event.code())
        } else {
            format!("the socket closed (code {}: {reason})", event.code())
        };
        if let Ok(mut inbox) = closes.try_borrow_mut() {
            inbox.close(why);
        }
    })
    .into_js_value();
    socket.set_onmessage(Some(on_message.unchecked_ref()));
    socket.set_onclose(Some(on_close.unchecked_ref()));
    Ok(socket)
}

/// Closes the socket, ignoring what it might throw. Packets sent before
/// are still delivered (the browser sends what it holds before the close).
pub(crate) fn close(socket: &WebSocket) {
    let _ = socket.close();
}

/// The socket as a [`DatagramSink`]: each packet one binary message;
/// while the browser holds more than [`MAX_BUFFERED_BYTES`] unsent, or the
/// socket refuses, the packet is dropped and counted.
#[derive(Debug)]
pub(crate) struct SocketWriter {
    pub(crate) socket: WebSocket,
    pub(crate) dropped: u64,
}

impl DatagramSink for SocketWriter {
    fn write(&mut self, datagram: &[u8]) {
        if self.socket.buffered_amount() > MAX_BUFFERED_BYTES
            || self.socket.send_with_u8_array(datagram).is_err()
        {
            self.dropped = self.dropped.saturating_add(1);
        }
    }
}

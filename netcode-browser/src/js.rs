//! The JavaScript binding (wasm32 only): [`NetcodeClient`], a
//! [`BrowserClient`] for a plain web page, exported by wasm-bindgen with
//! camelCase names. `build-web.sh` makes the package:
//!
//! ```js
//! import init, { NetcodeClient } from "./netcode_browser.js";
//! await init();
//! const client = await NetcodeClient.connect(url, certificateHashHex, token);
//! setInterval(() => {
//!   client.update();
//!   for (let p = client.receive(); p !== undefined; p = client.receive()) { /* ... */ }
//!   if (client.state === "connected") client.send(new Uint8Array([1, 2, 3]));
//! }, 16);
//! // at the end:
//! client.disconnect();
//! client.free();
//! ```

use js_sys::{Function, Promise, Reflect, Uint8Array};
use netcode_proto::backoff::Backoff;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::client::{BrowserClient, DEFAULT_FALLBACK_AFTER_MS, Endpoints};
use crate::error::SendError;
use crate::hash::parse_certificate_hash;
use crate::reconnect::{ReconnectingClient, Ticket, TicketFuture};
use crate::web::js_message;

/// A netcode client over WebTransport (or its WebSocket fallback), for
/// JavaScript.
#[wasm_bindgen]
#[derive(Debug)]
pub struct NetcodeClient {
    inner: BrowserClient,
}

#[wasm_bindgen]
impl NetcodeClient {
    /// `NetcodeClient.connect(url, certificateHashHex, token)`: opens a
    /// WebTransport session to `url` and starts connecting with the
    /// 2048-byte connect token (a `Uint8Array`). `certificateHashHex` is the
    /// SHA-256 of the server's certificate as 64 hexadecimal digits (colons
    /// allowed), or `""` for a certificate the browser trusts. Rejects with
    /// an `Error` saying why the session could not be made.
    pub async fn connect(
        url: String,
        certificate_hash_hex: String,
        token: Vec<u8>,
    ) -> Result<NetcodeClient, JsError> {
        let hashes: Vec<[u8; 32]> = parse_certificate_hash(&certificate_hash_hex)
            .map_err(|e| JsError::new(&e.to_string()))?
            .into_iter()
            .collect();
        let inner = BrowserClient::connect(&url, &hashes, &token)
            .await
            .map_err(|e| JsError::new(&e.to_string()))?;
        Ok(NetcodeClient { inner })
    }

    /// `NetcodeClient.connectAny(webtransportUrl, certificateHashHex,
    /// websocketUrl, token, fallbackAfterMs)`: WebTransport where the
    /// browser has it and the session opens within `fallbackAfterMs`
    /// (default 3000), else a WebSocket at `websocketUrl`. Either URL may
    /// be `""` (none). `transport` then says which was taken. Rejects with
    /// an `Error` saying why neither opened.
    #[wasm_bindgen(js_name = connectAny)]
    pub async fn connect_any(
        webtransport_url: String,
        certificate_hash_hex: String,
        websocket_url: String,
        token: Vec<u8>,
        fallback_after_ms: Option<u32>,
    ) -> Result<NetcodeClient, JsError> {
        let certificate_hashes: Vec<[u8; 32]> = parse_certificate_hash(&certificate_hash_hex)
            .map_err(|e| JsError::new(&e.to_string()))?
            .into_iter()
            .collect();
        let given = |url: String| (!url.is_empty()).then_some(url);
        let endpoints = Endpoints {
            webtransport: given(webtransport_url),
            certificate_hashes,
            websocket: given(websocket_url),
            fallback_after_ms: fallback_after_ms.unwrap_or(DEFAULT_FALLBACK_AFTER_MS),
        };
        let inner = BrowserClient::connect_any(&endpoints, &token)
            .await
            .map_err(|e| JsError::new(&e.to_string()))?;
        Ok(NetcodeClient { inner })
    }

    /// `transport`: `"webtransport"` or `"websocket"`, the session's.
    #[wasm_bindgen(getter)]
    pub fn transport(&self) -> String {
        self.inner.transport().name().to_owned()
    }

    /// `update()`: one turn, once per frame: handles what arrived, sends
    /// what is due.
    pub fn update(&mut self) {
        self.inner.update();
    }

    /// `send(payload)`: sends a `Uint8Array` of 1 to `payloadLimit` bytes;
    /// throws an `Error` saying why when it cannot.
    pub fn send(&mut self, payload: &[u8]) -> Result<(), JsError> {
        self.inner
            .send(payload)
            .map_err(|e| JsError::new(&e.to_string()))
    }

    /// `receive()`: the oldest payload received, as a `Uint8Array`, or
    /// `undefined`.
    pub fn receive(&mut self) -> Option<Vec<u8>> {
        self.inner.receive()
    }

    /// `state`: the client's state as the protocol names it:
    /// `"connected"`, `"sending connection request"`, `"disconnected"`,
    /// `"connection timed out"`, ...
    #[wasm_bindgen(getter)]
    pub fn state(&self) -> String {
        self.inner.state().name().to_owned()
    }

    /// `clientIndex`: the slot the server gave this client while
    /// connected, else `undefined`.
    #[wasm_bindgen(getter, js_name = clientIndex)]
    pub fn client_index(&self) -> Option<u32> {
        self.inner.client_index()
    }

    /// `payloadLimit`: the largest payload `send` takes on this session.
    #[wasm_bindgen(getter, js_name = payloadLimit)]
    pub fn payload_limit(&self) -> usize {
        self.inner.payload_limit()
    }

    /// `maxDatagramSize`: the session's `maxDatagramSize`.
    #[wasm_bindgen(getter, js_name = maxDatagramSize)]
    pub fn max_datagram_size(&self) -> usize {
        self.inner.max_datagram_size()
    }

    /// `closeReason`: why the session closed, once it has, else
    /// `undefined`.
    #[wasm_bindgen(getter, js_name = closeReason)]
    pub fn close_reason(&self) -> Option<String> {
        self.inner.closed().map(str::to_owned)
    }

    /// `disconnect()`: tells the server (10 disconnect packets), then
    /// closes the session.
    pub fn disconnect(&mut self) {
        self.inner.disconnect();
    }
}

/// A netcode client that connects again, with a fresh token, whenever its
/// connection ends, for JavaScript ([`ReconnectingClient`]):
///
/// ```js
/// const client = new ReconnectingClient(async () => {
///   const answer = await (await fetch("/token")).json();
///   return { token: hexBytes(answer.connect_token), webtransportUrl: answer.url,
///            certificateHash: answer.certificate_hash, websocketUrl: answer.websocket_url };
/// });
/// setInterval(() => {
///   client.update();
///   for (let e = client.nextEvent(); e !== undefined; e = client.nextEvent()) console.log(e);
///   for (let p = client.receive(); p !== undefined; p = client.receive()) handle(p);
///   if (client.state === "connected") client.send(new Uint8Array([1, 2, 3]));
/// }, 16);
/// ```
#[wasm_bindgen(js_name = ReconnectingClient)]
#[derive(Debug)]
pub struct JsReconnectingClient {
    inner: ReconnectingClient,
}

#[wasm_bindgen(js_class = ReconnectingClient)]
impl JsReconnectingClient {
    /// `new ReconnectingClient(fetchTicket, fallbackAfterMs)`:
    /// `fetchTicket()` returns (a promise of) `{ token, webtransportUrl,
    /// certificateHash, websocketUrl }` (the token a `Uint8Array` of 2048
    /// bytes; either URL may be missing); it is called once per attempt,
    /// first at the first `update()`. Waits between attempts double from
    /// 250 ms up to 8 s, with jitter.
    #[wasm_bindgen(constructor)]
    pub fn new(fetch_ticket: Function, fallback_after_ms: Option<u32>) -> JsReconnectingClient {
        let fallback_after_ms = fallback_after_ms.unwrap_or(DEFAULT_FALLBACK_AFTER_MS);
        let fetch = move || -> TicketFuture {
            let answer = fetch_ticket.call0(&JsValue::NULL);
            Box::pin(async move {
                let answer = answer.map_err(|e| js_message(&e))?;
                let value = match answer.dyn_into::<Promise>() {
                    Ok(promise) => JsFuture::from(promise).await.map_err(|e| js_message(&e))?,
                    Err(value) => value,
                };
                ticket(&value, fallback_after_ms)
            })
        };
        JsReconnectingClient {
            inner: ReconnectingClient::new(Backoff::default(), fetch),
        }
    }

    /// `update()`: one turn, once per frame.
    pub fn update(&mut self) {
        self.inner.update();
    }

    /// `send(payload)`: as `NetcodeClient.send`; throws "not connected"
    /// between connections.
    pub fn send(&mut self, payload: &[u8]) -> Result<(), JsError> {
        let Some(mut client) = self.inner.client() else {
            return Err(JsError::new(&SendError::NotConnected.to_string()));
        };
        client
            .send(payload)
            .map_err(|e| JsError::new(&e.to_string()))
    }

    /// `receive()`: the oldest payload received, or `undefined`.
    pub fn receive(&mut self) -> Option<Vec<u8>> {
        self.inner.client()?.receive()
    }

    /// `state`: the current connection's state (`"disconnected"` between
    /// connections).
    #[wasm_bindgen(getter)]
    pub fn state(&self) -> String {
        self.inner.state().name().to_owned()
    }

    /// `transport`: `"webtransport"` or `"websocket"`, or `undefined`
    /// before the first session.
    #[wasm_bindgen(getter)]
    pub fn transport(&self) -> Option<String> {
        Some(self.inner.client()?.transport().name().to_owned())
    }

    /// `payloadLimit`: the largest payload `send` takes on the current
    /// session (0 between sessions).
    #[wasm_bindgen(getter, js_name = payloadLimit)]
    pub fn payload_limit(&self) -> usize {
        self.inner
            .client()
            .map_or(0, |client| client.payload_limit())
    }

    /// `attempts`: attempts since the connection was last up.
    #[wasm_bindgen(getter)]
    pub fn attempts(&self) -> u32 {
        self.inner.attempts()
    }

    /// `nextEvent()`: the oldest event as a line of text ("connection
    /// ended (...); next attempt in N ms", "attempt N: ...", "connected
    /// after N attempt(s)", ...), or `undefined`.
    #[wasm_bindgen(js_name = nextEvent)]
    pub fn next_event(&mut self) -> Option<String> {
        self.inner.next_event().map(|event| event.to_string())
    }

    /// `stop()`: disconnects and makes no more attempts.
    pub fn stop(&mut self) {
        self.inner.stop();
    }
}

/// A [`Ticket`] from the object a page's `fetchTicket` gave.
fn ticket(value: &JsValue, fallback_after_ms: u32) -> Result<Ticket, String> {
    let field = |name: &str| Reflect::get(value, &JsValue::from_str(name)).ok();
    let text = |name: &str| {
        field(name)
            .and_then(|v| v.as_string())
            .filter(|s| !s.is_empty())
    };
    let connect_token = field("token")
        .and_then(|v| v.dyn_into::<Uint8Array>().ok())
        .map(|bytes| bytes.to_vec())
        .ok_or("the ticket has no token (a Uint8Array)")?;
    let certificate_hashes = match text("certificateHash") {
        Some(hex) => parse_certificate_hash(&hex)
            .map_err(|e| e.to_string())?
            .into_iter()
            .collect(),
        None => Vec::new(),
    };
    Ok(Ticket {
        endpoints: Endpoints {
            webtransport: text("webtransportUrl"),
            certificate_hashes,
            websocket: text("websocketUrl"),
            fallback_after_ms,
        },
        connect_token,
    })
}

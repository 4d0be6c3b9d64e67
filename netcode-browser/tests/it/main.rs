//! netcode-browser's integration tests, one binary for each target; each
//! module is compiled only where it runs:
//!
//! * `scenario` (both): connection scenarios between the crate's
//!   [`Driver`](netcode_browser::Driver) and a netcode-proto server over
//!   in-memory queues;
//! * `native` (native): those scenarios as ordinary tests;
//! * `live` (native, Unix): the web package in headless Chromium against a
//!   netcode server with `netcode-webtransport` attached;
//! * `web` (wasm32, in headless Chromium through wasm-bindgen-test): the
//!   golden vectors, the scenarios on wasm, and the clients' refusals
//!   against Chromium's own WebTransport.

mod scenario;

#[cfg(all(unix, not(target_arch = "wasm32")))]
mod live;
#[cfg(not(target_arch = "wasm32"))]
mod native;
#[cfg(target_arch = "wasm32")]
mod web;

//! netcode-webtransport's integration tests, one binary: a netcode server
//! on loopback with UDP and WebTransport attached (`common`), driven by
//! native WebTransport clients, UDP clients and raw sessions.
//!
//! * `sessions`: UDP and WebTransport clients in the slots of one server,
//!   payloads both ways, the client's errors, refused tokens;
//! * `hostile`: garbage, oversized datagrams, streams, other paths and a
//!   flood of sessions, while a UDP client goes on;
//! * `rotation`: a new certificate for new sessions, open ones spared;
//! * `websocket`: the WebSocket fallback beside WebTransport: the same
//!   slots, and hostile sockets refused while a UDP client goes on.

mod common;
mod hostile;
mod rotation;
mod sessions;
mod websocket;

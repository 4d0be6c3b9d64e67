//! netcode-c's Rust tests, in one binary: the C API called from Rust
//! (addresses and tokens, the client and the server over UDP, loopback and
//! override mode, their memory, the registry of live objects, garbage
//! arguments) and the header checked against the libraries C programs
//! link (`header`).
//!
//! The tests run on parallel threads of one process, and the library has
//! process-wide state: `globals` says what it is and how the tests keep
//! out of each other's way. `common` and `server_common` hold what the
//! client and the server tests share.

mod common;
mod globals;
mod server_common;

mod address_token;
mod client_memory;
mod client_override;
mod client_udp;
mod header;
mod live_objects;
mod server_exchange;
mod server_garbage;
mod server_loopback;
mod server_override;

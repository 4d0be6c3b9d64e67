//! The bodies of the fuzz targets, one module each.
//!
//! Each `fuzz_targets/<name>.rs` is a one-line `fuzz_target!` that calls the
//! function of the same name here, so the same code runs under libFuzzer
//! (nightly, `cargo fuzz`) and in the stable corpus replay test
//! (`tests/it/corpus.rs`). A function panics exactly when its input breaks
//! something: a panic in the code under test or a failed invariant check.

mod challenge_token_decrypt;
mod client;
mod connect_token_read;
mod host;
mod packet_read_client;
mod packet_read_server;
mod private_token_decrypt;
mod server_connected;
mod write_read_roundtrip;

pub use challenge_token_decrypt::challenge_token_decrypt;
pub use client::client;
pub use connect_token_read::connect_token_read;
pub use host::host;
pub use packet_read_client::packet_read_client;
pub use packet_read_server::packet_read_server;
pub use private_token_decrypt::private_token_decrypt;
pub use server_connected::server_connected;
pub use write_read_roundtrip::write_read_roundtrip;

/// One fuzz target: its name (that of its `fuzz_targets/` file, its
/// `[[bin]]` and its `corpus/` directory) and its body.
pub type Target = (&'static str, fn(&[u8]));

/// Every fuzz target, by name.
pub const ALL: [Target; 9] = [
    ("packet_read_server", packet_read_server),
    ("packet_read_client", packet_read_client),
    ("connect_token_read", connect_token_read),
    ("private_token_decrypt", private_token_decrypt),
    ("challenge_token_decrypt", challenge_token_decrypt),
    ("server_connected", server_connected),
    ("client", client),
    ("write_read_roundtrip", write_read_roundtrip),
    ("host", host),
];

/// The body of the target called `name`.
pub fn by_name(name: &str) -> Option<fn(&[u8])> {
    ALL.iter().find(|(n, _)| *n == name).map(|&(_, f)| f)
}

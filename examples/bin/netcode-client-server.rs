//! The `client_server` example as a binary, so the examples' tests can run it by
//! its `CARGO_BIN_EXE_` path; `cargo run --example client_server` is the same
//! program.

#[path = "../client_server.rs"]
mod client_server;

fn main() -> std::process::ExitCode {
    client_server::main()
}

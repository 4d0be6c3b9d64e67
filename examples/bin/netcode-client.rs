//! The `client` example as a binary, so the examples' tests can run it by
//! its `CARGO_BIN_EXE_` path; `cargo run --example client` is the same
//! program.

#[path = "../client.rs"]
mod client;

fn main() -> std::process::ExitCode {
    client::main()
}

//! The `server` example as a binary, so the examples' tests can run it by
//! its `CARGO_BIN_EXE_` path; `cargo run --example server` is the same
//! program.

#[path = "../server.rs"]
mod server;

fn main() -> std::process::ExitCode {
    server::main()
}

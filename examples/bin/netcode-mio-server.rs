//! The `mio_server` example as a binary, so the examples' tests can run it
//! by its `CARGO_BIN_EXE_` path; `cargo run --example mio_server` is the
//! same program.

#[path = "../mio_server.rs"]
mod mio_server;

fn main() -> std::process::ExitCode {
    mio_server::main()
}

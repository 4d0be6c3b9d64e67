//! The `connect_time` example as a binary, so the examples' tests can run it by
//! its `CARGO_BIN_EXE_` path; `cargo run --example connect_time` is the same
//! program.

#[path = "../connect_time.rs"]
mod connect_time;

fn main() -> std::process::ExitCode {
    connect_time::main()
}

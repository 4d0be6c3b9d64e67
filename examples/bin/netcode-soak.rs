//! The `soak` example as a binary, so the examples' tests can run it by
//! its `CARGO_BIN_EXE_` path; `cargo run --example soak` is the same
//! program.

#[path = "../soak.rs"]
mod soak;

fn main() -> std::process::ExitCode {
    soak::main()
}

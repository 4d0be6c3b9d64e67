//! The `token` example as a binary, so the examples' tests can run it by
//! its `CARGO_BIN_EXE_` path; `cargo run --example token` is the same
//! program.

#[path = "../token.rs"]
mod token;

fn main() -> std::process::ExitCode {
    token::main()
}

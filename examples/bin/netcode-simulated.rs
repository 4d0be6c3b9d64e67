//! The `simulated` example as a binary, so the examples' tests can run it by
//! its `CARGO_BIN_EXE_` path; `cargo run --example simulated` is the same
//! program.

#[path = "../simulated.rs"]
mod simulated;

fn main() -> std::process::ExitCode {
    simulated::main()
}

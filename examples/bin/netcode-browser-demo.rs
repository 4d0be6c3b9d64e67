//! The `browser_demo` example as a binary, so the examples' tests can run
//! it by its `CARGO_BIN_EXE_` path; `cargo run --example browser_demo` is
//! the same program.

#[path = "../browser_demo/main.rs"]
mod browser_demo;

fn main() -> std::process::ExitCode {
    browser_demo::main()
}

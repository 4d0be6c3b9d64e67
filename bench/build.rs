//! Tells the tests whether the C reference's counting program was named.
//!
//! `NETCODE_C_BENCH` names a build of `c/netcode_c_bench.c` against the C
//! reference (the command is in that file; nothing here builds it). When it
//! is set, this sets `cfg(netcode_c_bench)` and `tests/counts.rs` runs the
//! program; when it is unset that test is compiled as `#[ignore]`d with the
//! reason, so the summary counts it as ignored, not passed. Cargo runs this
//! again whenever the variable changes.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=NETCODE_C_BENCH");
    println!("cargo::rustc-check-cfg=cfg(netcode_c_bench)");
    if std::env::var_os("NETCODE_C_BENCH").is_some_and(|v| !v.is_empty()) {
        println!("cargo::rustc-cfg=netcode_c_bench");
    }
}

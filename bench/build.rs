//! Tells the tests whether the C programs of the counting run were named.
//!
//! `NETCODE_C_BENCH` names a build of `c/netcode_c_bench.c` against the C
//! reference (the command is in that file; nothing here builds it), and
//! `NETCODE_C_API_BENCH` the same program built against this project's
//! `netcode-c` (`scripts/c-api.sh --build` builds it and prints its path).
//! Each one set sets its cfg (`netcode_c_bench`, `netcode_c_api_bench`)
//! and `tests/it/counts.rs` runs that program; when it is unset that test is
//! compiled as `#[ignore]`d with the reason, so the summary counts it as
//! ignored, not passed. Cargo runs this again whenever a variable changes.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    for (variable, cfg) in [
        ("NETCODE_C_BENCH", "netcode_c_bench"),
        ("NETCODE_C_API_BENCH", "netcode_c_api_bench"),
    ] {
        println!("cargo::rerun-if-env-changed={variable}");
        println!("cargo::rustc-check-cfg=cfg({cfg})");
        if std::env::var_os(variable).is_some_and(|v| !v.is_empty()) {
            println!("cargo::rustc-cfg={cfg}");
        }
    }
}

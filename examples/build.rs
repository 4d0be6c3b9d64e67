//! Tells the tests against the C reference whether its programs were named.
//!
//! `NETCODE_C_SERVER` / `NETCODE_C_CLIENT` name the C reference's built
//! `server` and `client` programs. When one is set, this sets
//! `cfg(netcode_c_server)` / `cfg(netcode_c_client)` and the test that
//! needs it runs; when it is unset the test is compiled as `#[ignore]`d
//! with the reason, so the summary counts it as ignored, not passed. Cargo
//! runs this again whenever either variable changes.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    for (var, cfg) in [
        ("NETCODE_C_SERVER", "netcode_c_server"),
        ("NETCODE_C_CLIENT", "netcode_c_client"),
    ] {
        println!("cargo::rerun-if-env-changed={var}");
        println!("cargo::rustc-check-cfg=cfg({cfg})");
        if std::env::var_os(var).is_some_and(|v| !v.is_empty()) {
            println!("cargo::rustc-cfg={cfg}");
        }
    }
}

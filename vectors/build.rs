//! Tells the tests whether the C reference's vector set was named.
//!
//! `NETCODE_REFERENCE_VECTORS=<dir>` names it. When the variable is set,
//! this sets `cfg(netcode_reference_vectors)` and the tests over that set
//! run (and fail if the directory is missing or does not parse). When it is
//! unset they are compiled as `#[ignore]`d, so the test summary counts them
//! as ignored rather than passed, and Cargo prints a SKIPPED warning with
//! every build of this crate. Cargo runs this again whenever the variable
//! changes.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=NETCODE_REFERENCE_VECTORS");
    println!("cargo::rustc-check-cfg=cfg(netcode_reference_vectors)");
    if std::env::var_os("NETCODE_REFERENCE_VECTORS").is_some() {
        println!("cargo::rustc-cfg=netcode_reference_vectors");
    } else {
        println!(
            "cargo::warning=SKIPPED (NETCODE_REFERENCE_VECTORS unset): the vector tests over the \
             C reference's set are ignored; only vectors/data and a generated set are checked"
        );
    }
}

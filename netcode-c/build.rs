//! Gives the shared library the SONAME of the C reference's CMake build on
//! Linux, `libnetcode.so.<major>` (`libnetcode.so.1`), the major number of
//! `NETCODE_VERSION_FULL` in `include/netcode.h`, so that programs linked
//! against the reference's `libnetcode.so` load this one. `install.sh`
//! installs `libnetcode.so.<version>` with the links `libnetcode.so.<major>`
//! and `libnetcode.so`. Other targets get nothing.

use std::path::Path;

fn main() {
    let header = Path::new("include/netcode.h");
    println!("cargo::rerun-if-changed={}", header.display());
    println!("cargo::rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    let text = std::fs::read_to_string(header)
        .unwrap_or_else(|e| panic!("read {}: {e}", header.display()));
    let major = text
        .lines()
        .filter_map(|line| line.trim().strip_prefix("#define NETCODE_VERSION_FULL"))
        .filter_map(|rest| rest.trim().strip_prefix('"'))
        .filter_map(|version| version.split('.').next())
        .find(|major| !major.is_empty() && major.bytes().all(|b| b.is_ascii_digit()))
        .unwrap_or_else(|| panic!("no NETCODE_VERSION_FULL \"M.m.p\" in {}", header.display()));
    println!("cargo::rustc-cdylib-link-arg=-Wl,-soname,libnetcode.so.{major}");
}

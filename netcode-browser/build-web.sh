#!/usr/bin/env bash
# Builds netcode-browser's web package: the release .wasm for
# wasm32-unknown-unknown, then wasm-bindgen's ES module for a plain page
# (`import init, { NetcodeClient } from "./netcode_browser.js"`).
#
# Usage: netcode-browser/build-web.sh OUT_DIR
#
# It brings what it needs the first time: the wasm32-unknown-unknown target
# (through rustup) and wasm-bindgen-cli at exactly the version of
# wasm-bindgen in Cargo.lock, installed once into
# ${CARGO_HOME:-~/.cargo}/tools/wasm-bindgen-cli-VERSION (not onto PATH:
# another project's wasm-bindgen stays as it is). A wasm-bindgen of that
# version already on PATH is used as it is.
set -euo pipefail

if [ $# -ne 1 ] || [ -z "$1" ]; then
  echo "usage: $0 OUT_DIR" >&2
  exit 2
fi
out_dir=$1
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# A RUSTFLAGS variable would replace .cargo/config.toml's rustflags for the
# target, dropping --cfg=web_sys_unstable_apis that web-sys's WebTransport
# bindings need.
unset RUSTFLAGS

locked=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
if [ -z "$locked" ]; then
  echo "!!! FAILED: no wasm-bindgen in $root/Cargo.lock !!!" >&2
  exit 1
fi
# wasm-bindgen-cli at the lock's version: on PATH, in the cache, or
# installed into the cache now.
wasm_bindgen_version() {
  command -v wasm-bindgen >/dev/null 2>&1 && wasm-bindgen --version | awk '{ print $2 }'
}
if [ "$(wasm_bindgen_version)" != "$locked" ]; then
  tools="${CARGO_HOME:-$HOME/.cargo}/tools/wasm-bindgen-cli-$locked"
  if [ ! -x "$tools/bin/wasm-bindgen" ]; then
    echo "installing wasm-bindgen-cli $locked (Cargo.lock's wasm-bindgen) into $tools, once" >&2
    # Not --locked: its own lock pins a webpki-roots release the registry
    # no longer has.
    cargo install wasm-bindgen-cli --version "$locked" --root "$tools" --force
  fi
  export PATH="$tools/bin:$PATH"
  installed=$(wasm_bindgen_version)
  if [ "$installed" != "$locked" ]; then
    echo "!!! FAILED: $tools/bin/wasm-bindgen is ${installed:-missing}, Cargo.lock has $locked !!!" >&2
    exit 1
  fi
fi

# The wasm32 target, through rustup when the toolchain lacks it.
sysroot=$(rustc --print sysroot)
if [ ! -d "$sysroot/lib/rustlib/wasm32-unknown-unknown" ]; then
  if ! command -v rustup >/dev/null 2>&1; then
    echo "!!! FAILED: the toolchain at $sysroot has no wasm32-unknown-unknown target, and there is no rustup to add it !!!" >&2
    exit 1
  fi
  echo "adding the wasm32-unknown-unknown target (rustup), once" >&2
  rustup target add wasm32-unknown-unknown
fi

cargo build --release --locked --target wasm32-unknown-unknown -p netcode-browser --lib
target_dir=$(cargo metadata --format-version 1 --no-deps --locked |
  sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
wasm="${target_dir:-$root/target}/wasm32-unknown-unknown/release/netcode_browser.wasm"
mkdir -p "$out_dir"
wasm-bindgen --target web --no-typescript --out-dir "$out_dir" "$wasm"
echo "netcode-browser web package in $out_dir:"
ls -l "$out_dir"

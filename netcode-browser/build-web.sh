#!/usr/bin/env bash
# Builds netcode-browser's web package: the release .wasm for
# wasm32-unknown-unknown, then wasm-bindgen's ES module for a plain page
# (`import init, { NetcodeClient } from "./netcode_browser.js"`).
#
# Usage: netcode-browser/build-web.sh OUT_DIR
#
# Needs the wasm32-unknown-unknown target (`rustup target add
# wasm32-unknown-unknown`) and wasm-bindgen-cli at exactly the version of
# wasm-bindgen in Cargo.lock (`cargo install wasm-bindgen-cli --version
# <that version>`, without --locked). Fails, saying why, otherwise.
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
if ! command -v wasm-bindgen >/dev/null 2>&1; then
  echo "!!! FAILED: wasm-bindgen is not on PATH; Cargo.lock has wasm-bindgen $locked:" >&2
  echo "    cargo install wasm-bindgen-cli --version $locked" >&2
  exit 1
fi
installed=$(wasm-bindgen --version | awk '{ print $2 }')
if [ "$installed" != "$locked" ]; then
  echo "!!! FAILED: wasm-bindgen on PATH is $installed, Cargo.lock has $locked:" >&2
  echo "    cargo install wasm-bindgen-cli --version $locked" >&2
  exit 1
fi

cargo build --release --locked --target wasm32-unknown-unknown -p netcode-browser --lib
target_dir=$(cargo metadata --format-version 1 --no-deps --locked |
  sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
wasm="${target_dir:-$root/target}/wasm32-unknown-unknown/release/netcode_browser.wasm"
mkdir -p "$out_dir"
wasm-bindgen --target web --no-typescript --out-dir "$out_dir" "$wasm"
echo "netcode-browser web package in $out_dir:"
ls -l "$out_dir"

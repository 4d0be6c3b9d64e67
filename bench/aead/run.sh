#!/usr/bin/env bash
# Measures every AEAD alternative for netcode's messages in one run: the
# RustCrypto crates under each backend choice their `--cfg` flags allow
# (one build each, in its own target directory), the other pure-Rust crates
# and ring once. Instruction counts (callgrind, needs valgrind) and where
# they go, then wall times (aead-time: interleaved batches, fastest batch).
# See BENCHMARKS.md, "The portable backend on short packets".
#
#   bench/aead/run.sh             # builds, counts, breakdowns and times
#   bench/aead/run.sh counts      # instruction counts and breakdowns only
#   bench/aead/run.sh times       # aead-time only
#
# Results go to target/results/ under this crate, and the tables to stdout.
set -euo pipefail
cd "$(dirname "$0")"

what=${1:-all}
results=target/results
mkdir -p "$results"

# name | RUSTFLAGS
configs=(
  'default|'
  'poly-soft|--cfg poly1305_backend="soft"'
  'chacha-soft|--cfg chacha20_backend="soft"'
  'chacha-soft+poly-soft|--cfg chacha20_backend="soft" --cfg poly1305_backend="soft"'
  'chacha-sse2|--cfg chacha20_backend="sse2"'
  'chacha-sse2+poly-soft|--cfg chacha20_backend="sse2" --cfg poly1305_backend="soft"'
  # Not portable: the binary then needs an AVX2 CPU.
  'chacha-avx2|--cfg chacha20_backend="avx2" -C target-feature=+avx2'
  'chacha-avx2+poly-soft|--cfg chacha20_backend="avx2" --cfg poly1305_backend="soft" -C target-feature=+avx2'
)
# The flags change only the RustCrypto crates (netcode-proto's portable
# backend uses `chacha20`): the other rows are measured in the default build
# alone.
rustcrypto_rows=seam,rc-aead,rc-aead-prepared,rc-composed,rc-composed-256,rc-chacha+orion-poly,rc-chacha+bitcoin-poly

load() { printf 'load: %s\n' "$(uptime)"; }

target_dir() { printf 'target/cfg-%s' "$1"; }

build() { # name flags
  CARGO_TARGET_DIR=$(target_dir "$1") RUSTFLAGS=$2 \
    cargo build --quiet --release --locked --bins
}

build_all() {
  for entry in "${configs[@]}"; do
    build "${entry%%|*}" "${entry#*|}"
  done
}

counts() {
  load
  for entry in "${configs[@]}"; do
    name=${entry%%|*}
    only=()
    [ "$name" = default ] || only=(--only "$rustcrypto_rows")
    "$(target_dir "$name")/release/aead-count" "${only[@]}" | tee "$results/counts-$name.md"
  done
  # Where the instructions go: the AEAD crate (the portable backend)
  # as built by default and with Poly1305 forced soft, and the seam.
  for run in default:rc-aead poly-soft:rc-aead default:seam; do
    name=${run%%:*} implementation=${run#*:}
    for case in seal-100 open-100 seal-1200; do
      "$(target_dir "$name")/release/aead-count" breakdown "$implementation" "$case" |
        tee "$results/breakdown-$name-$implementation-$case.md"
    done
  done
  load
}

times() {
  load
  for entry in "${configs[@]}"; do
    name=${entry%%|*}
    only=()
    [ "$name" = default ] || only=(--only "$rustcrypto_rows")
    "$(target_dir "$name")/release/aead-time" "${only[@]}" | tee "$results/times-$name.md"
    load
  done
}

case $what in
  counts) build_all; counts ;;
  times) build_all; times ;;
  all) build_all; counts; times ;;
  *) echo "usage: $0 [counts|times|all]" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# Ours through the C API in the counting run (BENCHMARKS.md, "The C API
# (netcode-c)"): builds netcode-c's release libnetcode.a, compiles the
# bench's C program (bench/c/netcode_c_bench.c, written against netcode.h)
# against netcode-c/include/netcode.h and that library, and runs
# `cargo bench -p netcode-bench --bench counts` with NETCODE_C_API_BENCH
# naming it:
#
#   bash bench/scripts/c-api.sh [FILTER...]   # build, then count every case (or those named)
#   bash bench/scripts/c-api.sh --build       # build only; prints the program's path
#
# The C reference's column is in the same run when NETCODE_C_BENCH names
# its build of the same program (the command is in BENCHMARKS.md, "How to
# run"; this script never builds the reference). CC picks the compiler
# (default cc). Before the build and after the run: the commit, a digest
# of the uncommitted state of what the figures depend on (the same twice
# if nothing changed meanwhile), the compilers and the load.
set -euo pipefail
cd "$(dirname "$0")/../.."

build_only=false
if [[ ${1:-} == --build ]]; then
  build_only=true
  shift
fi

target=${CARGO_TARGET_DIR:-target}
exe=$target/release/netcode-c-api-bench
cc=${CC:-cc}

depends="netcode-proto netcode-std netcode-c bench"
state() {
  echo "== $1: commit $(git rev-parse --short HEAD), uncommitted digest of $depends: $(
    { git diff HEAD -- $depends; git ls-files --others --exclude-standard -- $depends | sort | xargs -r cat; } |
      sha256sum | cut -c1-12)"
  echo "== $1: $("$cc" --version | head -n1); $(rustc --version)"
  echo "== $1: uptime:$(uptime | sed 's/.*load average/ load average/')"
}
$build_only || state before

# The library and the program: cargo cannot depend on a staticlib, so the
# C side is built here. The system libraries are those the Rust standard
# library needs in a static link (netcode-c/README.md).
cargo build --release --locked -p netcode-c >&2
"$cc" -O2 -DNDEBUG -I netcode-c/include bench/c/netcode_c_bench.c \
  "$target/release/libnetcode.a" -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc \
  -o "$exe"

if $build_only; then
  realpath "$exe"
  exit 0
fi

if [[ -z ${NETCODE_C_BENCH:-} ]]; then
  echo "== NETCODE_C_BENCH unset: the C reference's column is not run (see BENCHMARKS.md, \"How to run\")"
fi
NETCODE_C_API_BENCH=$(realpath "$exe") cargo bench --locked -p netcode-bench --bench counts -- "$@"
state after

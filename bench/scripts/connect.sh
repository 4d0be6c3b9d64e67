#!/usr/bin/env bash
# Connections per second per core (BENCHMARKS.md, "Connections per second
# per core"): the server's CPU per accepted connection over loopback UDP,
# ours and the peers in one run, with `wt-bench connect udp`
# (bench/src/bin/wt-bench/connect.rs says what one case measures):
#
#   bash bench/scripts/connect.sh [ROUNDS]     # default 3 rounds
#
# The C reference is in the run when NETCODE_C_BENCH_SERVER names its build of
# bench/c/netcode_c_server.c (the command is in that file; nothing here
# builds it); otherwise its cases print SKIPPED. The same program built
# against this project's netcode-c (release) is built here and always in
# the run: ours through the C API, in the reference's loop.
#
# Each round runs every case once, in the same order:
#  * churn: 2,000 clients, 128 at a time, each disconnecting as soon as it
#    is connected (netcode-official and the reference hold 256 slots at
#    most), against ours (netcode-tokio, woken per datagram) and, each
#    ticking every 10 ms, ours on netcode-std, the C reference, ours through
#    the C API (the same C program on netcode-c) and netcode-official;
#  * kept, ticking every 10 ms: 1,000 clients, 128 at a time, staying
#    connected, against ours on netcode-std and renetcode (which holds
#    1,024 slots: under churn it refused about one client in eight as
#    denied, so it is measured here);
#  * kept: 2,000 clients, 256 at a time, against ours, without and with a
#    token history file.
# The server process is pinned to CPU 1, the clients to CPU 0. Results go
# to CONNECT_BENCH_OUT (default target/wt-bench/connect-<time>.txt); the
# summary at the end gives medians and ranges over the rounds, and each
# peer's CPU per connection over ours on netcode-std, round by round.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}
out=${CONNECT_BENCH_OUT:-target/wt-bench/connect-$(date -u +%Y%m%dT%H%M%SZ).txt}
mkdir -p "$(dirname "$out")"
: > "$out"

cargo build --release --locked -p netcode-bench --bin wt-bench
target=${CARGO_TARGET_DIR:-target}
bench=$target/release/wt-bench
cargo build --release --locked -p netcode-c
c_api_server="$target/release/netcode-c-server"
${CC:-cc} -O2 -DNDEBUG -I netcode-c/include bench/c/netcode_c_server.c "$target/release/libnetcode.a" \
  -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc -o "$c_api_server"
export NETCODE_C_API_BENCH_SERVER
NETCODE_C_API_BENCH_SERVER=$(realpath "$c_api_server")
history=$(mktemp -d)
trap 'rm -rf "$history"' EXIT

echo "== commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- netcode-proto netcode-std netcode-tokio bench || echo ' (with uncommitted changes)'), load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out"
[ -n "${NETCODE_C_BENCH_SERVER:-}" ] || echo "SKIPPED the C reference: NETCODE_C_BENCH_SERVER unset (see bench/c/netcode_c_server.c)" | tee -a "$out"
for round in $(seq 1 "$rounds"); do
  churn="--clients 2000 --concurrency 128 --churn true --round $round --server-cpu 1"
  for server in ours netcode-std c-reference c-api netcode-official; do
    tick=""
    [ "$server" = ours ] || tick="--tick-ms 10"
    # shellcheck disable=SC2086
    taskset -c 0 "$bench" connect udp $churn --server "$server" $tick | tee -a "$out" | cut -c1-160
  done
  ticked="--clients 1000 --concurrency 128 --tick-ms 10 --round $round --server-cpu 1"
  for server in netcode-std renetcode; do
    # shellcheck disable=SC2086
    taskset -c 0 "$bench" connect udp $ticked --server "$server" | tee -a "$out" | cut -c1-160
  done
  kept="--clients 2000 --concurrency 256 --round $round --server-cpu 1"
  # shellcheck disable=SC2086
  taskset -c 0 "$bench" connect udp $kept | tee -a "$out" | cut -c1-160
  # shellcheck disable=SC2086
  taskset -c 0 "$bench" connect udp $kept --token-history "$history/tokens" | tee -a "$out" | cut -c1-160
done
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out"
echo
"$bench" summary "$out"
echo
echo "results: $out"

#!/usr/bin/env bash
# Server CPU per echoed payload over WebTransport against UDP clients of
# the same server and a bare wtransport echo, the AEAD beside them, and
# connections per second (BENCHMARKS.md, "WebTransport"), with `wt-bench`
# (bench/src/bin/wt-bench/):
#
#   bash bench/scripts/webtransport.sh [ROUNDS] [ECHOES]   # default 5 rounds, 200000 echoes
#
# Each round runs every configuration once, in the same order (A/B/C/...,
# A/B/C/...): the AEAD loop; for K = 1 and 16 clients the echo cases
# netcode-wt, netcode-udp, bare-wt, bare-wt-batch, bare-wt-select and
# relay-wt (each with its own server process, 64 payloads in flight per
# client, 20,000 echoes of warm-up then ECHOES measured); then 500
# connections over WebTransport and over UDP, 64 at a time, then 250 at a
# time. Every case
# prints a RESULT line into the results file (WT_BENCH_OUT, default
# target/wt-bench/results-<time>.txt); the summary at the end gives
# medians and ranges over the rounds, and ratios taken per round.
#
# Before and after: the commit, a digest of the uncommitted state of the
# crates the figures depend on, the load, and whether another benchmark
# process was running. The machine has 2 cores: the server process is
# pinned to CPU 1 and the clients to CPU 0 (`taskset`), so that the
# scheduler never puts both on one core (unpinned, it did now and then:
# a server at half its speed, and bimodal figures).
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-5}
echoes=${2:-200000}
out=${WT_BENCH_OUT:-target/wt-bench/results-$(date -u +%Y%m%dT%H%M%SZ).txt}
mkdir -p "$(dirname "$out")"
: > "$out"

cargo build --release --locked -p netcode-bench --bin wt-bench
bench=${CARGO_TARGET_DIR:-target}/release/wt-bench

crates="netcode-proto netcode-std netcode-tokio netcode-webtransport bench/src/bin/wt-bench"
tree() {
  echo "== tree: $(git rev-parse --short HEAD), uncommitted digest of $crates: $(
    { git diff HEAD -- $crates
      git ls-files --others --exclude-standard -z -- $crates | xargs -0 -r cat
    } | sha256sum | cut -c1-16)"
}
others() {
  # Other benchmarks on the machine (their names in this workspace).
  local found
  found=$(ps -eo pid=,comm= | grep -E ' (udp[^ ]*|history-bench|netcode-count)$' || true)
  if [ -n "$found" ]; then echo "== WARNING: another benchmark runs:"; echo "$found"; fi
}
quiet() {
  # Waits (up to 10 minutes) for a second in which the machine was at
  # most 10 % busy, so that no case starts inside someone's build; each
  # RESULT line then says what other processes took during its window
  # (others_util, in CPUs).
  local i a b busy total
  for i in $(seq 1 600); do
    read -r -a a < /proc/stat
    sleep 1
    read -r -a b < /proc/stat
    busy=$(( b[1] + b[2] + b[3] + b[6] + b[7] + b[8] - a[1] - a[2] - a[3] - a[6] - a[7] - a[8] ))
    total=$(( busy + b[4] + b[5] - a[4] - a[5] ))
    if [ $(( busy * 10 )) -le "$total" ]; then return 0; fi
  done
  echo "== still busy after 10 minutes; going on" >&2
}

tree
echo "== netcode-proto's features in this build (cargo tree -e features -p netcode-bench -i ring):"
cargo tree --locked -e features -p netcode-bench -i ring \
  | grep -oE '(netcode-proto|wtransport|rustls|quinn) feature "ring"' | sort -u
echo "== uptime before: $(uptime)"
others

run() {
  # A case during which other processes took more than 0.15 CPU is run
  # again (up to 3 times; its line goes to the .rejected file beside the
  # results).
  local attempt line others
  for attempt in 1 2 3; do
    quiet
    echo "-- $*" >&2
    line=$(taskset -c 0 "$bench" "$@" --server-cpu 1)
    others=$(grep -o 'others_util=[0-9.]*' <<<"$line" | cut -d= -f2)
    if awk -v o="${others:-0}" 'BEGIN { exit !(o <= 0.15) }'; then break; fi
    echo "== other processes took $others CPUs during that case (attempt $attempt)" >&2
    echo "$line" >> "$out.rejected"
  done
  echo "$line" | tee -a "$out"
}
aead() {
  quiet
  echo "-- aead $*" >&2
  taskset -c 1 "$bench" aead "$@" | tee -a "$out"
}

for round in $(seq 1 "$rounds"); do
  echo "== round $round of $rounds, $(uptime)"
  aead --round "$round"
  for k in 1 16; do
    for case in netcode-wt netcode-udp bare-wt bare-wt-batch bare-wt-select relay-wt; do
      run echo "$case" --clients "$k" --echoes "$echoes" --round "$round"
    done
  done
  for concurrency in 64 250; do
    run connect wt --clients 500 --concurrency "$concurrency" --round "$round"
    run connect udp --clients 500 --concurrency "$concurrency" --round "$round"
  done
  others
done

echo "== uptime after: $(uptime)"
tree
echo "== results: $out"
"$bench" summary "$out"

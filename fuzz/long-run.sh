#!/usr/bin/env bash
# Long fuzz runs on record: every target of this crate under libFuzzer for a
# fixed time, two at a time, each from the committed corpus into a scratch
# corpus, then one table row per target (executions, exec/s, libFuzzer's
# cov: and ft:, and whether it crashed) for fuzz/README.md.
#
#   bash fuzz/long-run.sh            # from the repository root or anywhere
#
# Times, in seconds: LONG_RUN_SECONDS for each target (default 480), and
# LONG_RUN_HOST_SECONDS for `host` (default 3000: its per-input setup is
# netcode-std's, about 15 times a session target's). `host` starts first, so
# the other targets share the second core meanwhile. LONG_RUN_DIR keeps the
# logs and the scratch corpora (default: a new temporary directory, printed).
# A crash stops that target only: its input is under fuzz/artifacts/<target>/
# and the run ends with a failure.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${LONG_RUN_SECONDS:-480}
host_seconds=${LONG_RUN_HOST_SECONDS:-3000}
dir=${LONG_RUN_DIR:-$(mktemp -d)}
mkdir -p "$dir"
echo "logs and scratch corpora in $dir"

cargo +nightly fuzz build --fuzz-dir fuzz
targets=$(cargo +nightly fuzz list --fuzz-dir fuzz | grep -vx host)
targets="host $targets"

# Operation lists gain from long inputs: no slow growth of the length limit
# for the session targets (the wire targets read one datagram or token).
flags_of() {
  case $1 in
    server_connected | client | host) echo "-len_control=0" ;;
    *) echo "" ;;
  esac
}

run_one() {
  local target=$1 time=$seconds log="$dir/$1.log"
  [ "$target" = host ] && time=$host_seconds
  mkdir -p "$dir/corpus/$target"
  local status=ok
  # shellcheck disable=SC2046 # the flags are words
  if ! cargo +nightly fuzz run --fuzz-dir fuzz "$target" \
    "$dir/corpus/$target" "$PWD/fuzz/corpus/$target" \
    -- -max_total_time="$time" -print_final_stats=1 $(flags_of "$target") \
    >"$log" 2>&1; then
    status=CRASH
  fi
  local done_line stat
  done_line=$(grep -E '^#[0-9]+.* cov: ' "$log" | tail -n 1 || true)
  stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -n 1; }
  printf '| `%s` | %s | %s | %s | %s | %s | %s |\n' "$target" "$time" \
    "$(stat number_of_executed_units)" "$(stat average_exec_per_sec)" \
    "$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$done_line")" \
    "$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$done_line")" \
    "$status" >"$dir/$target.row"
  [ "$status" = ok ]
}

failed=0
running=0
for target in $targets; do
  if [ "$running" -ge 2 ]; then
    wait -n || failed=1
    running=$((running - 1))
  fi
  run_one "$target" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || failed=1
  running=$((running - 1))
done

echo
echo "| target | seconds | executions | exec/s | cov | ft | result |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for target in $targets; do
  cat "$dir/$target.row"
done
[ "$failed" -eq 0 ] || { echo "a target crashed: see fuzz/artifacts/ and $dir/<target>.log" >&2; exit 1; }

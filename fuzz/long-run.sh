#!/usr/bin/env bash
# Fuzz runs on record: every target of this crate under libFuzzer for a
# fixed time, two at a time, each from the committed corpus into a scratch
# corpus, then one table row per target (executions, exec/s, libFuzzer's
# cov: and ft:, and whether it crashed) for fuzz/README.md. .ci/run's fuzz
# smoke is this script with 20 s for every target.
#
#   bash fuzz/long-run.sh            # from the repository root or anywhere
#
# Times, in seconds: LONG_RUN_SECONDS for each wire-level target (default
# 360), LONG_RUN_SESSION_SECONDS for `server_connected` and `client`
# (default 600), LONG_RUN_HOST_SECONDS for `host` (default 3000: its
# per-input setup is netcode-std's: in the run on record it ran 8 to 12
# times fewer inputs a second than the session targets).
# `host` starts first, so the other targets share the second core meanwhile.
# An input that runs longer than LONG_RUN_INPUT_TIMEOUT seconds (default
# 30; libFuzzer's own default is 20 minutes) is a hang, reported as a crash.
# LONG_RUN_DIR keeps the logs and the scratch corpora (default: a new
# temporary directory, printed). A crash stops that target only: its log is
# shown from the first error on, its input is under fuzz/artifacts/<target>/,
# and the run ends with a failure.
set -euo pipefail
cd "$(dirname "$0")/.."

wire_seconds=${LONG_RUN_SECONDS:-360}
session_seconds=${LONG_RUN_SESSION_SECONDS:-600}
host_seconds=${LONG_RUN_HOST_SECONDS:-3000}
input_timeout=${LONG_RUN_INPUT_TIMEOUT:-30}
dir=${LONG_RUN_DIR:-$(mktemp -d)}
mkdir -p "$dir"
echo "logs and scratch corpora in $dir"

cargo +nightly fuzz build --fuzz-dir fuzz
targets=$(cargo +nightly fuzz list --fuzz-dir fuzz | grep -vx host)
targets="host $targets"
for target in $targets; do
  [ -d "fuzz/corpus/$target" ] || { echo "fuzz target $target has no fuzz/corpus/$target/" >&2; exit 1; }
done

# Each target's time and libFuzzer flags. The session targets read lists
# of operations: the length limit starts at its maximum (rather than
# growing slowly from short inputs), a maximum that keeps an input to a
# few hundred operations (fewer for `host`, whose setup is dearer).
seconds_of() {
  case $1 in
    host) echo "$host_seconds" ;;
    server_connected | client) echo "$session_seconds" ;;
    *) echo "$wire_seconds" ;;
  esac
}
flags_of() {
  case $1 in
    host) echo "-len_control=0 -max_len=512" ;;
    server_connected | client) echo "-len_control=0 -max_len=2048" ;;
    *) echo "" ;;
  esac
}

run_one() {
  local target=$1 time log="$dir/$1.log" status=ok
  time=$(seconds_of "$target")
  mkdir -p "$dir/corpus/$target"
  # shellcheck disable=SC2046 # the flags are words
  if ! cargo +nightly fuzz run --fuzz-dir fuzz "$target" \
    "$dir/corpus/$target" "$PWD/fuzz/corpus/$target" \
    -- -max_total_time="$time" -timeout="$input_timeout" -print_final_stats=1 $(flags_of "$target") \
    >"$log" 2>&1; then
    status=CRASH
    {
      printf '%s: FAILED; its log from the first error on:\n' "$target"
      if grep -qE 'panicked at|ERROR' "$log"; then
        awk '/panicked at|ERROR/ { shown = 1 } shown && n++ < 200' "$log"
      else
        tail -n 60 "$log"
      fi
    } >&2
  fi
  local last stat
  last=$(grep -E '^#[0-9]+.* cov: ' "$log" | tail -n 1 || true)
  stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -n 1; }
  printf '| `%s` | %s | %s | %s | %s | %s | %s |\n' "$target" "$time" \
    "$(stat number_of_executed_units)" "$(stat average_exec_per_sec)" \
    "$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")" \
    "$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")" \
    "$status" | tee "$dir/$target.row"
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

#!/usr/bin/env bash
# The durable token history under load (BENCHMARKS.md, "Token history:
# group commit and the game loop"), with `history-bench`
# (bench/src/bin/history-bench/):
#
#   1. durable tokens per second, one sync per token against group
#      commit, on an idle disk, then under two synced writers (and, on the
#      idle disk, the flood of 2. with every token admitted);
#   2. under the same writers, the longest server `update` while 15,000
#      new tokens a second ask for records, 3 clients connected: with the
#      reference's 2048-entry token history (64 slots), with a history that
#      admits the whole flood (2048 slots), and without a history file.
#
#   bash bench/scripts/history-commit.sh [ROUNDS] [all|stress]   # default 5 all
#
# `stress` runs only a flood beyond the issue's target, under the same
# writers: 30,000 new tokens a second for a second into a server of 4096
# slots (a 32,768-entry history), enough to fill the writer's 4096
# records in flight when the disk is slow.
#
# HISTORY_BENCH_DIR (default target/history-bench, on the project's
# filesystem) holds the history files and the writers' files. A "synced
# writer" is a loop of `dd if=/dev/zero bs=1M count=256 conv=fdatasync`
# into a file of its own there. Everything is removed at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-5}
stage=${2:-all}
dir=${HISTORY_BENCH_DIR:-target/history-bench}
mkdir -p "$dir"
cargo build --release -q -p netcode-bench --bin history-bench
bench=${CARGO_TARGET_DIR:-target}/release/history-bench

stop="$dir/writers.stop"
writers=()
start_writers() {
  rm -f "$stop"
  for i in 1 2; do
    (
      while [ ! -e "$stop" ]; do
        dd if=/dev/zero of="$dir/dd-writer-$i" bs=1M count=256 conv=fdatasync status=none
      done
    ) &
    writers+=("$!")
  done
  sleep 2   # both writing
}
stop_writers() {
  [ "${#writers[@]}" -gt 0 ] || return 0
  touch "$stop"
  for pid in "${writers[@]}"; do
    # Its current dd, by parent id: the loop then sees the stop file.
    for child in $(pgrep -P "$pid" || true); do kill "$child" 2>/dev/null || true; done
  done
  for pid in "${writers[@]}"; do wait "$pid" 2>/dev/null || true; done
  writers=()
  rm -f "$stop" "$dir"/dd-writer-*
}
trap stop_writers EXIT

# The tree measured: the commit, and a digest of the uncommitted state of
# the two crates the figures depend on (changes and new files), printed
# before and after, so a tree edited during the run shows.
tree() {
  echo "== tree: $(git rev-parse --short HEAD), netcode-proto + netcode-std uncommitted digest $(
    { git diff HEAD -- netcode-proto netcode-std
      git ls-files --others --exclude-standard -z -- netcode-proto netcode-std | xargs -0 -r cat
    } | sha256sum | cut -c1-16)"
}
tree
echo "== filesystem of $dir"
df -hT "$dir"
findmnt -no SOURCE,FSTYPE,OPTIONS -T "$dir" || true
echo "== uptime before: $(uptime)"

if [ "$stage" = stress ]; then
  start_writers
  echo "== two synced writers running; uptime: $(uptime)"
  "$bench" flood --dir "$dir" --rounds "$rounds" --rate 30000 --max-clients 4096 \
    --label "2 synced writers, 4096 slots, 30,000/s"
  echo "== uptime with the writers, before stopping them: $(uptime)"
  stop_writers
  echo "== uptime after: $(uptime)"
  tree
  exit 0
fi

"$bench" commit --dir "$dir" --rounds "$rounds" --label idle
"$bench" flood --dir "$dir" --rounds "$rounds" --max-clients 2048 --label "idle, 2048 slots"

start_writers
echo "== two synced writers running; uptime: $(uptime)"
"$bench" commit --dir "$dir" --rounds "$rounds" --label "2 synced writers"
"$bench" flood --dir "$dir" --rounds "$rounds" --max-clients 64 --label "2 synced writers, 64 slots"
"$bench" flood --dir "$dir" --rounds "$rounds" --max-clients 2048 --label "2 synced writers, 2048 slots"
"$bench" flood --dir "$dir" --rounds "$rounds" --max-clients 2048 --file off --label "2 synced writers, 2048 slots, no file"
echo "== uptime with the writers, before stopping them: $(uptime)"
stop_writers

echo "== uptime after: $(uptime)"
tree

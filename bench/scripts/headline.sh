#!/usr/bin/env bash
# The headline rows of BENCHMARKS.md in one command: instructions per
# operation (callgrind) of ours on ring, of the Rust peers (renetcode,
# netcode-official) and, when NETCODE_C_BENCH names its build
# (bench/c/netcode_c_bench.c), of the C reference, from `cargo bench -p
# netcode-bench --bench counts`; then ours against the baseline committed
# beside this script (headline-baseline.txt), each row with its ratio, and
# any row more than 3 % above its baseline flagged WORSE (exit 1).
# Instructions repeat between runs to the instruction (the token's to about
# 0.1 %: its OS randomness varies), under any load, so 3 % is a change of
# code, not of the machine.
#
#   bash bench/scripts/headline.sh              # measure and compare
#   bash bench/scripts/headline.sh --update     # measure and write the baseline
#   bash bench/scripts/headline.sh --from FILE  # compare a saved run's output
#
# Run it before every stop that touches a hot path. Needs valgrind.
set -euo pipefail
cd "$(dirname "$0")/../.."
baseline=bench/scripts/headline-baseline.txt
limit=1.03
command -v valgrind >/dev/null || { echo "!!! FAILED: no valgrind (apt-get install valgrind) !!!" >&2; exit 1; }
run=$(mktemp)
trap 'rm -f "$run"' EXIT
if [ "${1:-}" = "--from" ]; then
  cp "${2:?--from needs the file of a saved run}" "$run"
else
  cargo bench -p netcode-bench --bench counts 2>/dev/null > "$run"
fi
grep -E '^(SKIPPED|load)' "$run" || true

# The table with the instructions alone (each cell's part before " / ").
echo
echo "instructions per operation (callgrind), commit $(git rev-parse --short HEAD):"
awk -F' [|] ' '/^[|] / {
  line = ""
  for (i = 1; i <= NF; i++) {
    cell = $i; sub(/^[|] /, "", cell); sub(/ [|]$/, "", cell)
    if (cell ~ /^[0-9]+ \/ /) { split(cell, parts, " / "); cell = parts[1] }
    line = line (i > 1 ? " | " : "| ") cell
  }
  print line " |"
  if (line ~ /^[|] case /) { sep = "|"; for (i = 1; i <= NF; i++) sep = sep "---|"; print sep }
}' "$run"

# Ours: the first measured column.
ours=$(awk -F' [|] ' '/^[|] [a-z]/ && $0 !~ /^[|] case/ {
  name = $1; sub(/^[|] /, "", name)
  split($2, parts, " / "); print name, parts[1]
}' "$run")
# A run that measured nothing (a failed build, a filter, valgrind missing)
# must not pass as "no row worse", nor become a baseline.
if ! echo "$ours" | grep -Eq '^[a-z0-9-]+ [0-9]+$'; then
  echo "!!! FAILED: no row of ours was measured (see the run's output above) !!!" >&2
  exit 1
fi
if [ "${1:-}" = "--update" ]; then
  # The tree's state before the file is rewritten (rewriting it dirties it).
  at=$(git describe --always --dirty)
  { echo "# case instructions (ours on ring), written by bench/scripts/headline.sh --update at $at"; echo "$ours"; } > "$baseline"
  echo; echo "baseline written: $baseline"
  exit 0
fi
[ -f "$baseline" ] || { echo "!!! FAILED: no $baseline (run with --update once) !!!" >&2; exit 1; }
echo
echo "ours against $baseline ($(head -1 "$baseline" | sed 's/.* at //')):"
echo "$ours" | awk -v limit="$limit" -v file="$baseline" '
  BEGIN { while ((getline line < file) > 0) if (line !~ /^#/) { split(line, f, " "); base[f[1]] = f[2] } }
  {
    if (!($1 in base)) { printf "  %-14s %12s  (no baseline)\n", $1, $2; next }
    seen[$1] = 1
    if ($2 !~ /^[0-9]+$/) { printf "  %-14s %12s  baseline %12s  NOT MEASURED\n", $1, $2, base[$1]; worse++; next }
    ratio = $2 / base[$1]
    flag = ratio > limit ? "  WORSE" : ""
    if (ratio > limit) worse++
    printf "  %-14s %12s  baseline %12s  %.3fx%s\n", $1, $2, base[$1], ratio, flag
  }
  END {
    for (name in base) if (!(name in seen)) { printf "  %-14s %12s  baseline %12s  MISSING\n", name, "-", base[name]; worse++ }
    if (worse) { printf "%d row(s) more than 3 %% worse than the baseline, or not measured\n", worse; exit 1 } else print "no row more than 3 % worse"
  }'

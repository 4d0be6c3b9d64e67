#!/usr/bin/env bash
# Where ours-through-the-C-API's instructions go (BENCHMARKS.md, "The C
# API (netcode-c)"): for each case, callgrind's self cost per source file
# of the measured calls, as the counting run takes it (the difference of a
# longer and a shorter run over the difference of their operations),
# summed by layer: netcode-c (the boundary), netcode-std (the host),
# netcode-proto (the protocol), ring (the AEAD), Rust's core/std/alloc
# (where no crate of ours names the function it is inlined into), libc
# (malloc/free and memcpy/memset, whoever called them) and the C
# program's own functions.
#
#   bash bench/scripts/c-api-layers.sh [CASE...]   # default: every case the C program offers
#
# Builds the program as bench/scripts/c-api.sh --build does. Needs valgrind
# (callgrind_annotate comes with it).
set -euo pipefail
cd "$(dirname "$0")/../.."
exe=$(bash bench/scripts/c-api.sh --build)
cases=("$@")
if [[ ${#cases[@]} -eq 0 ]]; then
  cases=(send-100 send-1200 receive-100 receive-1200 request garbage handshake token
    tick-16 tick-256 loopback-100 loopback-1200)
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Self cost by layer of one callgrind output: "layer count" lines.
layers() {
  callgrind_annotate --auto=no --threshold=100 "$1" | awk '
    match($0, /^ *[0-9,]+ \([ 0-9.]+%\) +/) {
      count = substr($0, 1, RLENGTH); sub(/\(.*/, "", count); gsub(/[ ,]/, "", count)
      name = substr($0, RLENGTH + 1)
      if (name ~ /PROGRAM TOTALS/) next
      # By the source file of the instructions; Rust library code
      # inlined into a function (core, alloc, hashbrown, heapless) by
      # the first crate its function names.
      if (name ~ /(^|\/)netcode-c\/src\//) layer = "netcode-c"
      else if (name ~ /(^|\/)netcode-std\/src\//) layer = "netcode-std"
      else if (name ~ /(^|\/)netcode-proto\/src\//) layer = "netcode-proto"
      else if (name ~ /\/ring-[0-9.]+\//) layer = "ring"
      else if (name ~ /^\/rustc\/|^\/rust\/deps\/|\/\.cargo\/registry\//) {
        function_name = name; sub(/^[^:]*:/, "", function_name)
        layer = "rust-core"
        if (match(function_name, /netcode_std::|netcode_proto::|netcode::|ring::|ring_core|netcode_[a-z_0-9]+/)) {
          crate = substr(function_name, RSTART, RLENGTH)
          if (crate == "netcode_std::") layer = "netcode-std"
          else if (crate == "netcode_proto::") layer = "netcode-proto"
          else if (crate ~ /^ring/) layer = "ring"
          else layer = "netcode-c"
        }
      }
      else if (name ~ /__rustc::/) layer = "rust-core"
      else if (name ~ /malloc|memmove|memset|memcpy|memcmp/) layer = "libc"
      else if (name ~ /^\?\?\?:/) layer = "c-program"
      else layer = "other"
      sum[layer] += count
    }
    END { for (l in sum) print l, sum[l] }'
}

order="netcode-c netcode-std netcode-proto ring rust-core libc c-program other"
echo "| case | ${order// / | } | total |"
echo "|---|$(for _ in $order total; do printf -- '---:|'; done)"
for case in "${cases[@]}"; do
  if [[ $case == tick-* ]]; then short=6 long=18; else short=500 long=1500; fi
  for n in $short $long; do
    valgrind --tool=callgrind --toggle-collect='*measured_once*' \
      --callgrind-out-file="$work/$case.$n" "$exe" "$case" "$n" >/dev/null 2>&1
    layers "$work/$case.$n" > "$work/$case.$n.layers"
  done
  awk -v order="$order" -v ops=$((long - short)) -v name="$case" '
    FNR == NR { short[$1] = $2; next }
    { long[$1] = $2 }
    END {
      n = split(order, ls, " "); line = "| " name; total = 0
      for (i = 1; i <= n; i++) {
        v = (long[ls[i]] - short[ls[i]]) / ops; total += v
        line = line sprintf(" | %.0f", v)
      }
      print line sprintf(" | %.0f |", total)
    }' "$work/$case.$short.layers" "$work/$case.$long.layers"
done

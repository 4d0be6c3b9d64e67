#!/usr/bin/env bash
# Round trips (p50, p99, worst), pings lost and server CPU per echo for one
# netcode client over UDP, over WebTransport and over the WebSocket
# fallback of the same server (BENCHMARKS.md, "Browsers' transports"),
# with `wt-bench rtt` (bench/src/bin/wt-bench/rtt.rs):
#
#   bash bench/scripts/transports.sh [ROUNDS] [PINGS]   # default 3 rounds, 2000 pings
#
# Each round runs the three transports on a clean loopback, then again
# under 1 % loss: in a network namespace of its own (`unshare -n`, as
# root), an nftables rule drops 1 % of the packets leaving loopback
# (`numgen random mod 100 < 1 drop`; this kernel has no netem), where
# TCP's resends and head-of-line blocking show. Needs `nft` (Debian's
# nftables) and root.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}
pings=${2:-2000}
command -v nft >/dev/null || { echo "!!! FAILED: no nft (apt-get install nftables) !!!" >&2; exit 1; }
cargo build --release --locked -p netcode-bench --bin wt-bench
target=$(cargo metadata --format-version 1 --no-deps --locked | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
bench="$target/release/wt-bench"
echo "== $(git rev-parse --short HEAD), load $(cut -d' ' -f1 /proc/loadavg), $(nproc) CPUs"
for round in $(seq "$rounds"); do
  for kind in udp webtransport websocket; do
    "$bench" rtt "$kind" --pings "$pings" --round "$round" --condition clean
  done
  unshare -n bash -c "
    set -euo pipefail
    ip link set lo up
    nft add table inet loss
    nft add chain inet loss out '{ type filter hook output priority 0; }'
    nft add rule inet loss out numgen random mod 100 lt 1 drop
    for kind in udp webtransport websocket; do
      '$bench' rtt \"\$kind\" --pings '$pings' --round '$round' --condition loss1
    done
  "
done
echo "== load $(cut -d' ' -f1 /proc/loadavg)"

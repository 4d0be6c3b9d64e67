#!/usr/bin/env bash
# Datagram system calls per datagram of the `server` example serving N
# `client` examples on loopback (default 16), for about 10 s.
#
#   bash bench/scripts/server-syscalls.sh [N]
#
# The server's datagram system calls (sendto, recvfrom, sendmmsg,
# recvmmsg, sendmsg, recvmsg) are counted by `strace -c` attached to it;
# its datagrams are the kernel's UDP counters (/proc/net/snmp) over the
# same interval: every datagram on loopback is one the server sent or
# received. Needs strace and a release build of the examples.
set -euo pipefail
cd "$(dirname "$0")/../.."
clients=${1:-16}
cargo build --release -q -p netcode-examples --bins
bin=target/release
out=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$out"' EXIT

udp() { awk '/^Udp: [0-9]/ { print $2 + $5 }' /proc/net/snmp; }  # InDatagrams + OutDatagrams

"$bin/netcode-server" 127.0.0.1:40000 --seconds 16 >"$out/server.log" 2>&1 &
server=$!
sleep 0.5
for _ in $(seq "$clients"); do
  "$bin/netcode-client" 127.0.0.1:40000 --seconds 14 >/dev/null 2>&1 &
done
sleep 2   # every client connected and sending
before=$(udp)
timeout 10 strace -c -f -p "$server" \
  -e trace=sendto,recvfrom,sendmmsg,recvmmsg,sendmsg,recvmsg -o "$out/strace.txt" || true
after=$(udp)
wait "$server" || true
# Loopback counts each datagram once in and once out.
datagrams=$(( (after - before) / 2 ))
calls=$(awk '$NF ~ /^(sendto|recvfrom|sendmmsg|recvmmsg|sendmsg|recvmsg)$/ { n += $4 } END { print n + 0 }' "$out/strace.txt")
cat "$out/strace.txt"
echo "clients: $clients  server datagram system calls: $calls  datagrams: $datagrams"
awk -v c="$calls" -v d="$datagrams" 'BEGIN { printf "system calls per datagram: %.3f\n", c / d }'

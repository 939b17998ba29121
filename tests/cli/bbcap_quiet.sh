#!/bin/sh
# bbcap_quiet.sh - a live capture ends on time when no packet comes: on the
# loopback of a fresh network namespace (nothing else runs there),
# "--duration 2s" ends within 3 s of the start with exit 0 and a closed trace
# (#capture packets=0); "-c 2" ends as soon as its second packet (one UDP
# datagram and the ICMP port unreachable it draws) has come, within 3 s
# although nothing follows. Before, with TPACKET_V3 the blocking read
# returned only after a packet, so a quiet interface kept bbcap running.
# The bound is functional (the capture ends at all), not a timing measure.
# Needs root and ip(8); skips (77) otherwise.
set -u
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (network namespaces)" >&2; exit 77; }
command -v ip >/dev/null 2>&1 || { echo "skipped: ip not installed" >&2; exit 77; }
: "${BB_BIN:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
ns=bbquiet-$$
trap 'ip netns del "$ns" 2>/dev/null' EXIT INT TERM
ip netns add "$ns" 2>ns.err || { echo "skipped: cannot make a namespace: $(cat ns.err)" >&2; exit 77; }
ip -n "$ns" link set lo up
fail=0
no() { echo "FAIL: $*"; fail=1; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# --duration 2s, no traffic at all
t0=$(now_ms)
timeout 30 ip netns exec "$ns" "$BB_BIN/bbcap" -q -i lo --duration 2s -w dur.tr 2>dur.err
rc=$?
ms=$(($(now_ms) - t0))
[ $rc -eq 0 ] || no "--duration 2s: exit $rc: $(cat dur.err)"
[ $ms -lt 3000 ] || no "--duration 2s on a quiet interface took $ms ms, want under 3000"
[ $ms -ge 2000 ] || no "--duration 2s ended after $ms ms, before its time"
grep -q '^#capture packets=0 ' dur.tr || no "--duration: no '#capture packets=0' line: $(tail -1 dur.tr)"
echo "--duration 2s, no traffic: ended after $ms ms"

# -c 2: two packets, then nothing
(sleep 0.5; ip netns exec "$ns" sh -c 'printf x >/dev/udp/127.0.0.1/9' 2>/dev/null ||
	ip netns exec "$ns" bash -c 'printf x >/dev/udp/127.0.0.1/9') &
t0=$(now_ms)
timeout 30 ip netns exec "$ns" "$BB_BIN/bbcap" -q -i lo -c 2 -w cnt.tr 2>cnt.err
rc=$?
ms=$(($(now_ms) - t0))
wait
[ $rc -eq 0 ] || no "-c 2: exit $rc: $(cat cnt.err)"
[ $ms -lt 3000 ] || no "-c 2 took $ms ms after two packets, want under 3000"
grep -q '^#capture packets=2 ' cnt.tr || no "-c 2: $(tail -1 cnt.tr)"
echo "-c 2: ended after $ms ms"
exit $fail

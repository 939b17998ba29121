#!/bin/sh
# bbcap_late.sh - messages slower than the reorder window, on a capture made
# here (python3): HTTP/1.1 on 10.0.0.1 -> 10.0.0.2:80, a fast flow asking
# every 50 ms for 8 s while other flows answer
#  - slow: a response that trickles for 5 s (a segment every 100 ms),
#  - stall: a response that stops for 3 s half-way, then ends,
#  - medium: a response that takes 1.5 s (shorter than the 2 s window).
# With the watermark (the default) as with --fixed-hold: the slow and the
# stalled responses' RETs are late (2), the medium one is not, every other
# record is in time order, and the two traces are the same bytes.
set -u
command -v /usr/bin/python3 >/dev/null 2>&1 || { echo "skipped: no /usr/bin/python3" >&2; exit 77; }
mkdir -p "$BB_TMP"
cap="$BB_TMP/late.pcap"
/usr/bin/python3 - "$cap" <<'PYEOF' || exit 1
import struct, sys
T0 = 1700000000.0
ev = []
def pkt(t, sa, da, sp, dp, seq, ack, fl, data=b""):
    tcp = struct.pack("!HHIIBBHHH", sp, dp, seq & 0xffffffff, ack & 0xffffffff, 0x50, fl, 65535, 0, 0)
    # IPv4 header checksum left 0: bbcap's own reassembly checks none.
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 40 + len(data), 0, 0x4000, 64, 6, 0, sa, da)
    ev.append((t, len(ev), b"\2\0\0\0\0\2\2\0\0\0\0\1\x08\0" + ip + tcp + data))
C, S = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])
class Conn:
    def __init__(self, port, t):
        self.p, self.c, self.s = port, 1000, 5000
        pkt(t, C, S, port, 80, self.c - 1, 0, 0x02)
        pkt(t + 0.0001, S, C, 80, port, self.s - 1, self.c, 0x12)
        pkt(t + 0.0002, C, S, port, 80, self.c, self.s, 0x10)
    def req(self, t, path):
        d = b"GET " + path + b" HTTP/1.1\r\nHost: s\r\n\r\n"
        pkt(t, C, S, self.p, 80, self.c, self.s, 0x18, d)
        self.c += len(d)
    def resp(self, times, size):
        body = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % size + b"x" * size
        n = len(times)
        step = -(-len(body) // n)
        for i, t in enumerate(times):
            seg = body[i * step:(i + 1) * step]
            pkt(t, S, C, 80, self.p, self.s, self.c, 0x18, seg)
            self.s += len(seg)
            pkt(t + 0.0001, C, S, self.p, 80, self.c, self.s, 0x10)
fast = Conn(40000, 0.0)
for i in range(160):
    t = 0.01 + i * 0.05
    fast.req(t, b"/fast/%d" % i)
    fast.resp([t + 0.002], 100)
slow = Conn(40001, 0.1)
slow.req(0.2, b"/slow")
slow.resp([0.3 + i * 0.1 for i in range(50)], 5000)          # 0.3 .. 5.2 s
stall = Conn(40002, 0.1)
stall.req(0.5, b"/stall")
stall.resp([0.6, 0.7, 3.7, 3.8], 4000)                       # 3 s silent
medium = Conn(40003, 0.1)
medium.req(1.0, b"/medium")
medium.resp([1.1 + i * 0.1 for i in range(16)], 1600)         # 1.1 .. 2.6 s
ev.sort()
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b23c4d, 2, 4, 0, 0, 65535, 1))
    for t, _, fr in ev:
        ns = int(round((T0 + t) * 1e9))
        f.write(struct.pack("<IIII", ns // 1000000000, ns % 1000000000, len(fr), len(fr)) + fr)
PYEOF
fail=0
"$BB_BIN/bbcap" -q -r "$cap" -w "$BB_TMP/wm.tr" || fail=1
"$BB_BIN/bbcap" -q --fixed-hold -r "$cap" -w "$BB_TMP/fh.tr" || fail=1
late=$(sed -n 's/^#capture .* late=\([0-9]*\).*/\1/p' "$BB_TMP/wm.tr")
if [ "$late" != 2 ]; then
	echo "FAIL: $late late records, expected 2 (the slow and the stalled responses)"
	fail=1
fi
# The late ones are the RETs of /slow and /stall; without them, time order.
grep -v '^#' "$BB_TMP/wm.tr" | awk -F'\t' '
	$2 == "RET" && $0 ~ /req=GET%20\/(slow|stall)\t/ { next }
	{ if ($1 < prev) { print "FAIL: out of order: " $0; bad = 1 } prev = $1 }
	END { exit bad }' || fail=1
for p in slow stall medium; do
	n=$(grep -c "RET	10.0.0.2	10.0.0.1	.*req=GET%20/$p" "$BB_TMP/wm.tr")
	[ "$n" = 1 ] || { echo "FAIL: $n RETs of /$p"; fail=1; }
done
calls=$(grep -c '	CALL	' "$BB_TMP/wm.tr")
[ "$calls" = 163 ] || { echo "FAIL: $calls calls, expected 163"; fail=1; }
if ! cmp -s "$BB_TMP/wm.tr" "$BB_TMP/fh.tr"; then
	echo "FAIL: the watermark's trace differs from the fixed hold's"
	diff "$BB_TMP/fh.tr" "$BB_TMP/wm.tr" | head -10
	fail=1
fi
[ "$fail" = 0 ] && echo "ok: 2 late (slower than the window), the 1.5 s response in order, same bytes as the fixed hold"
exit $fail

#!/bin/sh
# dec_pipeline_bound.sh - past the reply queue's bound: a synthetic capture of
# one redis connection with 70,000 PINGs written before their 70,000 PONGs
# (made here by python3): the 65,536 that fit are paired with their own
# replies, the 4,464 calls after the bound are counted (queue_full in the
# trace's #capture line and bbcap's summary) and their replies written
# unmatched, never paired with another call. Skips (77) without python3.
set -u
command -v /usr/bin/python3 >/dev/null 2>&1 || { echo "skipped: /usr/bin/python3 not installed" >&2; exit 77; }
mkdir -p "$BB_TMP"
T=$(cd "$BB_TMP" && pwd)
/usr/bin/python3 - "$T/bound.pcap" <<'PYEOF' || exit 1
import struct, sys
N = 70000
def frame(src, dst, sp, dp, seq, ack, flags, data=b""):
    tcp = struct.pack("!HHIIBBHHH", sp, dp, seq, ack, 5 << 4, flags, 65535, 0, 0) + data
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0x4000, 64, 6, 0,
                     bytes(src), bytes(dst))
    return b"\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00" + ip + tcp
c, s = (10, 0, 0, 1), (10, 0, 0, 2)
pk = []
pk.append(frame(c, s, 40000, 6379, 100, 0, 0x02))
pk.append(frame(s, c, 6379, 40000, 500, 101, 0x12))
pk.append(frame(c, s, 40000, 6379, 101, 501, 0x10))
def stream(src, dst, sp, dp, seq, ack, data):
    for off in range(0, len(data), 60000):
        chunk = data[off:off + 60000]
        pk.append(frame(src, dst, sp, dp, seq + off, ack, 0x18, chunk))
    return seq + len(data)
req = b"*1\r\n$4\r\nPING\r\n" * N
rep = b"+PONG\r\n" * N
cseq = stream(c, s, 40000, 6379, 101, 501, req)
sseq = stream(s, c, 6379, 40000, 501, cseq, rep)
pk.append(frame(c, s, 40000, 6379, cseq, sseq, 0x11))
pk.append(frame(s, c, 6379, 40000, sseq, cseq + 1, 0x11))
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 262144, 1))
    for i, p in enumerate(pk):
        f.write(struct.pack("<IIII", 1700000000, i, len(p), len(p)) + p)
PYEOF
"$BB_BIN/bbcap" -r "$T/bound.pcap" -w "$T/bound.tr" 2>"$T/bbcap.err" ||
	{ echo "FAIL: bbcap"; cat "$T/bbcap.err"; exit 1; }
fail=0
cap=$(grep '^#capture' "$T/bound.tr")
case $cap in
*" redis=calls:70000,rets:70000,unanswered:4464,unmatched_ret:4464,malformed:0,queue_full:4464"*)
	echo "ok   #capture: redis calls 70000, 4464 unmatched returns, queue_full 4464" ;;
*) echo "FAIL: #capture line: $cap"; fail=1 ;;
esac
grep -q "4464 calls unpaired (reply queue full)" "$T/bbcap.err" ||
	{ echo "FAIL: summary: $(grep redis "$T/bbcap.err")"; fail=1; }
# Every return is its own call's, or unmatched: the 4,464 unmatched are the
# replies of calls 65,537 to 70,000.
awk -f "$BB_SRC/tests/cli/dec_pipeline_check.awk" "$T/bound.tr" >"$T/conns"
read -r proto conn calls rets maxw errs first <"$T/conns"
if [ "$calls $rets $errs" = "70000 70000 4464" ] && [ "$maxw" = 70000 ] &&
	[ "$first" = "RET $conn.? (reply 65537): unmatched" ]; then
	echo "ok   replies 1 to 65536 paired with their own calls, 65537 to 70000 unmatched"
else
	echo "FAIL: $calls calls, $rets returns, $errs wrong, $maxw waiting; first: $first"
	fail=1
fi
[ "$(grep -c "	RET	.*	$conn\.?	" "$T/bound.tr")" = 4464 ] || { echo "FAIL: unmatched returns"; fail=1; }
exit $fail

#!/bin/sh
# robust_fulldisk.sh - every writer when the disk fills part way. Two ways:
# a file size limit (ulimit -f 32: 16 KB in dash, 32 KB in bash; SIGXFSZ
# ignored, so writes fail with EFBIG,
# "File too large"; any user), and, as root, a 64 KB tmpfs ("No space left on
# device"; skipped with a note when not root or mount(8) fails). For each of
# bbcap -w FILE, bbcap -w - > FILE, maketrace -o FILE, maketrace > FILE,
# bbskew -o FILE, bbnest -o FILE and >> FILE, bbconv -o FILE and >> FILE (dot,
# JSON, text): exit 1, one line "PROG: error: FILE: write error: REASON"
# (FILE the path, or <stdout>), no sanitizer report. A trace left behind ends
# with a complete line, is a byte-for-byte prefix of the trace written in
# full and reads back strictly (bbskew, exit 0); a dot, JSON or text
# document is cut back to nothing (no torn document), and what an appended-to
# file held before stays.
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
: "${ASAN_OPTIONS:=detect_leaks=1:abort_on_error=1}"
: "${UBSAN_OPTIONS:=print_stacktrace=1:halt_on_error=1}"
export ASAN_OPTIONS UBSAN_OPTIONS
mnt=
trap '[ -n "$mnt" ] && { umount "$mnt" 2>/dev/null; rmdir "$mnt" 2>/dev/null; }' EXIT INT TERM
fail=0
no() { echo "FAIL: $*"; fail=1; }
san() { # FILE: no sanitizer report in FILE
	if grep -q -e Sanitizer -e 'runtime error' "$1"; then
		no "sanitizer report in $1:"; head -20 "$1"
	fi
}
nospace() { # WHAT RC ERRFILE WANT-MESSAGE
	san "$3"
	[ "$2" -eq 1 ] || no "$1: exit $2, want 1"
	[ "$(cat "$3")" = "$4" ] || no "$1: stderr '$(cat "$3")', want '$4'"
}
# run CMD...: with the file size limit in the ulimit mode
run() {
	if [ "$mode" = ulimit ]; then
		(trap '' XFSZ; ulimit -f 32; exec "$@")
	else
		"$@"
	fi
}
# A trace cut by the full disk: non-empty, whole lines, a prefix of the full
# trace, and a trace bbskew reads strictly.
whole_trace() { # WHAT FILE FULL
	sz=$(wc -c <"$2")
	[ "$sz" -gt 0 ] || { no "$1: nothing kept"; return; }
	[ "$sz" -lt "$(wc -c <"$3")" ] || no "$1: $sz bytes, not cut (the disk did not fill?)"
	[ "$(tail -c 1 "$2" | od -An -c | tr -d ' ')" = '\n' ] || no "$1: last line torn"
	# bbcap's #capture line (counts) comes at the end or is rewritten there,
	# only when the run succeeds: it is left out of the comparison
	grep -v '^#capture' "$2" >cut.tr
	grep -v '^#capture' "$3" >whole.tr
	head -c "$(wc -c <cut.tr)" whole.tr | cmp -s - cut.tr ||
		no "$1: not a prefix of the trace written in full"
	timeout 60 "$BB_BIN/bbskew" "$2" >reread.tr 2>reread.err ||
		no "$1: does not read back: $(cat reread.err)"
	echo "$mode: $1: kept $sz of $(wc -c <"$3") bytes, $(grep -c -v '^#' "$2") records"
}
empty() { rm -f "$dir"/*; }

# Inputs, written to the roomy disk: a capture of 2,000 DNS exchanges (about
# 250 KB of trace), maketrace's multitier (3,000 messages, 166 KB), and a trace
# of 6,000 call pairs from distinct clients (dot output over 64 KB for both
# bbnest and bbconv).
PY=/usr/bin/python3
[ -x $PY ] || PY=$(command -v python3) || PY=
if [ -n "$PY" ]; then
	$PY - dns.pcap <<'PYEOF'
import struct, sys
def pkt(src, dst, sport, dport, payload):
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0, bytes(src), bytes(dst))
    return b"\x02\0\0\0\0\x01\x02\0\0\0\0\x02\x08\x00" + ip + udp
def dns(qid, resp):
    q = b"\x07example\x03com\x00\x00\x01\x00\x01"
    return struct.pack("!HHHHHH", qid, 0x8180 if resp else 0x0100, 1, 0, 0, 0) + q
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    c, s = [10, 1, 0, 1], [10, 1, 0, 53]
    for i in range(2000):
        t = 1700000000 * 10**6 + i * 1000
        for src, dst, sp, dp, r, dt in ((c, s, 10000 + i, 53, 0, 0), (s, c, 53, 10000 + i, 1, 200)):
            p = pkt(src, dst, sp, dp, dns(i, r))
            f.write(struct.pack("<IIII", (t + dt) // 10**6, (t + dt) % 10**6, len(p), len(p)) + p)
PYEOF
fi
cfg=$BB_SRC/maketrace/configs/multitier.json
timeout 60 "$BB_BIN/maketrace" -N 3000 "$cfg" >mt-full.tr || no "maketrace on a roomy disk failed"
awk 'BEGIN { print "#bbtrace 1"
	for (i = 0; i < 6000; i++) {
		t = 1 + i * 0.001
		printf "%.6f\tCALL\tc%d\ts\tq%d\n%.6f\tRET\ts\tc%d\tq%d\n", t, i, i, t + 0.0005, i, i
	} }' >many.tr
timeout 60 "$BB_BIN/bbskew" many.tr >many-full.tr || no "bbskew on a roomy disk failed"

# writers MODE DIR REASON ROOM: every case, outputs in DIR, which holds ROOM bytes
writers() {
	mode=$1 dir=$2 why=$3 room=$4
	# 1. bbcap -w FILE and -w - redirected
	if [ -f dns.pcap ]; then
		timeout 60 "$BB_BIN/bbcap" -q --token-salt fulldisk -r dns.pcap -w cap-full.tr 2>err || no "bbcap on a roomy disk failed: $(cat err)"
		empty
		run timeout 60 "$BB_BIN/bbcap" -q --token-salt fulldisk -r dns.pcap -w "$dir/cap.tr" 2>err
		nospace "bbcap -w FILE" $? err "bbcap: error: $dir/cap.tr: write error: $why"
		whole_trace "bbcap -w FILE" "$dir/cap.tr" cap-full.tr
		empty
		run timeout 60 "$BB_BIN/bbcap" -q --token-salt fulldisk -r dns.pcap -w - >"$dir/cap.tr" 2>err
		nospace "bbcap -w - >FILE" $? err "bbcap: error: <stdout>: write error: $why"
		whole_trace "bbcap -w - >FILE" "$dir/cap.tr" cap-full.tr
	else
		echo "note: python3 not found: bbcap cases not run"
	fi

	# 2. maketrace -o FILE and > FILE
	empty
	run timeout 60 "$BB_BIN/maketrace" -N 3000 -o "$dir/mt.tr" "$cfg" 2>err
	nospace "maketrace -o FILE" $? err "maketrace: error: $dir/mt.tr: write error: $why"
	whole_trace "maketrace -o FILE" "$dir/mt.tr" mt-full.tr
	empty
	run timeout 60 "$BB_BIN/maketrace" -N 3000 "$cfg" >"$dir/mt.tr" 2>err
	nospace "maketrace >FILE" $? err "maketrace: error: <stdout>: write error: $why"
	whole_trace "maketrace >FILE" "$dir/mt.tr" mt-full.tr

	# 3. bbskew -o FILE (the trace writer again, through another command)
	empty
	run timeout 60 "$BB_BIN/bbskew" -o "$dir/skew.tr" many.tr 2>err
	nospace "bbskew -o FILE" $? err "bbskew: error: $dir/skew.tr: write error: $why"
	whole_trace "bbskew -o FILE" "$dir/skew.tr" many-full.tr

	# 4. bbnest and bbconv: -o FILE leaves an empty file; >> FILE leaves what was there
	for prog in bbnest bbconv; do
		for fmt in --dot --json --text; do
			timeout 120 "$BB_BIN/$prog" $fmt many.tr >doc-full 2>err || no "$prog $fmt on a roomy disk failed"
			[ "$(wc -c <doc-full)" -gt "$room" ] || {
				echo "note: $mode: $prog $fmt: $(wc -c <doc-full) bytes fit in $room: case not run"
				continue
			}
			empty
			run timeout 120 "$BB_BIN/$prog" $fmt -o "$dir/doc" many.tr 2>err
			nospace "$prog $fmt -o FILE" $? err "$prog: error: $dir/doc: write error: $why"
			[ -f "$dir/doc" ] && [ ! -s "$dir/doc" ] ||
				no "$prog $fmt -o FILE: $(wc -c <"$dir/doc" 2>/dev/null) bytes left, want an empty file"
			empty
			echo 'kept before' >"$dir/doc"
			run timeout 120 "$BB_BIN/$prog" $fmt many.tr >>"$dir/doc" 2>err
			nospace "$prog $fmt >>FILE" $? err "$prog: error: <stdout>: write error: $why"
			[ "$(cat "$dir/doc")" = 'kept before' ] ||
				no "$prog $fmt >>FILE: $(wc -c <"$dir/doc") bytes, want only the line that was there"
		done
	done
}

mkdir -p lim
writers ulimit lim 'File too large' 32768
if [ "$(id -u)" != 0 ]; then
	echo "note: the 64 KB tmpfs needs root: that half not run"
else
	mnt=$(mktemp -d "$BB_TMP/full.XXXXXX") || exit 1
	if mount -t tmpfs -o size=64k bbfull "$mnt" 2>mount.err; then
		writers tmpfs "$mnt" 'No space left on device' 65536
	else
		echo "note: cannot mount a tmpfs: $(cat mount.err): that half not run"
	fi
fi

[ $fail -eq 0 ] && echo ok
exit $fail

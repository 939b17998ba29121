#!/bin/sh
# bbcap_reader.sh - a classic pcap file read in place (mmap, bbcap's own
# record parser) gives the same trace, messages and exit status as the same
# bytes read by libpcap from standard input: on the protocol corpus, on every
# robustness capture in big-endian or nanosecond pcap, and on every 10th of
# the others (truncated, corrupted and fuzzed files among them).
# One known difference: pcap times are unsigned 32-bit seconds; libpcap
# 1.10 reads tcpdump__time_2106.pcap's 4291747200 (in 2106) as negative
# (bbcap clamps it to 0), bbcap's reader as 4291747200: checked as such.
set -u
corpus="$BB_SRC/../shared/corpus"
if [ ! -d "$corpus/protocols" ]; then
	echo "skipped: shared corpus not found at $corpus" >&2
	exit 77
fi
mkdir -p "$BB_TMP"
fail=0 n=0 i=0
for f in "$corpus"/protocols/*.pcap "$corpus"/robustness/*.pcap; do
	[ -f "$f" ] || continue
	i=$((i + 1))
	case $f in
	*/robustness/*)
		m=$(od -An -tx1 -N4 "$f" | tr -d ' ')
		[ "$m" = a1b2c3d4 ] || [ "$m" = 4d3cb2a1 ] || [ $((i % 10)) = 0 ] || continue ;;
	esac
	"$BB_BIN/bbcap" -q --token-salt reader -r "$f" -w "$BB_TMP/map.tr" 2>"$BB_TMP/map.err"
	echo "exit $?" >>"$BB_TMP/map.err"
	"$BB_BIN/bbcap" -q --token-salt reader -r - -w "$BB_TMP/lib.tr" <"$f" 2>"$BB_TMP/lib.err"
	echo "exit $?" >>"$BB_TMP/lib.err"
	n=$((n + 1))
	grep -av '^#source' "$BB_TMP/map.tr" >"$BB_TMP/a"
	grep -av '^#source' "$BB_TMP/lib.tr" >"$BB_TMP/b"
	sed "s|$f|-|g" "$BB_TMP/map.err" >"$BB_TMP/c"
	case $f in
	*/tcpdump__time_2106.pcap)
		if grep -aq '^4291747200\.000000000	CALL	' "$BB_TMP/a" &&
			grep -aq '^0\.000000000	CALL	' "$BB_TMP/b"; then
			echo "ok   ${f##*/}: 2106 read as 2106 in place (libpcap: 0)"
		else
			echo "FAIL ${f##*/}: not the known difference"
			diff "$BB_TMP/a" "$BB_TMP/b" | head -6
			fail=1
		fi
		continue ;;
	esac
	if ! cmp -s "$BB_TMP/a" "$BB_TMP/b"; then
		echo "FAIL ${f##*/}: traces differ (<: in place, >: libpcap)"
		diff "$BB_TMP/a" "$BB_TMP/b" | head -6
		fail=1
	elif ! cmp -s "$BB_TMP/c" "$BB_TMP/lib.err"; then
		echo "FAIL ${f##*/}: messages differ (<: in place, >: libpcap)"
		diff "$BB_TMP/c" "$BB_TMP/lib.err" | head -6
		fail=1
	fi
done
[ "$n" -ge 50 ] || { echo "FAIL: only $n captures found"; exit 1; }
echo "$n captures: read in place = read by libpcap"
exit $fail

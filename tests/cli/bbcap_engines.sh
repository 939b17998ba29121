#!/bin/sh
# bbcap_engines.sh - bbcap's own TCP reassembly (the default) and libnids'
# (--reassembly=libnids) give the same trace records on every capture of the
# shared protocol corpus. One known difference, checked as such:
#   thrift__ndpi__thrift.pcap: the client's TSO segments have an IP length of 0
#   (both engines drop them: two holes); the second hole lies before a bare
#   FIN, which libnids ignores and bbcap counts as a gap, so the generic call
#   in progress gets the 6,875 lost bytes in its len= (7245, not 370).
set -u
corpus="$BB_SRC/../shared/corpus/protocols"
if [ ! -d "$corpus" ]; then
	echo "skipped: shared corpus not found at $corpus" >&2
	exit 77
fi
mkdir -p "$BB_TMP"
fail=0 n=0 recs=0
for f in "$corpus"/*.pcap "$corpus"/*.pcapng; do
	[ -f "$f" ] || continue
	for e in bbcap libnids; do
		"$BB_BIN/bbcap" -q --reassembly=$e -r "$f" -w "$BB_TMP/$e.tr" 2>"$BB_TMP/$e.err"
		echo "exit $?" >>"$BB_TMP/$e.err"
		grep -v '^#' "$BB_TMP/$e.tr" >"$BB_TMP/$e.rec" 2>/dev/null
	done
	n=$((n + 1))
	recs=$((recs + $(wc -l <"$BB_TMP/bbcap.rec")))
	if ! cmp -s "$BB_TMP/bbcap.err" "$BB_TMP/libnids.err"; then
		echo "FAIL ${f##*/}: exit status or messages differ:"
		diff "$BB_TMP/libnids.err" "$BB_TMP/bbcap.err" | head -10
		fail=1
	fi
	case ${f##*/} in
	thrift__ndpi__thrift.pcap)
		d=$(diff "$BB_TMP/libnids.rec" "$BB_TMP/bbcap.rec" | grep -c '^[<>]')
		sed 's/	len=[0-9]*//' "$BB_TMP/libnids.rec" >"$BB_TMP/a"
		sed 's/	len=[0-9]*//' "$BB_TMP/bbcap.rec" >"$BB_TMP/b"
		if [ "$d" != 2 ] || ! cmp -s "$BB_TMP/a" "$BB_TMP/b" ||
			! grep -q 'CALL.*c1\.8	proto=generic	.*len=7245$' "$BB_TMP/bbcap.rec"; then
			echo "FAIL ${f##*/}: not the one known difference:"
			diff "$BB_TMP/libnids.rec" "$BB_TMP/bbcap.rec" | head -10
			fail=1
		else
			echo "ok   ${f##*/}: equal but for the known len= of c1.8"
		fi
		continue ;;
	esac
	if ! cmp -s "$BB_TMP/bbcap.rec" "$BB_TMP/libnids.rec"; then
		echo "FAIL ${f##*/}: the two engines' records differ:"
		diff "$BB_TMP/libnids.rec" "$BB_TMP/bbcap.rec" | head -10
		fail=1
	fi
done
if [ "$n" -lt 50 ]; then
	echo "FAIL: only $n captures found"
	exit 1
fi
echo "$n captures, $recs records: both engines agree"
exit $fail

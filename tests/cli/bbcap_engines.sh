#!/bin/sh
# bbcap_engines.sh - bbcap's own TCP reassembly (the default) and libnids'
# (--reassembly=libnids) give the same trace records on every capture of the
# shared protocol corpus.
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
		"$BB_BIN/bbcap" -q --token-salt engines --reassembly=$e -r "$f" -w "$BB_TMP/$e.tr" 2>"$BB_TMP/$e.err"
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

#!/bin/sh
# bbcap_watermark.sh - records written at the watermark of open messages
# (the default) are the same bytes as records held the whole reorder window
# (--fixed-hold, the way bbcap wrote before): on the test fixtures, on every
# capture of the protocol corpus with both reassembly engines, and on every
# 4th capture of the robustness corpus (all of them with BB_WM_ALL=1, about
# 4 times longer). Where the two differ, the held output must have had late
# records: the same records, fewer or as many of them late. Skips the
# corpora when ../shared is absent.
set -u
corpus="$BB_SRC/../shared/corpus"
mkdir -p "$BB_TMP"
fail=0 n=0 same=0 recs=0
late() { sed -n 's/^#capture .* late=\([0-9]*\).*/\1/p' "$1"; }
check() { # check FILE ENGINE
	"$BB_BIN/bbcap" -q --reassembly="$2" -r "$1" -w "$BB_TMP/wm.tr" 2>"$BB_TMP/wm.err"
	echo "exit $?" >>"$BB_TMP/wm.err"
	"$BB_BIN/bbcap" -q --fixed-hold --reassembly="$2" -r "$1" -w "$BB_TMP/fh.tr" 2>"$BB_TMP/fh.err"
	echo "exit $?" >>"$BB_TMP/fh.err"
	n=$((n + 1))
	recs=$((recs + $(grep -avc '^#' "$BB_TMP/fh.tr")))
	if ! cmp -s "$BB_TMP/wm.err" "$BB_TMP/fh.err"; then
		echo "FAIL ${1##*/} ($2): exit status or messages differ"
		diff "$BB_TMP/fh.err" "$BB_TMP/wm.err" | head -5
		fail=1
		return
	fi
	if cmp -s "$BB_TMP/wm.tr" "$BB_TMP/fh.tr"; then
		same=$((same + 1))
		return
	fi
	lw=$(late "$BB_TMP/wm.tr") lf=$(late "$BB_TMP/fh.tr")
	grep -av '^#' "$BB_TMP/wm.tr" | sort >"$BB_TMP/wm.s"
	grep -av '^#' "$BB_TMP/fh.tr" | sort >"$BB_TMP/fh.s"
	if [ "${lf:-0}" -gt 0 ] && [ "${lw:-0}" -le "$lf" ] && cmp -s "$BB_TMP/wm.s" "$BB_TMP/fh.s"; then
		echo "ok   ${1##*/} ($2): differs in order only; late: held $lf, watermark $lw"
	else
		echo "FAIL ${1##*/} ($2): late: held ${lf:-?}, watermark ${lw:-?}"
		diff "$BB_TMP/fh.tr" "$BB_TMP/wm.tr" | cut -c1-160 | head -8
		fail=1
	fi
}
for f in "$BB_SRC"/tests/fixtures/bbcap/*.pcap; do
	check "$f" bbcap
done
if [ -d "$corpus/protocols" ]; then
	for f in "$corpus"/protocols/*.pcap "$corpus"/protocols/*.pcapng; do
		[ -f "$f" ] || continue
		check "$f" bbcap
		check "$f" libnids
	done
	i=0
	for f in "$corpus"/robustness/*; do
		[ -f "$f" ] || continue
		i=$((i + 1))
		[ "${BB_WM_ALL:-0}" = 1 ] || [ $((i % 4)) = 0 ] || continue
		check "$f" bbcap
	done
else
	echo "corpus not found at $corpus: fixtures only" >&2
fi
echo "$n runs, $recs records: $same byte-identical, the rest in order where the held output was late"
exit $fail

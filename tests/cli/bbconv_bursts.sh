#!/bin/sh
# bbconv_bursts.sh - bbconv on production-like bursty load (maketrace's web shop:
# open-loop Poisson page views, each a burst of 3-5 requests, worker pools; 3 s at
# 88 pages a second, seeds 1-3), scored against the trace's path= truth with
# bbconv_spurious.py: no delay on an edge absent from the truth may exceed the
# longest true delay of the trace, with and without the call ids (without them
# bbconv has no hold bound and only its null model stands between a burst
# coincidence and an edge), and the default root is the client on every seed,
# also when a few stray calls reach the client (a connection picked up
# mid-stream the wrong way round). The 5 s lag window is longer than the trace,
# as the default 60 s window is on a short capture. Needs /usr/bin/python3 (77).
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
[ -x /usr/bin/python3 ] || { echo "skipped: /usr/bin/python3 not installed" >&2; exit 77; }
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
fail=0
no() { echo "FAIL: $*"; fail=1; }
cfg=$BB_SRC/maketrace/configs/load/shop-r88.json
score() { /usr/bin/python3 "$BB_SRC/tests/cli/bbconv_spurious.py" "$@"; }
for seed in 1 2 3; do
	"$BB_BIN/maketrace" --seed $seed --duration 3 -o s$seed.tr "$cfg" 2>/dev/null ||
		{ no "maketrace seed $seed"; continue; }
	# the same trace without call ids ("-"): no CALL/RET pairs
	awk -F'\t' 'BEGIN { OFS = "\t" } /^#/ { print; next } { $5 = "-"; print }' s$seed.tr >s$seed.noid.tr
	# three stray calls into the client from the cache, with their returns
	awk -F'\t' 'BEGIN { OFS = "\t" } /^#/ { print; next }
		{ print }
		NR % 1000 == 0 && n < 3 { n++; t = $1 + 0.0000001
			printf "%.9f\tCALL\tcache\tclient\tstray%d\n%.9f\tRET\tclient\tcache\tstray%d\n",
				t, n, t + 0.0001, n }' s$seed.tr >s$seed.stray.tr
	for v in "" .noid .stray; do
		t=s$seed$v
		"$BB_BIN/bbconv" -Q 0.001 --max-delay 5 --json "$t.tr" >"$t.json" 2>"$t.err" ||
			{ no "bbconv $t"; cat "$t.err"; continue; }
		out=$(score "$t.tr" "$t.json") || { no "score $t"; continue; }
		echo "$t: $out"
		echo "$out" | grep -q "absent from the truth 0;" ||
			no "$t: a delay longer than any true one on an edge absent from the truth"
		echo "$out" | grep -q "roots client (call graph sources)\$" ||
			no "$t: the default root is not the client alone"
	done
done
exit $fail

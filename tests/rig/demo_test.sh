#!/bin/sh
# demo_test.sh - the checked-in rig captures (examples/rig/) through bbcap -r,
# bbnest and bbconv, scored against the ground truth logged with them: every
# request captured, the added 50 ms found by bbnest on pg in the (item, app2)
# pattern within 10% and on no other node, and by bbconv on app2 -> pg only.
# The top-5 figures are printed. Needs no root; /usr/bin/python3 (skips, 77).
set -u
[ -x /usr/bin/python3 ] || { echo "skipped: /usr/bin/python3 not installed" >&2; exit 77; }
ex=$BB_SRC/examples/rig
[ -f "$ex/delay.pcap" ] || { echo "skipped: $ex/delay.pcap absent" >&2; exit 77; }
mkdir -p "$BB_TMP"
T=$BB_TMP
score() { /usr/bin/python3 "$BB_SRC/tests/rig/score.py" "$@"; }
logs="$ex/app1.log $ex/app2.log $ex/auth.log"
fail=0
for run in normal delay; do
	"$BB_BIN/bbcap" -r "$ex/$run.pcap" --names "$ex/hosts" -w "$T/$run.tr" 2>"$T/$run.err" ||
		{ echo "FAIL: bbcap $run"; cat "$T/$run.err"; exit 1; }
	"$BB_BIN/bbnest" -q --json --no-bins "$T/$run.tr" >"$T/$run.json" || { echo "FAIL: bbnest"; exit 1; }
	"$BB_BIN/bbconv" -q 0.001 --max-delay 1 --json "$T/$run.tr" >"$T/$run.conv.json" || { echo "FAIL: bbconv"; exit 1; }
	out=$(score nest "$ex/$run.client.log" "$T/$run.json" $logs --label "$run: ")
	echo "$out"
	reqs=$(wc -l <"$ex/$run.client.log")
	echo "$out" | grep -q "^$run: $reqs true instances (0 requests failed), $reqs inferred" ||
		{ echo "FAIL: $run: not every request captured"; fail=1; }
done
score delay "$T/normal.json" "$T/delay.json" "$ex/delay.client.log" $logs \
	--type item --via app2 --node pg --ms 50 || fail=1
score conv "$T/normal.conv.json" "$T/delay.conv.json" --from app2 --to pg --ms 50 || fail=1
exit $fail

#!/bin/sh
# demo_test.sh - the checked-in rig captures (examples/rig/) through bbcap -r,
# bbnest and bbconv, scored against the ground truth logged with them: every
# request captured (its CALL into nginx in the trace), the added 50 ms found by bbnest on pg in the (item, app2)
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
# bbnest's defaults, as rig_test.sh enforces them (RIG_NEST_OPTS)
nest_opts=""
for run in normal delay; do
	"$BB_BIN/bbcap" -r "$ex/$run.pcap" --names "$ex/hosts" -w "$T/$run.tr" 2>"$T/$run.err" ||
		{ echo "FAIL: bbcap $run"; cat "$T/$run.err"; exit 1; }
	"$BB_BIN/bbnest" -q $nest_opts --json --no-bins "$T/$run.tr" >"$T/$run.json" || { echo "FAIL: bbnest"; exit 1; }
	"$BB_BIN/bbconv" -Q 0.001 --max-delay 1 --json "$T/$run.tr" >"$T/$run.conv.json" || { echo "FAIL: bbconv"; exit 1; }
	out=$(score nest "$ex/$run.client.log" "$T/$run.json" $logs --label "$run: ")
	echo "$out"
	# Every request the client made is in the trace: its CALL into nginx
	# (req= carries the request's id) and the RET.
	cut -f1 "$ex/$run.client.log" | sort -u >"$T/$run.want"
	awk -F'\t' '$2 == "CALL" && $3 == "client" && $4 == "nginx" && match($0, /id=[^\t]*/) {
		print substr($0, RSTART + 3, RLENGTH - 3) }' "$T/$run.tr" | sort -u >"$T/$run.have"
	missing=$(comm -23 "$T/$run.want" "$T/$run.have" | wc -l)
	reqs=$(wc -l <"$T/$run.want")
	[ "$missing" = 0 ] && [ "$reqs" -gt 0 ] ||
		{ echo "FAIL: $run: $missing of $reqs requests not in the trace"; fail=1; }
	echo "$out" | grep -q "^$run: $reqs true instances (0 requests failed)" ||
		{ echo "FAIL: $run: the truth does not hold $reqs requests"; fail=1; }
done
score delay "$T/normal.json" "$T/delay.json" "$ex/delay.client.log" $logs \
	--type item --via app2 --node pg --ms 50 || fail=1
score conv "$T/normal.conv.json" "$T/delay.conv.json" --from app2 --to pg --ms 50 || fail=1
exit $fail

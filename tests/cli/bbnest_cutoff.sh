#!/bin/sh
# bbnest_cutoff.sh - a real capture (tests/fixtures/rigcap: the rig's first app, 8 in
# flight at Poisson times) cut short at 30, 50, 60 and 80% of its length, as a capture
# stopped while requests are in flight: their calls and children are in the trace, their
# returns are not. bbnest used to ignore those calls and give their children to other
# requests open at the time: 5 to 12 patterns that do not exist and as many instances
# (0.6-1.6%) at these cuts. A call open at the end for less time than the longest call
# into its node took is in flight now: a candidate parent whose subtree makes no instance
# (orphaned_calls). Here: no pattern and no instance that does not exist, and the calls
# cut off orphaned (docs/accuracy.md, "Requests cut off by the end of the capture").
. "$BB_SRC/tests/cli/rigfix.sh"
command -v jq >/dev/null 2>&1 || { echo "SKIP: needs jq"; exit 77; }
rig_unpack rigcap poisson-8
t0=$(grep -v '^#' poisson-8.tr | head -n 1 | cut -f1)
t1=$(grep -v '^#' poisson-8.tr | tail -n 1 | cut -f1)
for cut in 0.3 0.5 0.6 0.8; do
	awk -F'\t' -v t0="$t0" -v t1="$t1" -v f="$cut" '/^#/ || $1 <= t0 + f * (t1 - t0)' \
		poisson-8.tr >cut.tr
	"$BB_BIN/bbnest" -q --json --no-bins cut.tr >cut.json || { no "bbnest failed at $cut"; continue; }
	python3 "$BB_SRC/tests/rig/score.py" nest poisson-8.client.log cut.json app1.log \
		app2.log auth.log >score.txt # non-zero: the truth's counts hold the requests cut off
	line=$(head -n 1 score.txt)
	st=$(jq -c '.stats | [.unmatched_calls, .orphaned_calls]' cut.json)
	echo "cut at $cut: $line; unmatched, orphaned calls: $st"
	case $line in
	*" 0 false positive, "*"instances: 0 false positive"*) ;;
	*) no "cut at $cut: patterns or instances that do not exist: $line" ;;
	esac
	case $st in
	"[0,"* | *",0]") no "cut at $cut: no request cut off, or none of its calls orphaned: $st" ;;
	esac
done
exit $fail

#!/bin/sh
# bbnest_startcut.sh - a real capture (tests/fixtures/rigcap2: the rig's second app, 64 in
# flight at Poisson times) with its first fifth cut off, as a capture begun while requests
# are in flight: their returns are in the trace, their calls are not. bbnest used to give
# the calls those requests made after the start to other requests, and the tokens' worth
# it learnt from this shorter trace scored a pg call sharing one token with its parent
# 1/1000: 75 instances (4.7%) in 14 patterns that do not exist. Now a return that came
# sooner after the start than the longest call into its node took is a call in flight at
# the start, a candidate parent dropped with what it holds (orphaned_calls), and the
# tokens' worth is learnt again from each round's parents. Here: at most 8 instances
# (0.5%) and 2 patterns that do not exist (docs/accuracy.md, "Requests in flight when
# the capture began").
. "$BB_SRC/tests/cli/rigfix.sh"
command -v jq >/dev/null 2>&1 || { echo "SKIP: needs jq"; exit 77; }
rig_unpack rigcap2 poisson-64 front.log search.log
rig_cut poisson-64.tr start 0.2 cut.tr
"$BB_BIN/bbnest" -q --json --no-bins cut.tr >cut.json || { echo "FAIL: bbnest failed"; exit 1; }
# non-zero: the truth's counts hold the requests before the cut
python3 "$BB_SRC/tests/rig/score.py" nest poisson-64.client.log cut.json front.log \
	search.log >score.txt
line=$(head -n 1 score.txt)
st=$(jq -c '.stats | [.unmatched_returns, .orphaned_calls]' cut.json)
echo "$line; unmatched returns, orphaned calls: $st"
fp_pat=$(echo "$line" | sed -n 's/.* \([0-9][0-9]*\) false positive, [0-9]* false negative; instances.*/\1/p')
fp_inst=$(echo "$line" | sed -n 's/.*instances: \([0-9][0-9]*\) false positive.*/\1/p')
[ -n "$fp_pat" ] && [ -n "$fp_inst" ] || no "cannot read the score: $line"
[ "${fp_pat:-99}" -le 2 ] || no "$fp_pat patterns that do not exist (at most 2)"
[ "${fp_inst:-999}" -le 8 ] || no "$fp_inst instances that do not exist (at most 8)"
case $st in
"[0,"*) no "no return without its call: the cut kept every request whole: $st" ;;
esac
exit $fail

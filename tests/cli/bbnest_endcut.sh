#!/bin/sh
# bbnest_endcut.sh - a real capture (tests/fixtures/rigcap2: the rig's second app, 64 in
# flight at Poisson times) stopped half way through its span, read with times alone
# (--no-content). Pass 1 counted the calls a node made by their returns but the calls
# into it only when they returned: the front-end calls still in flight at the end had
# made their redis calls, so the front end seemed to call redis more often than it was
# called, and "at most one redis call a request" (nest_once) was dropped. 60 instances
# that do not exist (and 69 stopped at 80%, 88% of the burst level's instances wrong at
# 90%); the calls in flight at the end are now counted too: here at most 20 (9 measured;
# docs/accuracy.md, "Calls in flight at the end are counted").
. "$BB_SRC/tests/cli/rigfix.sh"
command -v jq >/dev/null 2>&1 || { echo "SKIP: needs jq"; exit 77; }
rig_unpack rigcap2 poisson-64 front.log search.log
rig_cut poisson-64.tr end 0.5 cut.tr
"$BB_BIN/bbnest" -q --json --no-bins --no-content cut.tr >nc.json ||
	{ echo "FAIL: bbnest failed"; exit 1; }
# non-zero false negatives: the truth's counts hold the requests after the cut
python3 "$BB_SRC/tests/rig/score.py" nest poisson-64.client.log nc.json front.log \
	search.log >score.txt
line=$(head -n 1 score.txt)
echo "$line"
fp_inst=$(echo "$line" | sed -n 's/.*instances: \([0-9][0-9]*\) false positive.*/\1/p')
[ -n "$fp_inst" ] || no "cannot read the score: $line"
[ "${fp_inst:-9999}" -le 20 ] || no "$fp_inst instances that do not exist (at most 20; 60 before)"
exit $fail

#!/bin/sh
# bbnest_capacity.sh - a real capture (tests/fixtures/rigcap: the rig's first app, 8 in
# flight at Poisson times) whose app makes 2, 3 or 4 calls a request, 2.998 on average,
# with no request seen with all its calls sure. The average alone made 3 a hard capacity,
# and the flow passed each 4-call request's fourth call along a chain of 45 requests: 24
# of 800 instances wrong (3.0%, the item count -7.2%). Such a bound is soft now (only
# calls seen sure make it hard): none wrong. At most 1% allowed, the top-5 counts within
# 5% (docs/accuracy.md, "A whole average is no capacity").
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: needs python3"; exit 77; }
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
fail=0
no() { echo "FAIL: $*"; fail=1; }
for f in poisson-8.tr poisson-8.client.log app1.log app2.log auth.log; do
	gzip -dc "$BB_SRC/tests/fixtures/rigcap/$f.gz" >"$f" || exit 1
done
"$BB_BIN/bbnest" -q --json --no-bins poisson-8.tr >out.json || exit 1
line=$(python3 "$BB_SRC/tests/rig/score.py" nest poisson-8.client.log out.json app1.log \
	app2.log auth.log --brief --top 5 --tol 0.05 --max-wrong 0.01)
echo "$line"
case $line in *"| met") ;; *) no "wrong share or top-5 counts over the limits: $line" ;; esac
exit $fail

#!/bin/sh
# bbnest_bound.sh - bbnest --bound, the timing-only bound (docs/nesting.md): on a small
# production-like load (maketrace/configs/load, 2 s of it) its share of wrong instances
# is finite, at most the defaults' and below 50%, its JSON figures agree with each other
# and with the text; with one request at a time it gets every instance right; it needs
# --truth.
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
command -v jq >/dev/null 2>&1 || { echo "SKIP: needs jq"; exit 77; }
mt=$BB_BIN/maketrace
nest=$BB_BIN/bbnest
fail=0
no() { echo "FAIL: $*"; fail=1; }

"$mt" -q -d 2 "$BB_SRC/maketrace/configs/load/social-r390.json" >load.tr || no "maketrace failed"
"$nest" -q --truth --bound --json --no-bins load.tr >b.json 2>err || no "--bound failed: $(cat err)"
[ -s err ] && no "--bound wrote to stderr: $(cat err)"
"$nest" -q --truth --json --no-bins load.tr >d.json || no "--truth failed"
jq -e '.accuracy.bound.instances.true > 500' b.json >/dev/null ||
	no "bound: no instances: $(jq -c .accuracy.bound b.json)"
# the bound is scored against the same truth, and the defaults' own figures do not move
[ "$(jq '.accuracy.bound.instances.true' b.json)" = "$(jq '.accuracy.instances.true' b.json)" ] ||
	no "bound: true instances differ from the inference's"
[ "$(jq -c '.accuracy | del(.bound)' b.json)" = "$(jq -c '.accuracy' d.json)" ] ||
	no "--bound changed the inferred figures"
bfn=$(jq '.accuracy.bound.instances.fn' b.json)
dfn=$(jq '.accuracy.instances.fn' b.json)
tr=$(jq '.accuracy.instances.true' b.json)
[ "$bfn" -le "$dfn" ] || no "bound: $bfn wrong instances, more than the defaults' $dfn"
[ $((2 * bfn)) -lt "$tr" ] || no "bound: $bfn of $tr instances wrong"
jq -e --argjson fn "$bfn" --argjson t "$tr" \
	'.stats.bound.instances_fn == $fn and .stats.bound.instances_true == $t and
	 (.stats.bound.wrong_share - $fn / $t | fabs) < 1e-6' b.json >/dev/null ||
	no "stats.bound: $(jq -c .stats.bound b.json)"
# the text shows the same figure
"$nest" -q --truth --bound --text load.tr >b.txt || no "--bound --text failed"
grep -q "^  timing-only bound: $bfn of $tr instances wrong ([0-9.]*%)\$" b.txt ||
	no "text: $(grep bound b.txt)"

# one request at a time: the times leave nothing open, the bound is exact
cat >one.json <<'J'
{"seed": 2, "duration": 30, "nodes": ["c", "w", "d"],
 "defaults": {"delay": {"lognormal": [0.002, 0.001]}, "return": {"lognormal": [0.001, 0.0005]}},
 "tracelets": [{"name": "r", "node": "c", "think": [0.02, 0.05],
   "steps": [{"call": "w", "steps": [{"call": "d"}, {"call": "d"}]}]}]}
J
"$mt" -q one.json >one.tr || no "one: maketrace failed"
"$nest" -q --truth --bound --json --no-bins one.tr >one.out || no "one: --bound failed"
jq -e '.accuracy.bound.instances.fn == 0 and .accuracy.bound.instances.true > 100' one.out \
	>/dev/null || no "one: $(jq -c .accuracy.bound one.out)"

# --bound needs --truth; without room for the messages it is not used, and says so
"$nest" --bound one.tr >/dev/null 2>err
rc=$?
[ $rc -eq 2 ] || no "--bound without --truth exits $rc"
grep -q '^bbnest: error: --bound needs --truth' err || no "--bound without --truth: $(cat err)"
"$nest" --truth --bound --memory 0 --json one.tr >m.json 2>err || no "--memory 0 failed"
grep -q '^bbnest: warning: one.tr: --bound not used' err || no "--memory 0: $(cat err)"
jq -e '.accuracy.bound == null' m.json >/dev/null || no "--memory 0: a bound was printed"
# without path= attributes there is no truth to learn from
sed 's/	path=[^	]*//' one.tr >nopath.tr
"$nest" --truth --bound --json nopath.tr >np.json 2>err || no "no path=: failed"
grep -q '^bbnest: warning: nopath.tr: --bound not used: no call has its true parent' err ||
	no "no path=: $(cat err)"
jq -e '.accuracy.bound == null' np.json >/dev/null || no "no path=: a bound was printed"
exit $fail

#!/bin/sh
# maketrace_errors.sh - bad configs exit 2 with "maketrace: error: FILE:LINE:COL: what";
# a missing file exits 1.
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
mt=$BB_BIN/maketrace
fail=0
no() { echo "FAIL: $*"; fail=1; }

# expect FILE MESSAGE: maketrace FILE exits 2 and prints exactly MESSAGE
expect() {
	"$mt" "$1" >out 2>err
	rc=$?
	[ $rc -eq 2 ] || no "$1: exit $rc, not 2"
	[ -s out ] && no "$1: wrote to standard output"
	[ "$(cat err)" = "maketrace: error: $2" ] || no "$1: got '$(cat err)', want 'maketrace: error: $2'"
}

printf '{"nodes": ["a",\n  "b"], "duration": 1,\n "tracelets": [ {"name": "x" "node": "a"} ]}\n' >syntax.json
expect syntax.json "syntax.json:3:35: '}' expected near '\"node\"'"

printf '{"nodes": ["a", "b"],\n "duration": "10", "tracelets": []}\n' >type.json
expect type.json 'type.json:2:14: duration: expected a number'

cat >node.json <<'J'
{"nodes": ["a", "b"], "duration": 1,
 "tracelets": [{"name": "x", "node": "a", "steps": [
   {"call": "c", "delay": [0.1, 0.01], "return": [0.01, 0]}]}]}
J
expect node.json 'node.json:3:13: tracelets[0].steps[0].call: unknown node "c" (not in "nodes")'

cat >weight.json <<'J'
{"nodes": ["a", "b"], "duration": 1,
 "tracelets": [{"name": "x", "node": "a", "steps": [{"choose": [
   {"weight": -2, "msg": "b", "delay": [1, 0]},
   {"weight": 1, "msg": "b", "delay": [1, 0]}]}]}]}
J
expect weight.json 'weight.json:3:15: tracelets[0].steps[0].choose[0].weight: must not be negative'

cat >delay.json <<'J'
{"nodes": ["a", "b"], "duration": 1,
 "tracelets": [{"name": "x", "node": "a", "steps": [
   {"call": "b", "delay": 0.1, "return": [0.01, 0]}]}]}
J
expect delay.json 'delay.json:3:27: tracelets[0].steps[0].delay: expected [mean, sd], [[weight, mean, sd], ...], {"lognormal": [mean, sd]} or {"exp": mean} in seconds'

cat >neg.json <<'J'
{"nodes": ["a", "b"], "duration": 1,
 "tracelets": [{"name": "x", "node": "a", "think": [1, 2], "steps": [
   {"msg": "b", "delay": [-0.5, 0.1]}]}]}
J
expect neg.json 'neg.json:3:27: tracelets[0].steps[0].delay[0]: must not be negative'

printf '{"nodes": ["a"], "tracelets": [{"name": "x", "steps": [{"msg": ["a", "a"], "delay": [1, 0]}]}]}\n' >end.json
expect end.json 'end.json:1:1: missing "duration" or "messages": the trace needs an end'

"$mt" no-such.json >/dev/null 2>err
rc=$?
[ $rc -eq 1 ] || no "missing config exits $rc, not 1"
grep -q '^maketrace: error: no-such.json: No such file or directory$' err || no "missing config: $(cat err)"

# an override that names a node the config lacks is a usage-level error
"$mt" --skew nosuch=1 "$BB_SRC/maketrace/configs/children-parallel.json" >/dev/null 2>err
[ $? -eq 2 ] || no "--skew with an unknown node does not exit 2"
grep -q 'unknown node "nosuch"' err || no "--skew unknown node: $(cat err)"

[ $fail -eq 0 ] && echo ok
exit $fail

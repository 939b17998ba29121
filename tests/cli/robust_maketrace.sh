#!/bin/sh
# robust_maketrace.sh - config errors not covered by maketrace_errors.sh, each
# "maketrace: error: FILE:LINE:COL: what" and exit 2 with nothing on standard
# output: unknown key, empty tracelets, weights summing to 0, a weight of the
# wrong type, a negative return delay, an empty file. And a full disk:
# -o /dev/full and standard output on /dev/full exit 1 with a write error.
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
: "${ASAN_OPTIONS:=detect_leaks=1:abort_on_error=1}"
: "${UBSAN_OPTIONS:=print_stacktrace=1:halt_on_error=1}"
export ASAN_OPTIONS UBSAN_OPTIONS
mt=$BB_BIN/maketrace
fail=0
no() { echo "FAIL: $*"; fail=1; }
expect() { # FILE MESSAGE
	timeout 60 "$mt" "$1" >out 2>err
	rc=$?
	[ $rc -eq 2 ] || no "$1: exit $rc, want 2"
	[ -s out ] && no "$1: wrote to standard output"
	[ "$(cat err)" = "maketrace: error: $2" ] || no "$1: got '$(cat err)', want 'maketrace: error: $2'"
}

printf '{"nodes": ["a", "b"], "duration": 1,\n "colour": 3,\n "tracelets": [{"name": "x", "node": "a", "steps": [{"msg": "b", "delay": [1, 0]}]}]}\n' >key.json
expect key.json 'key.json:2:12: colour: unknown key "colour"'

printf '{"nodes": ["a", "b"], "duration": 1,\n "tracelets": []}\n' >empty-tracelets.json
expect empty-tracelets.json 'empty-tracelets.json:2:15: tracelets: expected a non-empty array of tracelets'

printf '{"nodes": ["a", "b"], "duration": 1,\n "tracelets": [{"name": "x", "node": "a", "steps": [{"choose": [\n {"weight": 0, "msg": "b", "delay": [1, 0]}]}]}]}\n' >w0.json
expect w0.json 'w0.json:2:64: tracelets[0].steps[0].choose: weights sum to 0'

printf '{"nodes": ["a", "b"], "duration": 1,\n "tracelets": [{"name": "x", "node": "a", "steps": [{"choose": [\n {"weight": "heavy", "msg": "b", "delay": [1, 0]}]}]}]}\n' >wtype.json
expect wtype.json 'wtype.json:3:13: tracelets[0].steps[0].choose[0].weight: expected a number'

printf '{"nodes": ["a", "b"], "duration": 1,\n "tracelets": [{"name": "x", "node": "a", "steps": [\n  {"call": "b", "delay": [0.1, 0.01], "return": [-1, 0]}]}]}\n' >negret.json
expect negret.json 'negret.json:3:50: tracelets[0].steps[0].return[0]: must not be negative'

: >zero.json
expect zero.json "zero.json:1:0: '[' or '{' expected near end of file"

cfg=$BB_SRC/maketrace/configs/children-parallel.json
timeout 60 "$mt" -N 2000 -o /dev/full "$cfg" 2>err
rc=$?
[ $rc -eq 1 ] || no "-o /dev/full: exit $rc, want 1"
want='maketrace: error: /dev/full: write error: No space left on device'
[ "$(cat err)" = "$want" ] || no "-o /dev/full: got '$(cat err)', want '$want'"
timeout 60 "$mt" -N 2000 "$cfg" >/dev/full 2>err
rc=$?
[ $rc -eq 1 ] || no "stdout on /dev/full: exit $rc, want 1"
want='maketrace: error: <stdout>: write error: No space left on device'
[ "$(cat err)" = "$want" ] || no "stdout on /dev/full: got '$(cat err)', want '$want'"

[ $fail -eq 0 ] && echo ok
exit $fail

#!/bin/sh
# robust_readers.sh - bbnest, bbconv and bbskew on hostile traces: empty, only
# unmatched calls, a record older than the reorder window (error naming the
# line, exit 2), 10 KB ids, output on /dev/full (exit 1), and node names and
# req= values holding control bytes and dot/JSON/HTML syntax: the dot is ONE
# graph that dot -Tsvg parses, the JSON parses, the text holds no raw control
# byte; timestamps at the ends of int64 (bbconv: exit 2 naming the line) and
# bbconv durations too large (exit 2). No sanitizer report anywhere.
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
: "${ASAN_OPTIONS:=detect_leaks=1:abort_on_error=1}"
: "${UBSAN_OPTIONS:=print_stacktrace=1:halt_on_error=1}"
export ASAN_OPTIONS UBSAN_OPTIONS
fail=0
no() { echo "FAIL: $*"; fail=1; }
PY=/usr/bin/python3
[ -x $PY ] || PY=$(command -v python3) || PY=
DOT=$(command -v dot) || DOT=
# run NAME WANT_RC PROG ARGS...: stdout in NAME.out, stderr in NAME.err
run() {
	n=$1 want=$2
	shift 2
	timeout 120 "$BB_BIN/$@" >"$n.out" 2>"$n.err"
	rc=$?
	[ $rc -eq "$want" ] || no "$n: $*: exit $rc, want $want; stderr: $(head -5 "$n.err")"
	if grep -q -e Sanitizer -e 'runtime error' "$n.err"; then
		no "$n: sanitizer report:"; head -20 "$n.err"
	fi
}
checkdot() { # NAME: NAME.out is one graph dot parses
	[ -n "$DOT" ] || return 0
	"$DOT" -Tsvg "$1.out" >"$1.svg" 2>"$1.doterr" || no "$1: dot -Tsvg failed: $(cat "$1.doterr")"
	g=$(grep -c '<svg' "$1.svg")
	[ "$g" = 1 ] || no "$1: dot made $g graphs, want 1"
}
checkjson() {
	[ -n "$PY" ] || return 0
	$PY -c 'import json,sys; json.load(sys.stdin)' <"$1.out" 2>"$1.pyerr" ||
		no "$1: JSON does not parse: $(tail -1 "$1.pyerr")"
}
checktext() { # no byte 0x00-0x08, 0x0b-0x1f, 0x7f
	if LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$1.out" ||
		[ "$(tr -d '\000' <"$1.out" | wc -c)" != "$(wc -c <"$1.out")" ]; then
		no "$1: raw control bytes in the text:"; od -c "$1.out" | head
	fi
}

# empty trace: exit 0, an empty (but valid) graph
: >empty.tr
for p in bbnest bbconv; do
	run empty-$p-dot 0 $p empty.tr && checkdot empty-$p-dot
	run empty-$p-json 0 $p --json empty.tr && checkjson empty-$p-json
	run empty-$p-text 0 $p --text empty.tr
done
run empty-bbskew 0 bbskew empty.tr
[ "$(cat empty-bbskew.out)" = '#bbtrace 1' ] || no "empty-bbskew: output '$(cat empty-bbskew.out)'"

# only unmatched calls: exit 0, and the count says why nothing was found
printf '#bbtrace 1\n1.0\tCALL\tA\tB\tid1\n2.0\tCALL\tA\tB\tid2\n3.0\tCALL\tB\tC\tid3\n' >unmatched.tr
run unm-bbnest 0 bbnest --text unmatched.tr
grep -q '3 unmatched calls' unm-bbnest.out || no "unm-bbnest: no '3 unmatched calls' in: $(cat unm-bbnest.out)"
run unm-bbnest-json 0 bbnest --json unmatched.tr && checkjson unm-bbnest-json
grep -q '"unmatched_calls":3' unm-bbnest-json.out || no "unm-bbnest-json: no \"unmatched_calls\":3"
run unm-bbconv 0 bbconv unmatched.tr && checkdot unm-bbconv
run unm-bbskew 0 bbskew unmatched.tr
[ "$(grep -c CALL unm-bbskew.out)" = 3 ] || no "unm-bbskew: lost calls: $(cat unm-bbskew.out)"

# a record older than the reorder window (4096 lines): exit 2 naming line 10002
awk 'BEGIN { print "#bbtrace 1"
	for (i = 1; i <= 5000; i++)
		printf "%d.000000000\tCALL\tA\tB\tc%d\n%d.000500000\tRET\tB\tA\tc%d\n", 100 + i, i, 100 + i, i
	printf "50.000000000\tCALL\tA\tB\tlate\n" }' >late.tr
for p in bbnest bbconv bbskew; do
	run late-$p 2 $p late.tr
	want="$p: error: late.tr:10002: timestamp 50.000000000 is earlier than 3052.000500000 already read (reorder window 4096 lines)"
	[ "$(cat late-$p.err)" = "$want" ] || no "late-$p: stderr '$(cat late-$p.err)', want '$want'"
done

# 10 KB ids (and a 10 KB req=): read, paired, written back whole by bbskew
awk 'BEGIN { id = ""; for (i = 0; i < 1024; i++) id = id "0123456789"; print "#bbtrace 1"
	for (k = 0; k < 30; k++)
		printf "%d.0\tCALL\tA\tB\t%s%d\treq=%s\n%d.001\tCALL\tB\tC\t%s%d\n%d.002\tRET\tC\tB\t%s%d\n%d.003\tRET\tB\tA\t%s%d\n",
			10 + k, id, k, id, 10 + k, id, k, 10 + k, id, k, 10 + k, id, k }' >longid.tr
run longid-bbnest 0 bbnest --text longid.tr
grep -q '60 call pairs' longid-bbnest.out || no "longid-bbnest: want 60 call pairs: $(tail -1 longid-bbnest.out)"
run longid-bbconv 0 bbconv --json longid.tr && checkjson longid-bbconv
run longid-bbskew 0 bbskew longid.tr
cmp -s longid.tr longid-bbskew.out || [ "$(grep -c . longid-bbskew.out)" = 121 ] ||
	no "longid-bbskew: $(grep -c . longid-bbskew.out) lines, want 121"

# injection: control bytes, quotes, braces, arrows, newlines, <script> in
# node names and req= values (percent-encoded in the trace)
S='cli"ent'
M='a}b->c%0A%3Cscript%3E%22%3B%7D'
D='d%01%7F%1Be%5C'
R1='req=%22%7D%3B%20x%20-%3E%20y%0A%3Cscript%3Ealert(1)%3C/script%3E%01%1B[31m'
R2='req=%5C%22%5D%3B%0Adigraph%20evil%20%7B'
awk -v S="$S" -v M="$M" -v D="$D" -v R1="$R1" -v R2="$R2" 'BEGIN { print "#bbtrace 1"
	for (k = 0; k < 40; k++) {
		t = 2 + k
		printf "%d.000000000\tCALL\t%s\t%s\tx%d\t%s\n", t, S, M, k, R1
		printf "%d.000100000\tCALL\t%s\t%s\ty%d\t%s\n", t, M, D, k, R2
		printf "%d.000200000\tRET\t%s\t%s\ty%d\t%s\n", t, D, M, k, R2
		printf "%d.000300000\tRET\t%s\t%s\tx%d\t%s\n", t, M, S, k, R1
	} }' >inject.tr
for p in bbnest bbconv; do
	run inj-$p-dot 0 $p inject.tr && checkdot inj-$p-dot && checktext inj-$p-dot
	grep -q '<script' inj-$p-dot.svg 2>/dev/null && no "inj-$p-dot: raw <script> in the SVG"
	run inj-$p-json 0 $p --json inject.tr && checkjson inj-$p-json
	run inj-$p-text 0 $p --text inject.tr && checktext inj-$p-text
	grep -q 'script' inj-$p-text.out || no "inj-$p-text: the node names are missing: $(cat inj-$p-text.out)"
done
[ -n "$PY" ] && $PY - inj-bbnest-json.out <<'PYEOF' || no "inj-bbnest-json: node names do not round-trip"
import json, sys
s = json.dumps(json.load(open(sys.argv[1])))
for want in ('cli\\"ent', 'a}b->c\\n<script>\\";}', 'd\\u0001\\u007f\\u001be\\\\'):
    if want not in s:
        print("missing", want); sys.exit(1)
PYEOF
# bbskew writes canonical percent-encoding: same records, and a second pass
# gives the same bytes
run inj-bbskew 0 bbskew inject.tr
run inj-bbskew2 0 bbskew inj-bbskew.out
[ "$(grep -c . inj-bbskew.out)" = 161 ] || no "inj-bbskew: $(grep -c . inj-bbskew.out) lines, want 161"
cmp -s inj-bbskew.out inj-bbskew2.out || no "inj-bbskew: not canonical: $(diff inj-bbskew.out inj-bbskew2.out | head -4)"
checktext inj-bbskew

# extreme timestamps (the trace format allows -9223372036.854775808 to
# 9223372036.854775807 s): bbnest and bbskew take them; bbconv, whose
# quanta are differences of timestamps, refuses one outside +-2^62 ns with
# an error naming the line (it used to overflow int64: UBSan)
printf '#bbtrace 1\n-1.000000001\tCALL\ta\tb\tx\n0.5\tCALL\tb\tc\ty\n9223372036.854775807\tRET\tb\ta\tx\n' >wide.tr
run wide-bbnest 0 bbnest --text wide.tr
# (bbnest overflowed computing the latency, and with a skew window it also
# never freed a call that returns at the largest time: both fixed)
run wide-bbnest-skew 0 bbnest --skew-window 0.001 --json wide.tr
run wide-bbnest-oracle 0 bbnest --oracle --text wide.tr
run wide-bbskew 0 bbskew wide.tr
run wide-bbconv 2 bbconv wide.tr
want='bbconv: error: wide.tr:4: timestamp 9223372036.854775807 is outside the range of the convolution (+-2^62 ns around 1970: years 1824 to 2116)'
[ "$(cat wide-bbconv.err)" = "$want" ] || no "wide-bbconv: stderr '$(cat wide-bbconv.err)', want '$want'"
# bbconv's durations: a skew window of 10^8 lags (it took 35 s and 6 GB for a
# 2-message trace) and durations that would overflow are usage errors
run bigskew-bbconv 2 bbconv --skew 100000 -Q 1ms --max-delay 1 unmatched.tr
grep -q '^bbconv: error: the skew window (skew / quantum) exceeds 2^22 quanta: lower --skew or raise the quantum$' bigskew-bbconv.err ||
	no "bigskew-bbconv: stderr '$(cat bigskew-bbconv.err)'"
run bigtol-bbconv 2 bbconv --tolerance 9000000000 unmatched.tr
grep -q '^bbconv: error: the quantum, tolerance, maximum delay and skew must each be at most 2^50 ns (13 days)$' bigtol-bbconv.err ||
	no "bigtol-bbconv: stderr '$(cat bigtol-bbconv.err)'"

# full disk: -o /dev/full and standard output on /dev/full
for p in bbnest bbconv bbskew; do
	run full-$p 1 $p -o /dev/full unmatched.tr
	timeout 120 "$BB_BIN/$p" unmatched.tr >/dev/full 2>full2-$p.err
	rc=$?
	[ $rc -eq 1 ] || no "stdout-full-$p: exit $rc, want 1"
	want="$p: error: <stdout>: write error: No space left on device"
	[ "$(cat full2-$p.err)" = "$want" ] || no "stdout-full-$p: '$(cat full2-$p.err)', want '$want'"
done

[ $fail -eq 0 ] && echo ok
exit $fail

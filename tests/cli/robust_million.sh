#!/bin/sh
# robust_million.sh - 1,000,000 records with 1,000,001 distinct nodes (awk):
# bbnest, bbconv and bbskew finish within a timeout of 300 s each (under
# ASan/UBSan in the sanitizer build) with exit 0 and no sanitizer report.
# bbconv used to scan every node for every root (quadratic: > 600 s), and
# ignored --max-vertices for roots (1,000,000 vertices, silently).
# Peak memory is printed when /usr/bin/time exists (figures, not asserted).
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
: "${ASAN_OPTIONS:=detect_leaks=1:abort_on_error=1}"
: "${UBSAN_OPTIONS:=print_stacktrace=1:halt_on_error=1}"
export ASAN_OPTIONS UBSAN_OPTIONS
fail=0
no() { echo "FAIL: $*"; fail=1; }
N=${BB_MILLION_N:-1000000}
awk -v n="$N" 'BEGIN { print "#bbtrace 1"
	for (i = 0; i < n; i++)
		printf "%d.%09d\tCALL\tn%d\tsrv\tc%d\n", 1000 + int(i / 1000), (i % 1000) * 1000, i, i }' >mil.tr
TIME=
[ -x /usr/bin/time ] && TIME="/usr/bin/time -f %e_s_%M_KB -o time.txt"
for p in "bbnest --json" "bbconv --json" "bbskew"; do
	name=${p%% *}
	: >time.txt
	timeout 300 $TIME "$BB_BIN"/$p mil.tr >"$name.out" 2>"$name.err"
	rc=$?
	[ $rc -eq 0 ] || no "$name: exit $rc, want 0 (124: did not finish in 300 s); stderr: $(head -5 "$name.err")"
	if grep -q -e Sanitizer -e 'runtime error' "$name.err"; then
		no "$name: sanitizer report:"; head -20 "$name.err"
	fi
	echo "$name: $N records, exit $rc, $(cat time.txt)"
done
grep -q "\"unmatched_calls\":$N" bbnest.out || no "bbnest: want \"unmatched_calls\":$N in the JSON stats"
grep -q "\"nodes\":$((N + 1))" bbconv.out || no "bbconv: want \"nodes\":$((N + 1)) in the JSON stats"
# every sender is a root: the graph stops at --max-vertices (100000) and says so
if [ "$N" -gt 100000 ]; then
	grep -q '"vertices":100000' bbconv.out || no "bbconv: want \"vertices\":100000 (--max-vertices) in the JSON stats"
	grep -q '"truncated":1' bbconv.out || no "bbconv: want \"truncated\":1 in the JSON stats"
	want='bbconv: warning: graph cut at 100000 vertices (--max-vertices)'
	[ "$(cat bbconv.err)" = "$want" ] || no "bbconv: stderr '$(cat bbconv.err)', want '$want'"
fi
[ "$(grep -c CALL bbskew.out)" = "$N" ] || no "bbskew: $(grep -c CALL bbskew.out) records, want $N"
[ $fail -eq 0 ] && echo ok
exit $fail

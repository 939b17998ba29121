#!/bin/sh
# bbnest_assumed.sh - --global bounds the children of every call into a node by k when
# the calls made exactly k each on average, even with no call seen with all its
# children sure: an assumption the counts fit and no call shows, which a mix of kinds
# can also fit by chance (docs/accuracy.md, "A whole average is no capacity"). bbnest
# names each such node: stats.assumed_capacities in the JSON, a note on standard error
# (none with -q). Checked on a generated trace whose WS2 makes exactly 2 calls each
# (named, with its counts), and on a real capture whose app averages 2.998 (tests/
# fixtures/rigcap: nothing assumed, nothing noted).
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
command -v jq >/dev/null 2>&1 || { echo "SKIP: needs jq"; exit 77; }
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
fail=0
no() { echo "FAIL: $*"; fail=1; }

# every call into WS2 makes exactly 2 calls (AUTH, then AP1 or AP2)
jq '.duration = 20' "$BB_SRC/maketrace/configs/table1-delay.json" >d.json || exit 1
"$BB_BIN/maketrace" -q d.json >d.tr || exit 1
"$BB_BIN/bbnest" --json --no-bins d.tr >d.out 2>d.err || exit 1
into=$(awk '$2 == "CALL" && $4 == "WS2" { n++ } END { print n + 0 }' d.tr)
made=$(awk '$2 == "CALL" && $3 == "WS2" { n++ } END { print n + 0 }' d.tr)
got=$(jq -r '[.stats.assumed_capacities[] | select(.node == "WS2")][0] |
	"\(.children) \(.calls) \(.calls_sure)"' d.out)
echo "WS2: $into calls made $made; assumed: $got"
set -- $got
[ "$made" -eq $((2 * into)) ] || no "the trace's WS2 calls do not make exactly 2 each"
[ "${1:-}" = 2 ] || no "WS2 not named with 2 children: $got"
[ "${2:-}" = "$into" ] || no "WS2's calls: $got, the trace has $into"
[ "${3:-20}" -lt 20 ] || no "WS2 named with 20 or more calls seen sure: $got"
grep -q "note: d.tr: assumed that every call into WS2 makes 2 calls (its $into calls made $made," \
	d.err || no "no note naming WS2 on standard error: $(cat d.err)"
"$BB_BIN/bbnest" -q --json --no-bins d.tr >dq.out 2>dq.err || exit 1
[ -s dq.err ] && no "-q printed: $(cat dq.err)"
cmp -s d.out dq.out || no "-q changed the JSON"

# a real capture averaging 2.998 children a call: no whole average, nothing assumed
gzip -dc "$BB_SRC/tests/fixtures/rigcap/poisson-8.tr.gz" >r.tr || exit 1
"$BB_BIN/bbnest" --json --no-bins r.tr >r.out 2>r.err || exit 1
n=$(jq '.stats.assumed_capacities | length' r.out)
echo "rigcap: $n assumed"
[ "$n" = 0 ] || no "rigcap: $n capacities assumed: $(jq -c .stats.assumed_capacities r.out)"
grep -q "note:" r.err && no "rigcap: a note: $(cat r.err)"
exit $fail

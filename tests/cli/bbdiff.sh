#!/bin/sh
# bbdiff.sh - bbdiff finds what the rig's and maketrace's slow runs added and nothing else:
# the rig's normal/+50 ms captures rank app2 -> pg first at +50 ms +-10% and flag nothing
# more; multitier vs multitier-delay ranks WS2 -> AP1/AP2 first at +200 ms +-10%; two normal
# runs with different seeds flag nothing. bbnest JSON gives what the traces give; JSON
# without bins, usage errors and the dot output.
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
diff=$BB_BIN/bbdiff
command -v jq >/dev/null 2>&1 || { echo "SKIP: needs jq"; exit 77; }
fail=0
no() { echo "FAIL: $*"; fail=1; }
# within PCT percent of WANT (numbers in ms)
near() { awk -v x="$1" -v w="$2" -v p="$3" 'BEGIN { d = x - w; if (d < 0) d = -d; exit !(d <= w * p / 100) }'; }

# the rig: the rig's bbnest options (docs/tutorial.md)
opts="--penalty 0,2,2 --smooth 2"
for run in normal delay; do
	"$BB_BIN/bbcap" -q -r "$BB_SRC/examples/rig/$run.pcap" --names "$BB_SRC/examples/rig/hosts" \
		-w $run.tr 2>/dev/null || no "bbcap $run failed"
done
# shellcheck disable=SC2086
"$diff" $opts normal.tr delay.tr >rig.txt 2>err; rc=$?
[ $rc -eq 3 ] || no "rig: exit $rc, not 3 (changes found): $(cat err)"
head -n 1 rig.txt | grep -q '^app2 -> pg +[0-9.]* ms (p < 1e-6), nothing else changed$' ||
	no "rig: verdict: $(head -n 1 rig.txt)"
# shellcheck disable=SC2086
"$diff" $opts --json normal.tr delay.tr >rig.json 2>err
n=$(jq '.changes | length' rig.json)
first=$(jq -r '.changes[0] | "\(.kind) \(.from) \(.to) \(.delta_ms)"' rig.json)
echo "rig: $n change(s), first: $first"
[ "$n" = 1 ] || no "rig: $n changes flagged: $(jq -c '.changes' rig.json)"
set -- $first
[ "$1 $2 $3" = "edge app2 pg" ] && near "$4" 50 10 || no "rig: first change $first"
jq -e '.changes[0].p < 1e-6 and (.changes[0].patterns | length) >= 1' rig.json >/dev/null ||
	no "rig: p or patterns missing"
# the same from bbnest's JSON
for run in normal delay; do
	# shellcheck disable=SC2086
	"$BB_BIN/bbnest" -q $opts --json -o $run.json $run.tr || no "bbnest --json $run"
done
"$diff" --json normal.json delay.json >rigj.json 2>err || [ $? -eq 3 ] || no "JSON inputs: $(cat err)"
[ "$(jq -c '.changes' rigj.json)" = "$(jq -c '.changes' rig.json)" ] ||
	no "JSON inputs give other changes than the traces"
"$BB_BIN/bbnest" -q $opts --json --no-bins -o nobins.json normal.tr
"$diff" nobins.json delay.json >/dev/null 2>err; rc=$?
[ $rc -eq 1 ] && grep -q '^bbdiff: error: .*--no-bins' err || no "no bins: exit $rc, $(cat err)"
# dot: the changed edge in red, one valid graph
# shellcheck disable=SC2086
"$diff" $opts --dot normal.tr delay.tr >rig.dot 2>err
grep -q 'app2 -> pg.*color=red' rig.dot || no "dot: app2 -> pg not red"
if command -v dot >/dev/null 2>&1; then
	dot -Tsvg rig.dot >rig.svg 2>err || no "dot -Tsvg failed: $(cat err)"
fi

# maketrace: 200 ms more at WS2 before its call to AP1 or AP2
mt=$BB_SRC/maketrace/configs
"$BB_BIN/maketrace" -q -o mt.tr "$mt/multitier.json" || no "maketrace"
"$BB_BIN/maketrace" -q -o mtd.tr "$mt/multitier-delay.json" || no "maketrace delay"
"$BB_BIN/maketrace" -q -S 7 -o mt7.tr "$mt/multitier.json" || no "maketrace -S 7"
"$diff" --json mt.tr mtd.tr >mt.json 2>err
first=$(jq -r '.changes[0] | "\(.kind) \(.from) \(.to) \(.delta_ms)"' mt.json)
echo "multitier: $(jq '.changes | length' mt.json) change(s), first: $first"
set -- $first
case "$1 $2 $3" in "edge WS2 AP1" | "edge WS2 AP2") ;; *) no "multitier: first change $first" ;; esac
near "$4" 200 10 || no "multitier: first change $4 ms, not 200 +-10%"
jq -e '[.changes[] | select(.kind != "edge" or .from != "WS2" or (.to | test("^AP[12]$") | not))]
	| length == 0' mt.json >/dev/null || no "multitier: other changes flagged: $(jq -c .changes mt.json)"
# two normal runs, different seeds
"$diff" mt.tr mt7.tr >same.txt 2>err; rc=$?
[ $rc -eq 0 ] && [ "$(head -n 1 same.txt)" = "nothing changed" ] ||
	no "two normal runs: exit $rc, $(head -n 3 same.txt)"
"$diff" --json mt.tr mt7.tr | jq -e '.changes == []' >/dev/null || no "two normal runs: changes in JSON"

# usage
"$diff" mt.tr >/dev/null 2>err; [ $? -eq 2 ] || no "one run: not exit 2"
"$diff" --alpha 2 mt.tr mt7.tr >/dev/null 2>err; [ $? -eq 2 ] || no "--alpha 2: not exit 2"
[ "$(cat err)" = "bbdiff: error: --alpha: expected a number in (0, 1), not '2'
Try 'bbdiff --help' for more information." ] || no "--alpha 2: $(cat err)"
"$diff" --nosuch mt.tr mt7.tr >/dev/null 2>err; [ $? -eq 2 ] || no "--nosuch: not exit 2"
[ "$(cat err)" = "bbdiff: error: unknown option \"--nosuch\"
Try 'bbdiff --help' for more information." ] || no "--nosuch: $(cat err)"
"$diff" no-such.tr mt.tr >/dev/null 2>err; rc=$?
[ $rc -eq 1 ] && grep -q '^bbdiff: error: no-such.tr: ' err || no "missing file: $rc $(cat err)"
"$diff" --help | grep -q '^usage: bbdiff' || no "--help"
exit $fail

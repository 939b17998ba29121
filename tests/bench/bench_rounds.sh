#!/bin/sh
# bench_rounds.sh - what bbnest's --global rounds buy and cost: for Table 1's short, par-low
# and par-medium traces, figure 17's (multitier-par42) and five generated loads at and
# beyond 1.6 open calls a node, with --rounds 1, 2, 3, 6 and the default (10, or fewer when
# a round settles): the rounds run, the share of path instances wrong (instance false
# negatives / true instances, bbnest --truth), the most top-N patterns missed at 2% for
# N <= 30 (figure 17's measure), and the CPU seconds (user + system, bbnest --stats; the
# least of RUNS runs without --truth, as bench_nesting measures Table 1). Prints a
# markdown table (docs/performance.md, "What the rounds buy"); asserts nothing.
# usage: sh tests/bench/bench_rounds.sh BUILD_DIR [CONFIG...]   (needs jq)
#   CONFIG: maketrace configs (default: the eight above)
#   ROUNDS: the --rounds values (default "1 2 3 6 10"); RUNS: timed runs each (default 3)
#   Scratch files go to ${BB_TMP:-/tmp}/bbnest-rounds.
set -eu
[ $# -ge 1 ] || { echo "usage: sh $0 BUILD_DIR [CONFIG...]" >&2; exit 2; }
bin=$1/bin
shift
src=$(cd "$(dirname "$0")/../.." && pwd)
cfg=$src/maketrace/configs
tmp=${BB_TMP:-/tmp}/bbnest-rounds
mkdir -p "$tmp"
command -v jq >/dev/null 2>&1 || { echo "$0: error: needs jq" >&2; exit 1; }
rounds=${ROUNDS:-1 2 3 6 10}
runs=${RUNS:-3}
[ $# -gt 0 ] || set -- "$cfg/table1-short.json" "$cfg/table1-par-low.json" \
	"$cfg/table1-par-medium.json" "$cfg/multitier-par42.json" \
	"$cfg/load/social-r195.json" "$cfg/load/social-r390.json" \
	"$cfg/load/social-r520.json" "$cfg/load/shop-r162.json" "$cfg/load/shop-r235.json"

# the least user + system CPU seconds of $runs runs of bbnest OPTIONS TRACE
cpu() {
	best=
	i=0
	while [ $i -lt "$runs" ]; do
		"$bin/bbnest" -q --stats --json --no-bins --top 1 "$@" 2>"$tmp/err" >/dev/null
		s=$(sed -n 's/.*cpu_user_s \([0-9.]*\) cpu_sys_s \([0-9.]*\).*/\1 \2/p' "$tmp/err" |
			awk '{ printf "%.4f", $1 + $2 }')
		[ -n "$s" ] || { echo "$0: error: no --stats CPU line: $(cat "$tmp/err")" >&2; exit 1; }
		if [ -z "$best" ] || awk -v a="$s" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$s
		fi
		i=$((i + 1))
	done
	echo "$best"
}

echo "bbnest --rounds R: rounds run, % of path instances wrong, most top-N (N <= 30)"
echo "patterns missed at 2%, CPU s (least of $runs runs, user + system)"
echo
printf '| trace |'
for r in $rounds; do printf ' --rounds %s |' "$r"; done
echo
printf '|---|'
for r in $rounds; do printf -- '---|'; done
echo
for c in "$@"; do
	name=$(basename "$c" .json)
	"$bin/maketrace" -q -o "$tmp/t.tr" "$c"
	row="| $name |"
	for r in $rounds; do
		"$bin/bbnest" -q --truth --json --no-bins --rounds "$r" "$tmp/t.tr" >"$tmp/t.json"
		w=$(jq -r '[.stats.global_rounds,
		  (.accuracy.instances | if .true > 0 then (10000 * .fn / .true | round / 100) else 0 end),
		  (.accuracy.topn_fn["2"] | max)] | "\(.[0]) · \(.[1])% · \(.[2])"' "$tmp/t.json")
		row="$row $w · $(cpu --rounds "$r" "$tmp/t.tr") s |"
	done
	echo "$row"
done

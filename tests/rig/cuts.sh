#!/bin/sh
# cuts.sh - kept rig runs (RIG_KEEP) cut short, as captures begun or stopped while
# requests are in flight, scored against the services' logs (score.py nest): per run,
# level and cut, the patterns and instances that do not exist (false positives; the false
# negatives hold the requests cut off), and bbnest's unmatched returns and orphaned calls.
#
#   BB_BIN=build/bin sh tests/rig/cuts.sh start|end DIR...    (CUTS="0.2 0.4 0.6" by default)
#
# start: the lines before a share of the trace's span are dropped; end: those after it.
set -u
: "${BB_BIN:?set BB_BIN to the directory of bbnest}"
side=${1:?start or end}
shift
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for d in "$@"; do
	if [ -f "$d/app1.log" ]; then
		set -- "$d/app1.log" "$d/app2.log" "$d/auth.log"
	else
		set -- "$d/front.log" "$d/search.log"
	fi
	for lv in poisson-8 poisson-64 burst-8 burst-64; do
		[ -f "$d/$lv.tr" ] || continue
		for f in ${CUTS:-0.2 0.4 0.6}; do
			sh "$here/cut.sh" "$d/$lv.tr" "$side" "$f" >"$tmp/c.tr" || exit 1
			"$BB_BIN/bbnest" -q --json --no-bins "$tmp/c.tr" >"$tmp/c.json" || exit 1
			line=$(python3 "$here/score.py" nest "$d/$lv.client.log" "$tmp/c.json" "$@" |
				sed -n 1p)
			pat=$(echo "$line" | sed -n 's/.* \([0-9]*\) false positive, [0-9]* false negative; instances.*/\1/p')
			inst=$(echo "$line" | sed -n 's/.*instances: \([0-9]*\) false positive.*/\1/p')
			st=$(jq -r '.stats | "\(.unmatched_returns) \(.orphaned_calls)"' "$tmp/c.json")
			echo "$(basename "$d") $lv $side $f patterns $pat instances $inst unmatched_returns/orphaned $st"
		done
	done
done

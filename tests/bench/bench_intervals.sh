#!/bin/sh
# bench_intervals.sh - how often bbnest's count intervals hold the true count, and how
# wide they are: for each generated trace, the true top-N patterns (bbnest --oracle) and,
# for each, whether its true count lies in the inferred pattern's count_interval (a
# pattern not inferred has [0, 0]), and the interval's width over the true count.
# Prints a markdown table (docs/accuracy.md, "Count intervals"); asserts nothing.
# usage: sh tests/bench/bench_intervals.sh BUILD_DIR [CONFIG...]   (needs jq)
#   CONFIG: maketrace configs, files or names under maketrace/configs/load (default: the
#   shop and social loads up to parallelism 1.6 and figure 17's multitier-par42)
#   N: how many true patterns (10); BBNEST_OPTS: bbnest's options (the defaults)
#   Scratch files go to ${BB_TMP:-/tmp}/bbnest-intervals.
set -eu
[ $# -ge 1 ] || { echo "usage: sh $0 BUILD_DIR [CONFIG...]" >&2; exit 2; }
bin=$1/bin
shift
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=${BB_TMP:-/tmp}/bbnest-intervals
mkdir -p "$tmp"
command -v jq >/dev/null 2>&1 || { echo "$0: error: needs jq" >&2; exit 1; }
N=${N:-10}
if [ $# -eq 0 ]; then
	set -- shop-r23 shop-r88 shop-r162 social-r65 social-r260 social-r520 \
		"$src/maketrace/configs/multitier-par42.json"
fi
# "key<TAB>count<TAB>lo<TAB>hi" per pattern, sorted by key
keys() { # json
	jq -r 'def k: .name + "(" + ([.children[] | k] | join(" ")) + ")";
	  .patterns[] | "\(.root | k)\t\(.count)\t\(.count_interval[0] // .count)\t\(.count_interval[1] // .count)"' "$1" | sort
}
echo "bbnest ${BBNEST_OPTS:-(defaults)}: the true top-$N patterns' counts against the count intervals"
echo
echo "| trace | instances wrong | true top-$N counts inside | mean width / true count | widest / true count |"
echo "|---|---:|---:|---:|---:|"
for c in "$@"; do
	case $c in */*) f=$c ;; *) f=$src/maketrace/configs/load/$c.json ;; esac
	name=$(basename "$f" .json)
	"$bin/maketrace" -q -o "$tmp/t.tr" "$f"
	"$bin/bbnest" -q --json --no-bins --oracle "$tmp/t.tr" >"$tmp/o.json"
	# shellcheck disable=SC2086
	"$bin/bbnest" -q --json --no-bins --truth ${BBNEST_OPTS:-} "$tmp/t.tr" >"$tmp/i.json"
	keys "$tmp/o.json" | sort -t "$(printf '\t')" -k2,2nr | head -n "$N" >"$tmp/o.keys"
	keys "$tmp/i.json" >"$tmp/i.keys"
	w=$(jq -r '.accuracy.instances | (1000 * .fn / .true | round / 10)' "$tmp/i.json")
	awk -F '\t' -v name="$name" -v w="$w" '
	  NR == FNR { lo[$1] = $3; hi[$1] = $4; next }
	  { t = $2; l = ($1 in lo) ? lo[$1] : 0; h = ($1 in hi) ? hi[$1] : 0
	    n++; in_ += (t >= l && t <= h); r = (h - l) / t; sum += r; if (r > max) max = r }
	  END { printf "| %s | %s%% | %d of %d | %.2f | %.2f |\n", name, w, in_, n, sum / n, max }' \
	  "$tmp/i.keys" "$tmp/o.keys"
done

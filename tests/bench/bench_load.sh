#!/bin/sh
# bench_load.sh - bbnest's accuracy on generated production-like loads (maketrace/configs/load):
# per workload and rate, the parallelism, the messages, the share of path instances wrong
# for the paper's choice, the defaults, two option sets, $BBNEST_OPTS and the timing-only
# bound, and the worst count error of a true top-10 pattern. Prints a markdown table
# (docs/accuracy.md, "Generated loads up to parallelism 1.6 and beyond"); asserts nothing.
# usage: sh tests/bench/bench_load.sh BUILD_DIR [CONFIG...]   (needs jq)
#   CONFIG: files or names under maketrace/configs/load (default: all of them)
#   BBNEST_OPTS: one more bbnest option set, shown as its own column (default: none)
#   Scratch files go to ${BB_TMP:-/tmp}/bbnest-load.
set -eu
[ $# -ge 1 ] || { echo "usage: sh $0 BUILD_DIR [CONFIG...]" >&2; exit 2; }
bin=$1/bin
shift
src=$(cd "$(dirname "$0")/../.." && pwd)
dir=$src/maketrace/configs/load
tmp=${BB_TMP:-/tmp}/bbnest-load
mkdir -p "$tmp"
command -v jq >/dev/null 2>&1 || { echo "$0: error: needs jq" >&2; exit 1; }
extra=${BBNEST_OPTS:-}

# the option sets, in column order: the paper's exact choice (per-caller histograms,
# raw bin mass, penalties 2,0,0), the defaults, two option sets of docs/accuracy.md, and
# the caller's own
paper="--scoreboard paper --score mass"
pen="--penalty 0,2,2 --smooth 2"
rg="--return-score --global"

if [ $# -eq 0 ]; then
	# by workload, then by rate (the names have no white space)
	# shellcheck disable=SC2046,SC2012
	set -- $(cd "$dir" && ls -- *.json | sort -V)
fi

# share of path instances wrong, in percent: instance false negatives / true instances
wrong() { # json
	jq -r '.accuracy.instances | if .true > 0 then (1000 * .fn / .true | round / 10) else 0 end' "$1"
}
# the bound's share, from --bound's accuracy
bound() { # json
	jq -r '.accuracy.bound.instances | if . == null then "-" elif .true > 0
	  then (1000 * .fn / .true | round / 10) else 0 end' "$1"
}
# canonical pattern keys and counts: "A(B(C) D)<TAB>count"
keys() { # json
	jq -r 'def k: .name + "(" + ([.children[] | k] | join(" ")) + ")";
	  .patterns[] | "\(.root | k)\t\(.count)"' "$1" | sort
}
# worst relative count error of the true top-10 patterns, in percent
top10() { # oracle-keys inferred-json
	keys "$2" >"$tmp/inf.keys"
	sort -t "$(printf '\t')" -k2,2nr "$1" | head -n 10 |
	awk -F '\t' 'NR == FNR { inf[$1] = $2; next }
	  { e = ($1 in inf ? inf[$1] : 0) - $2; if (e < 0) e = -e; e = 100 * e / $2;
	    if (e > w) w = e }
	  END { printf "%.1f\n", w }' "$tmp/inf.keys" -
}
nest() { "$bin/bbnest" -q --json --no-bins "$@"; }

echo "bbnest on maketrace/configs/load: % of path instances wrong (instance false negatives /"
echo "true instances), worst count error of a true top-10 pattern (%)"
echo "columns: paper = $paper; defaults; pen = $pen; rg = $rg;${extra:+ opts = $extra;}"
echo "bound = bbnest --bound (timing only, true delay distributions known)"
echo
printf '| config | open calls | candidates | messages | true patterns | paper | defaults | pen | rg |'
[ -n "$extra" ] && printf ' opts |'
printf ' bound | top-10 err: defaults | rg |'
[ -n "$extra" ] && printf ' opts |'
echo
printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|'
[ -n "$extra" ] && printf -- '---:|'
printf -- '---:|---:|---:|'
[ -n "$extra" ] && printf -- '---:|'
echo
for c in "$@"; do
	case $c in */*) f=$c ;; *) f=$dir/$c ;; esac
	name=$(basename "$f" .json)
	"$bin/maketrace" -q -I -o "$tmp/t.tr" "$f" 2>"$tmp/sum"
	open=$(sed -n 's/^maketrace: mean open calls \([0-9.]*\) .*/\1/p' "$tmp/sum")
	cand=$(sed -n 's/^maketrace: mean per-node parallelism \([0-9.]*\) .*/\1/p' "$tmp/sum")
	msgs=$(sed -n 's/^maketrace: \([0-9]*\) messages,.*/\1/p' "$tmp/sum")
	nest --oracle "$tmp/t.tr" >"$tmp/o.json"
	keys "$tmp/o.json" >"$tmp/o.keys"
	ntrue=$(wc -l <"$tmp/o.keys")
	# shellcheck disable=SC2086
	nest --truth $paper "$tmp/t.tr" >"$tmp/p.json"
	nest --truth --bound "$tmp/t.tr" >"$tmp/d.json" 2>/dev/null ||
		nest --truth "$tmp/t.tr" >"$tmp/d.json"
	# shellcheck disable=SC2086
	nest --truth $pen "$tmp/t.tr" >"$tmp/y.json"
	# shellcheck disable=SC2086
	nest --truth $rg "$tmp/t.tr" >"$tmp/g.json"
	row="| $name | $open | $cand | $msgs | $ntrue | $(wrong "$tmp/p.json") | $(wrong "$tmp/d.json")"
	row="$row | $(wrong "$tmp/y.json") | $(wrong "$tmp/g.json") |"
	if [ -n "$extra" ]; then
		# shellcheck disable=SC2086
		nest --truth $extra "$tmp/t.tr" >"$tmp/x.json"
		row="$row $(wrong "$tmp/x.json") |"
	fi
	row="$row $(bound "$tmp/d.json") | $(top10 "$tmp/o.keys" "$tmp/d.json") |"
	row="$row $(top10 "$tmp/o.keys" "$tmp/g.json") |"
	[ -n "$extra" ] && row="$row $(top10 "$tmp/o.keys" "$tmp/x.json") |"
	echo "$row"
done

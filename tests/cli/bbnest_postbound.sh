#!/bin/sh
# bbnest_postbound.sh - the count intervals come from the last --global round's
# posterior, which weighs each child's other parents (moves and swaps) and keeps those
# with at least 1% of the probability. It leaves out the changes whose gain is bounded
# under that (nest_refine.c, post_changes) and weighs a child again in full when what
# it left out could matter (post_open). So bbnest gives the same output as a build that
# weighs every change (bbnest_nobound, -DNEST_POST_BOUND=0), count intervals included,
# on table1-short, the social network at 390 requests a second and the multi-tier shop
# at 305 page views a second. Both halves matter: with the bound cutting at 0 instead of
# log(1%) and no child weighed again, all three differ; with the right bound but no
# child weighed again, shop-r305 does.
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
command -v jq >/dev/null 2>&1 || { echo "SKIP: needs jq"; exit 77; }
[ -x "$BB_BIN/bbnest_nobound" ] || { echo "FAIL: no $BB_BIN/bbnest_nobound"; exit 1; }
fail=0
no() { echo "FAIL: $*"; fail=1; }
cfg=$BB_SRC/maketrace/configs
same() { # NAME TRACE
	"$BB_BIN/bbnest" -q --json --no-bins "$2" >"$1.bound.json" || { no "$1: bbnest failed"; return; }
	"$BB_BIN/bbnest_nobound" -q --json --no-bins "$2" >"$1.all.json" ||
		{ no "$1: bbnest_nobound failed"; return; }
	jq -S . "$1.bound.json" >"$1.a"
	jq -S . "$1.all.json" >"$1.b"
	cmp -s "$1.a" "$1.b" || { no "$1: the outputs differ"; diff "$1.a" "$1.b" | head -20; }
	echo "$1: $(jq '.patterns | length' "$1.bound.json") patterns, the same with every change weighed"
}
"$BB_BIN/maketrace" -q -o short.tr "$cfg/table1-short.json" || no "maketrace failed"
same table1-short short.tr
"$BB_BIN/maketrace" -q -o social.tr "$cfg/load/social-r390.json" || no "maketrace failed"
same social-r390 social.tr
"$BB_BIN/maketrace" -q -o shop.tr "$cfg/load/shop-r305.json" || no "maketrace failed"
same shop-r305 shop.tr
exit $fail

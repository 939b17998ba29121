#!/bin/sh
# bbnest_direct.sh - --global's flow places most children without a search, by the
# direct path (nest_global.c, augment_direct): the child's first candidate at reduced
# cost 0, its parent and callee with room, the sink at distance 0, which the heap's
# tie rule makes the path the search takes too. So bbnest gives the same output as a
# build that searches for every child (bbnest_nodirect, -DNEST_DIRECT=0), but for
# stats.global_searched, which counts the searches' nodes and falls. On table1-short
# (parallelism 1.6), the social network at 390 requests a second and the multi-tier
# shop at 305 page views a second (bursts into worker pools, where a tenth of the
# children still need the search).
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
command -v jq >/dev/null 2>&1 || { echo "SKIP: needs jq"; exit 77; }
[ -x "$BB_BIN/bbnest_nodirect" ] || { echo "FAIL: no $BB_BIN/bbnest_nodirect"; exit 1; }
fail=0
no() { echo "FAIL: $*"; fail=1; }
cfg=$BB_SRC/maketrace/configs
same() { # NAME TRACE
	"$BB_BIN/bbnest" -q --json --no-bins "$2" >"$1.direct.json" || { no "$1: bbnest failed"; return; }
	"$BB_BIN/bbnest_nodirect" -q --json --no-bins "$2" >"$1.search.json" ||
		{ no "$1: bbnest_nodirect failed"; return; }
	jq -S 'del(.stats.global_searched)' "$1.direct.json" >"$1.a"
	jq -S 'del(.stats.global_searched)' "$1.search.json" >"$1.b"
	cmp -s "$1.a" "$1.b" || { no "$1: the outputs differ"; diff "$1.a" "$1.b" | head -20; }
	set -- "$1" "$(jq .stats.global_searched "$1.direct.json")" \
		"$(jq .stats.global_searched "$1.search.json")" "$(jq .stats.instances "$1.direct.json")"
	echo "$1: $4 instances; nodes searched in the last round: $2 with the direct path, $3 without"
	[ "$3" -gt "$2" ] || no "$1: the direct path searched $2 nodes, the search alone $3"
}
"$BB_BIN/maketrace" -q -o short.tr "$cfg/table1-short.json" || no "maketrace failed"
same table1-short short.tr
"$BB_BIN/maketrace" -q -o social.tr "$cfg/load/social-r390.json" || no "maketrace failed"
same social-r390 social.tr
"$BB_BIN/maketrace" -q -o shop.tr "$cfg/load/shop-r305.json" || no "maketrace failed"
same shop-r305 shop.tr
exit $fail

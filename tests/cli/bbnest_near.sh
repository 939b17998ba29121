#!/bin/sh
# bbnest_near.sh - a --global round after one that changed few parents' children decides
# only the children near those changes again (nest_global.c, near_changes; the others keep
# their parents and the room they take): such a round happens, those rounds decide at
# least one child and at most 5% of them a round again, and the answer stays within a
# limit. The shop load at 23 requests a second has one such round, its third, deciding
# 411 of its 13,252 children (42 of 3,817 instances wrong, as with four rounds before a
# round that reshapes no parent's callees settled the run; at most 15 per mille allowed);
# the social-network load at 390 requests a second (1.24 calls open on average) has four
# such rounds of its eight (1,382 children decided again in all) and stays within issue
# 14's target for generated loads, 5% of the instances wrong (3.1%; 1.2% for the
# timing-only bound).
# (table1-short had one until its second round settled the run: 2026-11-29.)
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
command -v jq >/dev/null 2>&1 || { echo "SKIP: needs jq"; exit 77; }
fail=0
no() { echo "FAIL: $*"; fail=1; }
cfg=$BB_SRC/maketrace/configs
check() { # NAME TRACE MAX_PER_MILLE
	"$BB_BIN/bbnest" -q --truth --json --no-bins "$2" >"$1.json" || { no "$1: bbnest failed"; return; }
	set -- "$1" "$2" "$3" "$(jq .stats.global_near_rounds "$1.json")" \
		"$(jq .stats.global_near_children "$1.json")" "$(jq .stats.child_calls "$1.json")" \
		"$(jq '.accuracy.instances | (1000 * .fn / .true | floor)' "$1.json")"
	echo "$1: $4 near rounds deciding $5 of $6 children again; $7 per mille of the instances wrong"
	[ "$4" -ge 1 ] || no "$1: no round near the changes"
	[ "$5" -ge 1 ] && [ $(($5 * 20)) -le $(($6 * $4)) ] ||
		no "$1: $5 children decided again in $4 rounds (from 1 to 5% of $6 a round)"
	[ "$7" -le "$3" ] || no "$1: $7 per mille wrong (at most $3)"
}
"$BB_BIN/maketrace" -q -o shop.tr "$cfg/load/shop-r23.json" || no "maketrace failed"
check shop-r23 shop.tr 15
"$BB_BIN/maketrace" -q -o social.tr "$cfg/load/social-r390.json" || no "maketrace failed"
check social-r390 social.tr 50
exit $fail

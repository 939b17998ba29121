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
: "${BB_SRC:?}"
VARIANT=nodirect
. "$BB_SRC/tests/cli/nestvariant.sh"
same() { # NAME TRACE
	variant_same "$1" "$2" 'del(.stats.global_searched)' || return
	set -- "$1" "$(jq .stats.global_searched "$1.json")" \
		"$(jq .stats.global_searched "$1.variant.json")" "$(jq .stats.instances "$1.json")"
	echo "$1: $4 instances; nodes searched in the last round: $2 with the direct path, $3 without"
	[ "$3" -gt "$2" ] || no "$1: the direct path searched $2 nodes, the search alone $3"
}
same table1-short short.tr
same social-r390 social.tr
same shop-r305 shop.tr
exit $fail

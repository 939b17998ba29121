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
: "${BB_SRC:?}"
VARIANT=nobound
. "$BB_SRC/tests/cli/nestvariant.sh"
same() { # NAME TRACE
	variant_same "$1" "$2" . || return
	echo "$1: $(jq '.patterns | length' "$1.json") patterns, the same with every change weighed"
}
same table1-short short.tr
same social-r390 social.tr
same shop-r305 shop.tr
exit $fail

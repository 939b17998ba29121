#!/bin/sh
# bbnest_scan.sh - --global's refinement looks up a child's entry for a parent many
# times (a swap or rotation moves a child to another's parent). A child with more than
# NEST_ENTRY_SCAN candidates (8) has them in call order, so bbnest finds the entry by
# bisection (nest_refine.c, entry_to). So it gives the same output as a build that scans
# every child's candidates (bbnest_scan, -DNEST_ENTRY_SCAN=0x7fffffff), count intervals
# included, on table1-short, the social network at 390 requests a second and the
# multi-tier shop at 305 page views a second (6.9 candidates a child, bursts of 3-5).
: "${BB_SRC:?}"
VARIANT=scan
. "$BB_SRC/tests/cli/nestvariant.sh"
same() { # NAME TRACE
	variant_same "$1" "$2" . || return
	echo "$1: $(jq '.patterns | length' "$1.json") patterns, the same with every entry scanned"
}
same table1-short short.tr
same social-r390 social.tr
same shop-r305 shop.tr
exit $fail

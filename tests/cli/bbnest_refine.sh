#!/bin/sh
# bbnest_refine.sh - the default's last step (nesting/nest_refine.c, docs/nesting.md): the
# flow's assignment refined by the sequences of callees each kind of call makes.
# - the web shop at parallelism 1.6 (page views firing 3-5 requests at once into web
#   servers with 4 workers): at most 5% of the instances wrong (13.4% before this step,
#   60% with the paper's greedy choice), and the step moved children;
# - the same trace with four symmetric callers of the same servers (figure 17's trace,
#   its first 10 s at parallelism about 45; splitting every kind by caller put 21.6% wrong there): the step must not drift to one caller's
#   sequences (split_kinds); at most 2% wrong.
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
command -v jq >/dev/null 2>&1 || { echo "SKIP: needs jq"; exit 77; }
mt=$BB_BIN/maketrace
nest=$BB_BIN/bbnest
fail=0
no() { echo "FAIL: $*"; fail=1; }
wrong() { # json: wrong instances per thousand
	jq '.accuracy.instances | (1000 * .fn / .true | floor)' "$1"
}

"$mt" -q "$BB_SRC/maketrace/configs/load/shop-r162.json" >shop.tr || no "maketrace shop failed"
"$nest" -q --truth --json --no-bins shop.tr >d.json || no "bbnest shop failed"
"$nest" -q --truth --json --no-bins --greedy shop.tr >g.json || no "bbnest --greedy shop failed"
d=$(wrong d.json) g=$(wrong g.json)
echo "shop-r162: defaults $d per mille wrong, --greedy $g, moved $(jq .stats.global_refined d.json)"
[ "$d" -le 50 ] || no "shop-r162: $d per mille of the instances wrong with the defaults (at most 50)"
[ "$g" -ge 400 ] || no "shop-r162: --greedy only $g per mille wrong: the trace no longer tests bursts"
jq -e '.stats.global_used and .stats.global_refined > 0' d.json >/dev/null ||
	no "shop-r162: the refinement did not run: $(jq -c .stats d.json)"

"$mt" -q -d 10 "$BB_SRC/maketrace/configs/multitier-par42.json" >m42.tr || no "maketrace m42 failed"
"$nest" -q --truth --json --no-bins m42.tr >m.json || no "bbnest m42 failed"
m=$(wrong m.json)
echo "multitier-par42 (10 s): defaults $m per mille wrong, parallelism $(jq .stats.mean_parallelism m.json)"
[ "$m" -le 20 ] || no "multitier-par42: $m per mille of the instances wrong (at most 20)"
exit $fail

#!/bin/sh
# bbnest_truth.sh - --oracle and --truth: the ground truth from path= attributes and the
# accuracy of the inferred patterns (section 7.5.1), on a hand-made trace and, when
# maketrace is built, on a synthetic multi-tier trace.
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
nest=$BB_BIN/bbnest
g=$BB_SRC/tests/golden/bbnest
fail=0
no() { echo "FAIL: $*"; fail=1; }
command -v jq >/dev/null 2>&1 || { echo "skip: no jq"; exit 77; }

# multi.tr is simple enough for the inference to be exact
"$nest" --truth --json "$g/multi.tr" >t.json 2>err || no "--truth failed: $(cat err)"
[ -s err ] && no "--truth writes to stderr: $(cat err)"
[ "$(jq '[.accuracy.patterns.fp, .accuracy.patterns.fn, .accuracy.instances.fp,
          .accuracy.instances.fn, .accuracy.messages.fp, .accuracy.messages.fn] | add' t.json)" = 0 ] ||
	no "multi.tr: inferred differs from the truth: $(jq -c .accuracy t.json)"
for t in 0 2 6; do
	[ "$(jq ".accuracy.topn_fn[\"$t\"] | length" t.json)" = 30 ] || no "topn_fn[$t] is not 30 long"
done
"$nest" --oracle --json "$g/multi.tr" >o.json || no "--oracle failed"
"$nest" --json "$g/multi.tr" >i.json || no "plain run failed"
[ "$(jq -c '[.patterns[] | .count]' o.json)" = "$(jq -c '[.patterns[] | .count]' i.json)" ] ||
	no "oracle and inferred counts differ on multi.tr"
[ "$(jq -r .params.mode o.json)" = oracle ] || no "--oracle: params.mode is not oracle"

# a trace where the inference must be wrong: equal parents, children of the second
cat >tie.tr <<'T'
#bbtrace 1
0	CALL	X	B	1	path=p1
0	CALL	Y	B	1	path=p2
10	CALL	B	C	a	path=p2
20	RET	C	B	a	path=p2
100	RET	B	X	1	path=p1
100	RET	B	Y	1	path=p2
T
"$nest" --truth --json tie.tr >tie.json || no "--truth on tie.tr failed"
[ "$(jq -c '[.accuracy.patterns.fp, .accuracy.patterns.fn, .accuracy.instances.fp,
             .accuracy.instances.fn, .accuracy.messages.fp, .accuracy.messages.fn]' tie.json)" = \
  "[2,2,2,2,3,3]" ] || no "tie.tr accuracy: $(jq -c .accuracy tie.json)"
"$nest" --truth --text tie.tr | grep -q 'top-N false negatives' || no "--truth --text has no table"

# no path= at all: a warning, every call its own path
printf '#bbtrace 1\n1 CALL a b 1\n2 RET b a 1\n' >nopath.tr
"$nest" --oracle nopath.tr >/dev/null 2>err || no "--oracle without path= failed"
grep -q 'warning: .*path=' err || no "--oracle without path= gives no warning"

# a synthetic multi-tier trace, when maketrace is there
cfg=$BB_SRC/maketrace/configs/multitier.json
if [ -x "$BB_BIN/maketrace" ] && [ -f "$cfg" ]; then
	"$BB_BIN/maketrace" "$cfg" >mt.tr 2>err || no "maketrace failed: $(cat err)"
	"$nest" -q --truth --json --no-bins mt.tr >mt.json 2>err || no "--truth on multitier failed"
	[ -s err ] && no "multitier: stderr: $(cat err)"
	[ "$(jq '.accuracy.topn_fn["6"] | length' mt.json)" = 30 ] || no "multitier: topn_fn"
	[ "$(jq '.accuracy.instances.true > 0' mt.json)" = true ] || no "multitier: no true instances"
	[ "$(jq '.stats.mean_parallelism > 0' mt.json)" = true ] || no "multitier: no parallelism"
else
	echo "note: maketrace or $cfg missing, synthetic part skipped"
fi
exit $fail

#!/bin/sh
# bbdiff_noise.sh - bbdiff does not flag the noise between normal runs: 20 pairs of
# maketrace multitier runs (200 s, about 80,000 messages each, different seeds) give at
# most 1 flagged change in total.
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
command -v jq >/dev/null 2>&1 || { echo "SKIP: needs jq"; exit 77; }
fail=0
total=0
for i in $(seq 1 20); do
	for s in $((2 * i + 99)) $((2 * i + 100)); do
		[ -s s$s.tr ] || "$BB_BIN/maketrace" -q -S $s -d 200 -o s$s.tr \
			"$BB_SRC/maketrace/configs/multitier.json" || { echo "FAIL: maketrace -S $s"; exit 1; }
	done
	"$BB_BIN/bbdiff" --json s$((2 * i + 99)).tr s$((2 * i + 100)).tr >d$i.json 2>err
	rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 3 ] || { echo "FAIL: pair $i: exit $rc, $(cat err)"; fail=1; }
	n=$(jq '.changes | length' d$i.json)
	[ "$n" -gt 0 ] && echo "pair $i: $(jq -c '.changes' d$i.json)"
	total=$((total + n))
	rm -f s$((2 * i + 99)).tr s$((2 * i + 100)).tr
done
echo "20 pairs of normal runs: $total flagged change(s)"
[ $total -le 1 ] || { echo "FAIL: $total false flags (at most 1)"; fail=1; }
exit $fail

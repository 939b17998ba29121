#!/bin/sh
# bbconv_golden.sh - bbconv outputs against tests/golden/bbconv/*.out (BB_REGEN=1 rewrites them)
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
dir=$BB_SRC/tests/golden/bbconv
export TZ=UTC LC_ALL=C
fail=0
n=0
while read -r name trace args; do
	case $name in '' | '#'*) continue ;; esac
	n=$((n + 1))
	# shellcheck disable=SC2086 # args are split on purpose
	"$BB_BIN/bbconv" $args "$dir/$trace" >"$BB_TMP/$name.out" 2>"$BB_TMP/$name.err"
	rc=$?
	if [ $rc -ne 0 ] || [ -s "$BB_TMP/$name.err" ]; then
		echo "FAIL $name: exit $rc, stderr:"
		cat "$BB_TMP/$name.err"
		fail=1
		continue
	fi
	if [ "${BB_REGEN:-}" = 1 ]; then
		cp "$BB_TMP/$name.out" "$dir/$name.out"
		echo "regenerated $name"
	elif ! cmp -s "$BB_TMP/$name.out" "$dir/$name.out"; then
		echo "FAIL $name: output differs from $dir/$name.out"
		diff -u "$dir/$name.out" "$BB_TMP/$name.out" | head -40
		fail=1
	fi
done <"$dir/list"
[ $n -gt 0 ] || { echo "no golden cases"; exit 1; }
echo "$n golden cases"
exit $fail

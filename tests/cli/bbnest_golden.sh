#!/bin/sh
# bbnest_golden.sh - bbnest output (dot, JSON, text, oracle, truth) against golden files.
# The cases are listed in tests/golden/bbnest/cases; BB_REGEN=1 rewrites the expected
# outputs (review the diff before committing). Any output on stderr fails.
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
dir=$BB_SRC/tests/golden/bbnest
export TZ=UTC LC_ALL=C
fail=0
while IFS='|' read -r name opts input; do
	case $name in '' | '#'*) continue ;; esac
	# shellcheck disable=SC2086 # options are split on purpose
	"$BB_BIN/bbnest" $opts "$dir/$input" >"$BB_TMP/$name.out" 2>"$BB_TMP/$name.err"
	rc=$?
	if [ $rc -ne 0 ] || [ -s "$BB_TMP/$name.err" ]; then
		echo "FAIL $name: exit $rc, stderr:"; cat "$BB_TMP/$name.err"; fail=1; continue
	fi
	if [ "${BB_REGEN:-}" = 1 ]; then
		cp "$BB_TMP/$name.out" "$dir/$name.out"
		echo "regenerated $name"
	elif ! cmp -s "$BB_TMP/$name.out" "$dir/$name.out"; then
		echo "FAIL $name: output differs from $dir/$name.out"
		diff -u "$dir/$name.out" "$BB_TMP/$name.out" | head -40
		fail=1
	else
		echo "ok $name"
	fi
done <"$dir/cases"
exit $fail

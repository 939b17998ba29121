#!/bin/sh
# bbcap_golden.sh - bbcap -r on corpus captures gives the reviewed traces of
# tests/golden/bbcap/ (metadata lines, which name library versions, aside).
# BB_GOLDEN_UPDATE=1 rewrites the golden files for review instead.
set -u
corpus="$BB_SRC/../shared/corpus"
gold="$BB_SRC/tests/golden/bbcap"
if [ ! -d "$corpus/protocols" ]; then
	echo "skipped: shared corpus not found at $corpus" >&2
	exit 77
fi
mkdir -p "$BB_TMP"
fail=0
grep -v '^#' "$gold/list.tsv" | while IFS='	' read -r file golden opts; do
	[ "$opts" = "-" ] && opts=""
	# shellcheck disable=SC2086
	"$BB_BIN/bbcap" -q --no-tokens $opts -r "$corpus/$file" -w "$BB_TMP/out.tr" 2>"$BB_TMP/err"
	rc=$?
	if [ $rc -ne 0 ] || [ -s "$BB_TMP/err" ]; then
		echo "FAIL $file: exit $rc: $(cat "$BB_TMP/err")"
		echo x >>"$BB_TMP/failed"
		continue
	fi
	grep -v '^#' "$BB_TMP/out.tr" >"$BB_TMP/got.tr"
	if [ "${BB_GOLDEN_UPDATE:-}" = 1 ]; then
		cp "$BB_TMP/got.tr" "$gold/$golden"
		echo "updated $golden"
	elif ! diff -u "$gold/$golden" "$BB_TMP/got.tr"; then
		echo "FAIL $file differs from $golden"
		echo x >>"$BB_TMP/failed"
	else
		echo "ok   $golden"
	fi
done
if [ -s "$BB_TMP/failed" ]; then
	rm -f "$BB_TMP/failed"
	exit 1
fi
exit $fail

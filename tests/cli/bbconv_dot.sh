#!/bin/sh
# bbconv_dot.sh - `bbconv -Q 0.01 t.tr | dot -Tsvg` gives one valid SVG, node names escaped
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
command -v dot >/dev/null 2>&1 || { echo "dot not installed"; exit 77; }
cd "$BB_TMP" || exit 1
fail=0
for t in rpc.tr mail.tr; do
	"$BB_BIN/bbconv" -Q 0.5 --min-count 5 "$BB_SRC/tests/golden/bbconv/$t" | dot -Tsvg >"$t.svg" 2>"$t.err"
	[ -s "$t.err" ] && { echo "FAIL $t: dot said: $(cat "$t.err")"; fail=1; }
	[ "$(grep -c '<svg' "$t.svg")" = 1 ] || { echo "FAIL $t: not one SVG"; fail=1; }
	grep -q '</svg>' "$t.svg" || { echo "FAIL $t: SVG incomplete"; fail=1; }
done
# the quote and backslash of relay"1\N come through as text, not syntax
grep -q 'relay&quot;1\\N' mail.tr.svg || { echo "FAIL: escaped name missing from SVG"; grep relay mail.tr.svg; fail=1; }
if command -v xmllint >/dev/null 2>&1; then
	xmllint --noout rpc.tr.svg mail.tr.svg || fail=1
fi
exit $fail

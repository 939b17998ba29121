#!/bin/sh
# man_render.sh - every man page under docs/man renders with groff's man macros
# without a warning (-ww) and holds no control character but tab: a stray one, or a
# broken escape, shows as junk in man(1). (bbnest(1)'s --bound entry had two form
# feeds where "\f" font escapes were meant until 2026-11-29.) Needs groff (groff-base).
set -u
: "${BB_SRC:?}"
command -v groff >/dev/null 2>&1 || { echo "SKIP: needs groff (groff-base)"; exit 77; }
fail=0
n=0
for f in "$BB_SRC"/docs/man/*.[1-8]; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	w=$(groff -man -ww -z "$f" 2>&1)
	[ -z "$w" ] || { echo "FAIL: $(basename "$f"): groff: $w"; fail=1; }
	c=$(tr -d '\t\n' <"$f" | tr -d '\040-\176\200-\377' | wc -c)
	[ "$c" -eq 0 ] || { echo "FAIL: $(basename "$f"): $c control characters"; fail=1; }
done
[ "$n" -ge 8 ] || { echo "FAIL: only $n man pages found under docs/man"; fail=1; }
echo "$n man pages checked"
exit $fail

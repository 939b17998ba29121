# nestvariant.sh - sourced by the tests that compare bbnest with a build of it with a
# shortcut turned off (bbnest.cmake, bb_nest_variant), named by VARIANT
# (bbnest_$VARIANT): makes the traces they compare on in $BB_TMP (the current
# directory after): short.tr (table1-short, parallelism 1.6), social.tr (the social
# network at 390 requests a second) and shop.tr (the multi-tier shop at 305 page views
# a second: bursts into worker pools).
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}" "${VARIANT:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
command -v jq >/dev/null 2>&1 || { echo "SKIP: needs jq"; exit 77; }
[ -x "$BB_BIN/bbnest_$VARIANT" ] || { echo "FAIL: no $BB_BIN/bbnest_$VARIANT"; exit 1; }
fail=0
no() { echo "FAIL: $*"; fail=1; }
cfg=$BB_SRC/maketrace/configs
"$BB_BIN/maketrace" -q -o short.tr "$cfg/table1-short.json" || no "maketrace failed"
"$BB_BIN/maketrace" -q -o social.tr "$cfg/load/social-r390.json" || no "maketrace failed"
"$BB_BIN/maketrace" -q -o shop.tr "$cfg/load/shop-r305.json" || no "maketrace failed"

# variant_same NAME TRACE FILTER: bbnest's JSON on TRACE (NAME.json) and the variant's
# (NAME.variant.json) the same through the jq FILTER; returns 1 when either failed or
# they differ
variant_same() {
	"$BB_BIN/bbnest" -q --json --no-bins "$2" >"$1.json" || { no "$1: bbnest failed"; return 1; }
	"$BB_BIN/bbnest_$VARIANT" -q --json --no-bins "$2" >"$1.variant.json" ||
		{ no "$1: bbnest_$VARIANT failed"; return 1; }
	jq -S "$3" "$1.json" >"$1.a"
	jq -S "$3" "$1.variant.json" >"$1.b"
	cmp -s "$1.a" "$1.b" || {
		no "$1: the outputs differ"
		diff "$1.a" "$1.b" | head -20
		return 1
	}
	return 0
}

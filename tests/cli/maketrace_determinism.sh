#!/bin/sh
# maketrace_determinism.sh - every shipped config: the same seed gives the same bytes, another
# seed other bytes, and every record line carries its ground-truth path=.
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
mt=$BB_BIN/maketrace
fail=0
no() { echo "FAIL: $*"; fail=1; }

n=0
for cfg in "$BB_SRC"/maketrace/configs/*.json; do
	name=$(basename "$cfg" .json)
	# The Table 1 configs of 770,000 and 2,000,000 messages take too long under
	# AddressSanitizer: they are capped with --messages, which gives a prefix of
	# the full trace (each instance slot has its own random stream).
	case $name in
	table1-long | table1-par-*) cap="--messages 40000" ;;
	*) cap="" ;;
	esac
	# shellcheck disable=SC2086
	"$mt" -q $cap "$cfg" -o "$name.1.tr" || no "$name: exit $?"
	# shellcheck disable=SC2086
	"$mt" -q $cap "$cfg" >"$name.2.tr" || no "$name: exit $? writing to stdout"
	cmp -s "$name.1.tr" "$name.2.tr" || no "$name: two runs with the same seed differ"
	# shellcheck disable=SC2086
	"$mt" -q $cap --seed 12345 "$cfg" -o "$name.3.tr" || no "$name: --seed: exit $?"
	cmp -s "$name.1.tr" "$name.3.tr" && no "$name: --seed 12345 gives the same bytes"
	grep -q '^#maketrace seed=12345 ' "$name.3.tr" || no "$name: --seed not in the metadata"
	records=$(grep -vc '^#' "$name.1.tr")
	[ "$records" -gt 1000 ] || no "$name: only $records records"
	bad=$(grep -v '^#' "$name.1.tr" | grep -cv '	path=[A-Za-z0-9_-]*\.[0-9][0-9]*$')
	[ "$bad" -eq 0 ] || no "$name: $bad record lines without path="
	head -3 "$name.1.tr" | grep -q "^#source maketrace $cfg\$" || no "$name: no #source line"
	rm -f "$name.2.tr" "$name.3.tr"
	n=$((n + 1))
done
# Every config the docs promise is shipped (more may be).
for want in multitier multitier-delay children-parallel children-0-2 children-d-cc \
	penalty-breaker table1-short table1-normal table1-delay table1-long table1-par-low \
	table1-par-medium table1-par-high email; do
	[ -f "$BB_SRC/maketrace/configs/$want.json" ] || no "config $want.json is not shipped"
done

# --messages is exact, and a capped run is a prefix of the longer one
cfg=$BB_SRC/maketrace/configs/multitier.json
"$mt" -q --messages 500 "$cfg" >short.tr && "$mt" -q --messages 2000 "$cfg" >long.tr ||
	no "--messages run failed"
[ "$(grep -vc '^#' short.tr)" -eq 500 ] || no "--messages 500 gives $(grep -vc '^#' short.tr)"
grep -v '^#' short.tr >s.body
grep -v '^#' long.tr | head -500 | cmp -s - s.body || no "a capped run is not a prefix"
# --duration overrides the config's
"$mt" -q --duration 2s "$cfg" >d.tr || no "--duration run failed"
last=$(tail -1 d.tr | cut -f1)
first=$(grep -v '^#' d.tr | head -1 | cut -f1)
awk -v a="$first" -v b="$last" 'BEGIN { exit !(b - a < 3) }' || no "--duration 2s spans $first..$last"

[ $fail -eq 0 ] && echo "ok: $n configs"
exit $fail

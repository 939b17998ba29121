#!/bin/sh
# bbcap_tokens.sh - tok= and ctx= on a capture of real servers
# (tests/fixtures/tokens/tokens.pcap, made by make_tokens.sh beside it): with
# a fixed --token-salt the right records share tokens and contexts
# (bbcap_tokens_check.py); another salt gives other hashes with the same
# sharing; --no-tokens writes none; the default salt comes from the capture file (random from standard input); the
# raw values never appear in tok= or ctx=.
# With "live" as its argument: regenerates the capture with the real servers
# (root, the packages make_tokens.sh names; 77 otherwise), with bbcap
# capturing the same traffic live, and checks both traces.
set -u
mkdir -p "$BB_TMP"
T=$(cd "$BB_TMP" && pwd)
check="/usr/bin/python3 $BB_SRC/tests/cli/bbcap_tokens_check.py"
/usr/bin/python3 -c 1 2>/dev/null || { echo "skipped: python3 not installed" >&2; exit 77; }
fail=0
no() { echo "FAIL $*"; fail=1; }
pcap="$BB_SRC/tests/fixtures/tokens/tokens.pcap"
if [ "${1:-}" = live ]; then
	BBCAP="$BB_BIN/bbcap" "$BB_SRC/tests/fixtures/tokens/make_tokens.sh" "$T" >"$T/make.log" 2>&1
	rc=$?
	[ $rc = 77 ] && { cat "$T/make.log" >&2; exit 77; }
	[ $rc = 0 ] || { echo "FAIL: make_tokens.sh exit $rc"; cat "$T/make.log"; exit 1; }
	pcap="$T/tokens.pcap"
	echo "live bbcap:"
	$check "$T/live.tr" || fail=1
	[ -s "$T/bbcap.err" ] && no "bbcap said: $(cat "$T/bbcap.err")"
fi

run() { # OUT OPTIONS...
	out=$1
	shift
	"$BB_BIN/bbcap" -q "$@" -r "$pcap" -w "$T/$out" 2>"$T/err" || no "bbcap $*: exit $?: $(cat "$T/err")"
	[ -s "$T/err" ] && no "bbcap $*: said $(cat "$T/err")"
}
vals() { grep -v '^#' "$1" | tr '\t' '\n' | sed -n 's/^\(tok\|ctx\)=//p' | tr ',' '\n' | sort -u; }

echo "bbcap -r, --token-salt fixture:"
run a.tr --token-salt fixture
$check "$T/a.tr" || fail=1
echo "bbcap -r, --token-salt other:"
run b.tr --token-salt other
$check "$T/b.tr" || fail=1
vals "$T/a.tr" >"$T/a.vals"
vals "$T/b.tr" >"$T/b.vals"
[ -s "$T/a.vals" ] || no "no tok= or ctx= with --token-salt"
[ -z "$(comm -12 "$T/a.vals" "$T/b.vals")" ] || no "two salts gave a common hash"
# the same salt, the same hashes
run a2.tr --token-salt fixture
cmp -s "$T/a.tr" "$T/a2.tr" || no "the same salt gave another trace"
# default with -r: a salt from the capture file's bytes, said in the header: the
# same capture gives the same trace, unlike any fixed salt's hashes; from
# standard input (no file to derive it from) a random salt per run
run r1.tr
run r2.tr
grep -q '^#tokens salt=input$' "$T/r1.tr" || no "no '#tokens salt=input' line by default"
cmp -s "$T/r1.tr" "$T/r2.tr" || no "two runs on one capture without a salt differ"
vals "$T/r1.tr" >"$T/r1.vals"
[ -s "$T/r1.vals" ] && [ -z "$(comm -12 "$T/r1.vals" "$T/a.vals")" ] || no "the input's salt gave the fixed salt's hashes"
"$BB_BIN/bbcap" -q -r - -w "$T/s1.tr" <"$pcap" 2>/dev/null || no "bbcap -r - failed"
"$BB_BIN/bbcap" -q -r - -w "$T/s2.tr" <"$pcap" 2>/dev/null || no "bbcap -r - failed"
grep -q '^#tokens salt=random$' "$T/s1.tr" || no "no '#tokens salt=random' line from standard input"
vals "$T/s1.tr" >"$T/s1.vals"
vals "$T/s2.tr" >"$T/s2.vals"
[ -s "$T/s1.vals" ] && [ -z "$(comm -12 "$T/s1.vals" "$T/s2.vals")" ] || no "two runs from standard input share hashes"
# --no-tokens: none, and the records are otherwise the same
run n.tr --no-tokens
grep -q '^#tokens off$' "$T/n.tr" || no "no '#tokens off' line with --no-tokens"
grep -v '^#' "$T/n.tr" | grep -q -e '	tok=' -e '	ctx=' && no "tok= or ctx= with --no-tokens"
grep -v '^#' "$T/a.tr" | sed 's/	tok=[^	]*//; s/	ctx=[^	]*//' >"$T/a.stripped"
grep -v '^#' "$T/n.tr" >"$T/n.body"
cmp -s "$T/a.stripped" "$T/n.body" || no "--no-tokens changed other fields"
# only hashes: 16 hex digits each, so no identifier of the workload
grep -v '^#' "$T/a.tr" | tr '\t' '\n' | grep -e '^tok=' -e '^ctx=' |
	grep -v -E -q '^(tok|ctx)=[0-9a-f]{16}(,[0-9a-f]{16})*$' && no "tok= or ctx= holds more than hashes"
"$BB_BIN/bbcap" --no-tokens --token-salt x -r "$pcap" -w /dev/null 2>"$T/err"
[ $? = 2 ] || no "--no-tokens with --token-salt: not a usage error"
"$BB_BIN/bbcap" --token-salt= -r "$pcap" -w /dev/null 2>"$T/err"
[ $? = 2 ] || no "an empty --token-salt: not a usage error"
[ $fail = 0 ] && echo "ok: tokens and contexts"
exit $fail

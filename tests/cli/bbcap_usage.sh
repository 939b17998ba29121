#!/bin/sh
# bbcap_usage.sh - options, exit codes and messages of bbcap
set -u
B="$BB_BIN/bbcap"
mkdir -p "$BB_TMP"
fail=0
check() { # check WANT_RC DESCRIPTION -- command...
	want=$1 what=$2
	shift 2
	"$@" >"$BB_TMP/out" 2>"$BB_TMP/err"
	rc=$?
	if [ $rc -ne "$want" ]; then
		echo "FAIL $what: exit $rc, want $want"
		cat "$BB_TMP/err"
		fail=1
	fi
}
check 0 "help" "$B" -h
grep -q '^usage: bbcap' "$BB_TMP/out" || { echo "FAIL help text"; fail=1; }
[ -s "$BB_TMP/err" ] && { echo "FAIL help wrote to stderr"; fail=1; }
check 0 "version" "$B" --version
grep -q 'libpcap' "$BB_TMP/out" && grep -q 'libnids' "$BB_TMP/out" ||
	{ echo "FAIL version names libpcap and libnids"; fail=1; }
check 0 "list decoders" "$B" --list-decoders
for d in generic dns sunrpc http; do
	grep -q "^$d " "$BB_TMP/out" || { echo "FAIL --list-decoders lacks $d"; fail=1; }
done
check 2 "no source" "$B"
want_err() { # want_err DESCRIPTION LINE1: a usage error in the one format of every command
	printf '%s\n' "$2" "Try 'bbcap --help' for more information." >"$BB_TMP/want"
	cmp -s "$BB_TMP/want" "$BB_TMP/err" || { echo "FAIL $1 message: $(cat "$BB_TMP/err")"; fail=1; }
}
want_err "no source" "bbcap: error: nothing to read: give -r FILE or -i IFACE"
check 2 "bad option" "$B" --bogus
want_err "bad option" 'bbcap: error: unknown option "--bogus"'
check 2 "option without its value" "$B" -r
want_err "option without its value" "bbcap: error: -r needs a value"
check 2 "both -r and -i" "$B" -r x -i lo
want_err "both -r and -i" "bbcap: error: -r and -i cannot be used together"
check 2 "bad buffer size" "$B" -B 0 -r x
want_err "bad buffer size" 'bbcap: error: -B: bad buffer size "0" (megabytes)'
check 2 "empty salt" "$B" --token-salt= -r x
want_err "empty salt" "bbcap: error: --token-salt: empty salt"
check 2 "salt and no tokens" "$B" --token-salt=a --no-tokens -r x
want_err "salt and no tokens" "bbcap: error: --token-salt and --no-tokens cannot be used together"
check 2 "bad decode-as" "$B" --decode-as 80=nope -r x
grep -q 'nope' "$BB_TMP/err" || { echo "FAIL decode-as message"; fail=1; }
check 2 "bad decode-as port" "$B" --decode-as x=http -r x
check 2 "bad no-decoder" "$B" --no-decoder nope -r x
check 2 "bad count" "$B" -c 0 -r x
check 2 "bad reassembly" "$B" --reassembly=nope -r x
want_err "bad reassembly" 'bbcap: error: --reassembly: "nope" is neither bbcap nor libnids'
check 1 "missing file" "$B" -r "$BB_TMP/does-not-exist.pcap"
grep -q "^bbcap: error: $BB_TMP/does-not-exist.pcap: " "$BB_TMP/err" ||
	{ echo "FAIL missing file message: $(cat "$BB_TMP/err")"; fail=1; }
printf 'not a capture at all\n' >"$BB_TMP/junk.pcap"
check 1 "junk file" "$B" -r "$BB_TMP/junk.pcap"
check 1 "unwritable output" "$B" -r "$BB_TMP/junk.pcap" -w "$BB_TMP/no/such/dir/t.tr"

# Options at work on the shipped fixture: 3 DNS exchanges over UDP (1 s apart)
# and 2 HTTP exchanges on one connection (tests/fixtures/bbcap/make_fixtures.py).
fx="$BB_SRC/tests/fixtures/bbcap/dns-http.pcap"
records() { grep -vc '^#' "$1"; }
want() { # want WHAT EXPECTED GOT
	[ "$2" = "$3" ] || { echo "FAIL $1: want $2, got $3"; fail=1; }
}
"$B" -q --token-salt usage -r "$fx" -w "$BB_TMP/all.tr" || fail=1
want "all records" 10 "$(records "$BB_TMP/all.tr")"
want "#capture last" "#capture packets=13" "$(tail -1 "$BB_TMP/all.tr" | cut -d' ' -f1-2)"
want "one #capture line" 1 "$(grep -c '^#capture' "$BB_TMP/all.tr")"
want "#capture not padded" 0 "$(grep -c ' $' "$BB_TMP/all.tr")"
want "no temporary file left" "" "$(ls "$BB_TMP" | grep 'partial')"
# A run that cannot start leaves an existing trace as it was: a misspelt
# input, a misspelt filter, an unknown interface.
cp "$BB_TMP/all.tr" "$BB_TMP/keep.tr"
check 1 "typo input keeps -w" "$B" -q -r "$BB_TMP/typo.pcap" -w "$BB_TMP/keep.tr"
cmp -s "$BB_TMP/all.tr" "$BB_TMP/keep.tr" || { echo "FAIL: a misspelt -r changed the -w file"; fail=1; }
check 2 "bad filter keeps -w" "$B" -q -r "$fx" -w "$BB_TMP/keep.tr" tcp prt 80
grep -q 'bad filter "tcp prt 80"' "$BB_TMP/err" || { echo "FAIL bad filter message: $(cat "$BB_TMP/err")"; fail=1; }
cmp -s "$BB_TMP/all.tr" "$BB_TMP/keep.tr" || { echo "FAIL: a misspelt filter changed the -w file"; fail=1; }
check 1 "no interface keeps -w" "$B" -q -i bbnosuchif0 -w "$BB_TMP/keep.tr"
cmp -s "$BB_TMP/all.tr" "$BB_TMP/keep.tr" || { echo "FAIL: a missing interface changed the -w file"; fail=1; }
want "no temporary file left after failures" "" "$(ls "$BB_TMP" | grep 'partial')"
# A directory where no file can be made (as nobody, when root): the -w file
# that may be written is written in place.
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && command -v su >/dev/null 2>&1; then
	mkdir -p "$BB_TMP/ro"
	cp "$BB_TMP/all.tr" "$BB_TMP/ro/k.tr"
	chmod 666 "$BB_TMP/ro/k.tr"
	chmod 555 "$BB_TMP/ro"
	: >"$BB_TMP/ro/k.tr"
	if su nobody -s /bin/sh -c "test -x '$B' && test -r '$fx' && test -w '$BB_TMP/ro/k.tr'"; then
		su nobody -s /bin/sh -c "'$B' -q -r '$fx' -w '$BB_TMP/ro/k.tr'" 2>"$BB_TMP/ro.err" ||
			{ echo "FAIL read-only directory: $(cat "$BB_TMP/ro.err")"; fail=1; }
		want "read-only directory: records written in place" 10 "$(records "$BB_TMP/ro/k.tr")"
	else
		echo "note: nobody cannot reach bbcap, the fixture or $BB_TMP: read-only directory case not run"
	fi
	chmod 755 "$BB_TMP/ro"
fi
# An existing trace keeps its mode when replaced.
chmod 0640 "$BB_TMP/keep.tr"
"$B" -q --token-salt usage -r "$fx" -w "$BB_TMP/keep.tr" || fail=1
want "mode kept" 640 "$(stat -c %a "$BB_TMP/keep.tr")"
cmp -s "$BB_TMP/all.tr" "$BB_TMP/keep.tr" || { echo "FAIL: the same run gave another trace"; fail=1; }
grep -q "	RET	10.1.0.2	10.1.0.1	c[0-9]*.1	proto=http	req=GET%20/x	end=1700000001.502000000	len=40$" "$BB_TMP/all.tr" ||
	{ echo "FAIL http record"; grep http "$BB_TMP/all.tr"; fail=1; }
"$B" -q -c 2 -r "$fx" -w "$BB_TMP/c.tr" || fail=1
want "-c 2" 2 "$(records "$BB_TMP/c.tr")"
"$B" -q --token-salt usage --reassembly=libnids -r "$fx" -w "$BB_TMP/n.tr" || fail=1
want "--reassembly=libnids: the same records" "$(grep -v '^#' "$BB_TMP/all.tr")" "$(grep -v '^#' "$BB_TMP/n.tr")"
"$B" -q --duration 1.2s -r "$fx" -w "$BB_TMP/d.tr" || fail=1
want "--duration 1.2s" 4 "$(records "$BB_TMP/d.tr")"
"$B" -q -r - -w - <"$fx" >"$BB_TMP/pipe.tr" || fail=1
want "-r - -w -" 10 "$(records "$BB_TMP/pipe.tr")"
want "#capture last on a pipe" "#capture" "$(tail -1 "$BB_TMP/pipe.tr" | cut -d' ' -f1)"
"$B" -q -r "$fx" -w "$BB_TMP/f.tr" udp || fail=1
want "BPF filter udp" 6 "$(records "$BB_TMP/f.tr")"
"$B" -q -r "$fx" -w "$BB_TMP/nd.tr" --no-decoder dns || fail=1
want "--no-decoder dns" 6 "$(grep -c 'proto=generic' "$BB_TMP/nd.tr")"
"$B" -q -r "$fx" -w "$BB_TMP/da.tr" --decode-as 80=generic || fail=1
want "--decode-as 80=generic" 4 "$(grep -c 'proto=generic' "$BB_TMP/da.tr")"
"$B" -q -r "$fx" -w "$BB_TMP/sp.tr" --server-ports || fail=1
want "--server-ports" 3 "$(grep -c '	CALL	10.1.0.1	10.1.0.53:53	' "$BB_TMP/sp.tr")"
printf '10.1.0.53 resolver\n10.1.0.1 client # comment\n' >"$BB_TMP/hosts"
"$B" -q -r "$fx" -w "$BB_TMP/n.tr" --names "$BB_TMP/hosts" || fail=1
want "--names" 3 "$(grep -c '	CALL	client	resolver	' "$BB_TMP/n.tr")"
"$B" -r "$fx" -w /dev/null 2>"$BB_TMP/sum" || fail=1
grep -q '^13 packets captured$' "$BB_TMP/sum" && grep -q '^  dns  *3 flows, 3 calls, 3 returns' "$BB_TMP/sum" ||
	{ echo "FAIL summary"; cat "$BB_TMP/sum"; fail=1; }
# a call with no return (the capture ends after the first query) is in the summary
"$B" -c 1 -r "$fx" -w /dev/null 2>"$BB_TMP/sum1" || fail=1
grep -q '^  dns  *1 flows, 1 calls, 0 returns, 1 unanswered calls, 0 unmatched returns' "$BB_TMP/sum1" ||
	{ echo "FAIL unanswered calls in the summary"; cat "$BB_TMP/sum1"; fail=1; }
exit $fail

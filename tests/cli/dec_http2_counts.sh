#!/bin/sh
# dec_http2_counts.sh - the http2 decoder's CALL and RET counts on the shared
# corpus agree with tshark's (MANIFEST.tsv requests/responses, ORACLE.md
# "HTTP/2 and gRPC"), and a few traces equal their reviewed golden files
# (tests/golden/bbcap/http2-*.tr; BB_GOLDEN_UPDATE=1 rewrites them).
set -u
corpus="$BB_SRC/../shared/corpus"
gold="$BB_SRC/tests/golden/bbcap"
if [ ! -f "$corpus/MANIFEST.tsv" ]; then
	echo "skipped: shared corpus not found at $corpus" >&2
	exit 77
fi
mkdir -p "$BB_TMP"
fail=0 n=0
awk -F'\t' '$2 == "protocols" && ($8 == "http2" || $8 == "grpc") {
	print $1 "\t" $9 "\t" $10 "\t" $11 }' "$corpus/MANIFEST.tsv" | sort -u >"$BB_TMP/list"
while IFS='	' read -r file req resp notes; do
	# "tshark needs: -d tcp.port==N,http2" -> --decode-as N=http2
	port=$(printf '%s\n' "$notes" | sed -n 's/.*tcp\.port==\([0-9]*\),http2.*/\1/p')
	opts=""
	[ -n "$port" ] && opts="--decode-as $port=http2"
	out="$BB_TMP/out.tr"
	# shellcheck disable=SC2086
	if ! "$BB_BIN/bbcap" -q $opts -r "$corpus/$file" -w "$out" 2>"$BB_TMP/err"; then
		echo "FAIL $file: bbcap failed: $(cat "$BB_TMP/err")"
		fail=1
		continue
	fi
	if [ -s "$BB_TMP/err" ]; then
		echo "FAIL $file: stderr: $(cat "$BB_TMP/err")"
		fail=1
	fi
	calls=$(grep -c "	CALL	.*	proto=http2	" "$out")
	rets=$(grep -c "	RET	.*	proto=http2	" "$out")
	n=$((n + 1))
	case $file in
	*http2__arkime__http2-nghttp2.pcap)
		# Prior knowledge on port 80 (the connection opens with the preface;
		# MANIFEST's note says h2c Upgrade, but there is no HTTP/1.1 in it).
		# The request on stream 13 is an 18 KB field block: a 16384-byte
		# HEADERS and a CONTINUATION over 14 segments. tshark 4.0 marks that
		# frame "[BoundErrorUnreassembled Packet]" and sees no :method, so it
		# counts 0 requests; bbcap decodes the block (req=GET /) and counts 1.
		# The 2 responses agree (stream 13, and stream 2 promised by a
		# PUSH_PROMISE of GET /stylesheets/screen.css).
		req=1
		grep -q "	CALL	.*	c1.s13	proto=http2	req=GET%20/	" "$out" || {
			echo "FAIL $file: no CALL c1.s13 GET /"; fail=1; } ;;
	esac
	if [ "$calls" != "$req" ] || [ "$rets" != "$resp" ]; then
		echo "FAIL $file: calls/returns $calls/$rets, tshark $req/$resp"
		fail=1
	else
		echo "ok   $file: $calls/$rets"
	fi
	# Nothing else took these flows, and nothing was malformed.
	if grep -q '^#capture .* http2=.*malformed:[1-9]' "$out"; then
		echo "FAIL $file: malformed messages: $(grep '^#capture' "$out")"
		fail=1
	fi
done <"$BB_TMP/list"

# Reviewed traces: file, golden, bbcap options.
cat >"$BB_TMP/golden" <<'LIST'
protocols/http2__ndpi__http2.pcapng	http2-sbi.tr	-
protocols/grpc__deepflow__grpc-unary.pcap	http2-grpc-unary.tr	--decode-as 30035=http2
protocols/http2__arkime__http2-nghttp2.pcap	http2-push.tr	-
LIST
while IFS='	' read -r file golden opts; do
	[ "$opts" = "-" ] && opts=""
	# shellcheck disable=SC2086
	"$BB_BIN/bbcap" -q --no-tokens $opts -r "$corpus/$file" -w "$BB_TMP/g.tr" 2>"$BB_TMP/err" ||
		{ echo "FAIL $file: bbcap failed"; fail=1; continue; }
	grep -v '^#' "$BB_TMP/g.tr" >"$BB_TMP/got.tr"
	if [ "${BB_GOLDEN_UPDATE:-}" = 1 ]; then
		cp "$BB_TMP/got.tr" "$gold/$golden"
		echo "updated $golden"
	elif ! diff -u "$gold/$golden" "$BB_TMP/got.tr"; then
		echo "FAIL $file differs from $golden"
		fail=1
	else
		echo "ok   $golden"
	fi
	n=$((n + 1))
done <"$BB_TMP/golden"
echo "$n checks"
exit $fail

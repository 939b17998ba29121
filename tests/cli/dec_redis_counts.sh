#!/bin/sh
# dec_redis_counts.sh - the redis, memcache and thrift decoders on every file of
# their protocols in the shared corpus: CALL/RET counts agree with tshark's
# (MANIFEST.tsv requests/responses, see ORACLE.md), except where tshark counts
# something else than messages; each such file says why below, and where the
# reason is "tshark counts turns" the generic decoder (turns) is run too and
# must give exactly tshark's counts. Every return pairs with a call of its id
# unless said otherwise.
set -u
corpus="$BB_SRC/../shared/corpus"
if [ ! -f "$corpus/MANIFEST.tsv" ]; then
	echo "skipped: shared corpus not found at $corpus" >&2
	exit 77
fi
mkdir -p "$BB_TMP"
fail=0 n=0

# file  decoder  calls  rets  unpaired returns allowed  turns (1: generic = tshark)
# for the files where bb and tshark count differently.
cat >"$BB_TMP/why" <<'WHY'
redis__zeek__pipelining-example.pcap	3	3	0	1
redis__zeek__pubsub.pcap	7	7	0	0
memcache__generated__binary_tcp_udp.pcap	412	313	0	0
memcache__generated__text_tcp_udp.pcap	129	127	0	1
memcache__deepflow__memcached-userdata.pcap	10154	10153	0	1
WHY
# Why:
# - redis pipelining-example: three PINGs pipelined in one segment, three +PONG
#   in one: tshark lists RESP once per frame (1/1); they are 3 commands and 3
#   replies.
# - redis pubsub: two server frames carry only published messages (RESP2
#   "message"/"pmessage" pushes on a subscribed connection); tshark counts
#   them as RETURNs (9), but they answer no command: bb emits no RET for them.
# - memcache binary: one STAT request is answered by 93 responses (one per
#   statistic, the last with an empty key); tshark counts 93 RETURNs
#   (tshark -Y 'memcache.magic == 0x81 && memcache.opcode == 16' lists 93), bb
#   one RET from the first to the last (405 - 92 = 313).
# - memcache text over TCP: tshark counts a client turn as one request and a
#   server turn as one response (ORACLE.md); the client sends "set ... noreply"
#   and "stats" in one turn and three gets pipelined in one turn: 129/127
#   messages for 126/125 turns.
# - memcache userdata: the same: the client pipelines gets within turns. The
#   file's header has its version fields byte-swapped against its magic
#   (d4c3b2a1 00020004): libpcap refuses it ("unsupported pcap savefile version
#   512.1024"), tshark reads it; the test repairs those 4 bytes in a copy.

awk -F'\t' '$2 == "protocols" && ($8 == "redis" || $8 == "memcache" || $8 == "thrift") {
	print $1 "\t" $8 "\t" $9 "\t" $10 "\t" $11 }' "$corpus/MANIFEST.tsv" | sort -u >"$BB_TMP/list"
[ -s "$BB_TMP/list" ] || { echo "FAIL: no redis/memcache/thrift files in MANIFEST.tsv"; exit 1; }
while IFS='	' read -r file dec req resp notes; do
	in="$corpus/$file"
	base=${file#protocols/}
	opts=""
	port=$(printf '%s\n' "$notes" | sed -n 's/.*tshark needs: -d tcp\.port==\([0-9]*\),thrift.*/\1/p')
	[ -n "$port" ] && opts="--decode-as $port=thrift"
	case $base in
	memcache__deepflow__memcached-userdata.pcap)
		cp "$in" "$BB_TMP/userdata.pcap"
		printf '\002\000\004\000' | dd of="$BB_TMP/userdata.pcap" bs=1 seek=4 conv=notrunc 2>/dev/null
		in="$BB_TMP/userdata.pcap" ;;
	esac
	out="$BB_TMP/out.tr"
	# shellcheck disable=SC2086
	if ! "$BB_BIN/bbcap" -q -r "$in" $opts -w "$out" 2>"$BB_TMP/err"; then
		echo "FAIL $file: bbcap failed: $(cat "$BB_TMP/err")"
		fail=1
		continue
	fi
	if [ -s "$BB_TMP/err" ]; then
		echo "FAIL $file: stderr: $(cat "$BB_TMP/err")"
		fail=1
	fi
	calls=$(grep -c "	CALL	.*	proto=$dec	" "$out")
	rets=$(grep -c "	RET	.*	proto=$dec	" "$out")
	wantc=$req wantr=$resp allow=0 turns=0
	why=$(grep "^$base	" "$BB_TMP/why")
	if [ -n "$why" ]; then
		wantc=$(echo "$why" | cut -f2)
		wantr=$(echo "$why" | cut -f3)
		allow=$(echo "$why" | cut -f4)
		turns=$(echo "$why" | cut -f5)
	fi
	# every return pairs with an earlier call of the same id
	unpaired=$(grep -v '^#' "$out" | awk -F'	' -v d="proto=$dec" '$6 != d { next }
		$2 == "CALL" { c[$5]++ } $2 == "RET" { if (c[$5] > 0) c[$5]--; else n++ } END { print n + 0 }')
	n=$((n + 1))
	ok=1
	[ "$calls" = "$wantc" ] && [ "$rets" = "$wantr" ] || ok=0
	[ "$unpaired" -le "$allow" ] || ok=0
	note=""
	if [ "$turns" = 1 ]; then
		# shellcheck disable=SC2086
		"$BB_BIN/bbcap" -q -r "$in" --no-decoder "$dec" $opts -w "$BB_TMP/gen.tr" 2>/dev/null
		gc=$(grep -c "	CALL	.*	proto=generic	" "$BB_TMP/gen.tr")
		gr=$(grep -c "	RET	.*	proto=generic	" "$BB_TMP/gen.tr")
		[ "$gc" = "$req" ] && [ "$gr" = "$resp" ] || ok=0
		note=", turns (generic) $gc/$gr"
	fi
	if [ $ok = 1 ]; then
		echo "ok   $file: $calls/$rets (tshark $req/$resp$note)"
	else
		echo "FAIL $file: calls/returns $calls/$rets, want $wantc/$wantr (tshark $req/$resp$note), $unpaired returns without a call (allowed $allow)"
		fail=1
	fi
done <"$BB_TMP/list"

# req= names what was asked, on calls and returns.
"$BB_BIN/bbcap" -q -r "$corpus/protocols/redis__zeek__redis-50-pings.pcap" -w "$BB_TMP/r.tr"
pings=$(grep -c "	CALL	.*proto=redis	req=PING	" "$BB_TMP/r.tr")
auth=$(grep -c "	RET	.*proto=redis	req=AUTH	" "$BB_TMP/r.tr")
[ "$pings" -ge 50 ] && [ "$auth" = 1 ] || { echo "FAIL redis req=: $pings PING calls, $auth AUTH returns"; fail=1; }
"$BB_BIN/bbcap" -q -r "$corpus/protocols/thrift__generated__binary_framed_pipelined_reordered.pcap" \
	--decode-as 9091=thrift -w "$BB_TMP/t.tr"
# replies come in reverse order: each still pairs with its seqid and method
bad=$(grep -v '^#' "$BB_TMP/t.tr" | awk -F'	' '$2 == "CALL" { m[$5] = $7 } $2 == "RET" && m[$5] != $7 { n++ } END { print n + 0 }')
[ "$bad" = 0 ] || { echo "FAIL thrift: $bad returns with another method than their call"; fail=1; }
echo "$n files checked"
exit $fail

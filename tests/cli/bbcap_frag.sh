#!/bin/sh
# bbcap_frag.sh - real fragmented datagrams: dnsmasq answers dig with a
# 3,000-byte TXT answer over UDP on IPv6 and IPv4, with the server's MTU at
# 1,280 bytes, so its kernel fragments every answer (IPv6 Fragment header;
# IPv4 more-fragments). Captured by tcpdump on a namespace bridge and read by
# bbcap -r (both reassembly engines): every query is paired with its whole
# answer (len= the answer's size), and the fragments are counted. Needs root,
# ip(8), tcpdump, dnsmasq and dig; skips (77) otherwise.
set -u
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (network namespaces)" >&2; exit 77; }
PATH=$PATH:/usr/sbin:/sbin
for t in ip tcpdump dnsmasq dig; do
	command -v $t >/dev/null 2>&1 || { echo "skipped: $t not installed" >&2; exit 77; }
done
mkdir -p "$BB_TMP"
T=$BB_TMP
. "$BB_SRC/tests/cli/netns.sh"
rig_up fr 246
srv=$net.2
srv6=$net6::2
ip -n "$ns_s" link set eth0 mtu 1280

# 12 TXT records of 250 bytes each: about 3,000 bytes of answer.
txt=""
for k in 1 2 3 4 5 6 7 8 9 10 11 12; do
	s=$(printf "%0250d" "$k")
	txt="$txt --txt-record=big.rig.test,$s"
done
# shellcheck disable=SC2086
ip netns exec "$ns_s" dnsmasq -k --no-resolv --no-hosts --listen-address="$srv" \
	--listen-address="$srv6" --bind-interfaces --edns-packet-max=4096 $txt \
	--pid-file="$T/dnsmasq.pid" --user=root 2>"$T/dnsmasq.err" &
pids="$pids $!"
sleep 0.5

tcpdump -i "$br" -w "$T/frag.pcap" -U -s 0 --immediate-mode 2>"$T/tcpdump.err" &
tcpd=$!
pids="$pids $tcpd"
i=0
until [ -s "$T/frag.pcap" ]; do
	i=$((i + 1)); [ $i -gt 50 ] && { echo "FAIL: tcpdump did not start"; cat "$T/tcpdump.err"; exit 1; }; sleep 0.1
done
sleep 0.5
q6=0 q4=0
for k in 1 2 3 4 5; do
	ip netns exec "$ns_c" dig +tries=1 +time=2 +bufsize=4096 +ignore @"$srv6" big.rig.test TXT \
		>"$T/dig6.$k" 2>&1 && grep -q "ANSWER: 12" "$T/dig6.$k" && q6=$((q6 + 1))
	ip netns exec "$ns_c" dig +tries=1 +time=2 +bufsize=4096 +ignore @"$srv" big.rig.test TXT \
		>"$T/dig4.$k" 2>&1 && grep -q "ANSWER: 12" "$T/dig4.$k" && q4=$((q4 + 1))
done
sleep 0.5
kill -INT $tcpd
wait $tcpd
fail=0
[ "$q6" = 5 ] && [ "$q4" = 5 ] || { echo "FAIL: dig got $q6/5 IPv6 and $q4/5 IPv4 whole answers"; cat "$T/dig6.1"; exit 1; }
f6=$(tcpdump -nr "$T/frag.pcap" 'ip6[6] = 44' 2>/dev/null | wc -l)
f4=$(tcpdump -nr "$T/frag.pcap" 'ip[6:2] & 0x3fff != 0' 2>/dev/null | wc -l)
echo "dig: 5 IPv6 and 5 IPv4 answers of 12 TXT records; tcpdump: $f6 IPv6 and $f4 IPv4 fragments"
[ "$f6" -ge 10 ] && [ "$f4" -ge 10 ] || { echo "FAIL: the answers were not fragmented"; exit 1; }

for e in bbcap libnids; do
	"$BB_BIN/bbcap" -v --reassembly=$e -r "$T/frag.pcap" -w "$T/frag.tr" 2>"$T/bbcap.err" ||
		{ echo "FAIL: bbcap ($e)"; cat "$T/bbcap.err"; exit 1; }
	c6=$(grep -c "	CALL	$net6::1	$srv6	.*proto=dns	req=big.rig.test%20TXT" "$T/frag.tr")
	r6=$(grep -c "	RET	$srv6	$net6::1	.*proto=dns	req=big.rig.test%20TXT" "$T/frag.tr")
	c4=$(grep -c "	CALL	$net.1	$srv	.*proto=dns	req=big.rig.test%20TXT" "$T/frag.tr")
	r4=$(grep -c "	RET	$srv	$net.1	.*proto=dns	req=big.rig.test%20TXT" "$T/frag.tr")
	big=$(grep "	RET	.*req=big.rig.test%20TXT" "$T/frag.tr" | sed 's/.*len=//' | sort -n | head -1)
	rebuilt=$(sed -n 's/.*fragments (\([0-9]*\) datagrams rebuilt.*/\1/p' "$T/bbcap.err")
	echo "bbcap ($e): IPv6 $c6/$r6, IPv4 $c4/$r4 pairs, smallest answer $big bytes, $rebuilt datagrams rebuilt"
	[ "$c6" = 5 ] && [ "$r6" = 5 ] && [ "$c4" = 5 ] && [ "$r4" = 5 ] || { echo "FAIL: pairs ($e)"; fail=1; }
	[ "${big:-0}" -gt 3000 ] || { echo "FAIL: answers not whole ($e)"; fail=1; }
	[ "$rebuilt" = 10 ] || { echo "FAIL: $rebuilt datagrams rebuilt, want 10 ($e)"; fail=1; }
done
if command -v tshark >/dev/null 2>&1; then
	# tshark reassembles too: the same 10 answers.
	ts=$(tshark -n -r "$T/frag.pcap" -Y 'dns.flags.response == 1 && dns.qry.name == "big.rig.test"' \
		-T fields -e dns.id 2>/dev/null | grep -c .)
	echo "tshark: $ts answers"
	[ "$ts" = 10 ] || { echo "FAIL: tshark sees $ts answers"; fail=1; }
fi
exit $fail

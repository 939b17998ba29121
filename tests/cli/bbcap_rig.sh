#!/bin/sh
# bbcap_rig.sh - real servers and clients on a network-namespace bridge,
# captured by tcpdump and read back by bbcap -r: dnsmasq answering dig (UDP
# and TCP), rpcbind answering rpcinfo (TCP and UDP). The pairs bbcap finds are
# checked against what the clients did. Needs root, ip(8), tcpdump, dnsmasq,
# dig (dnsutils), rpcbind and rpcinfo; skips (77) otherwise.
set -u
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (network namespaces)" >&2; exit 77; }
PATH=$PATH:/usr/sbin:/sbin
for t in ip tcpdump dnsmasq dig rpcbind rpcinfo; do
	command -v $t >/dev/null 2>&1 || { echo "skipped: $t not installed" >&2; exit 77; }
done
mkdir -p "$BB_TMP"
T=$BB_TMP
. "$BB_SRC/tests/cli/netns.sh"
rig_up rg 214
srv=$net.2

ip netns exec "$ns_s" dnsmasq -k --no-resolv --no-hosts --listen-address="$srv" \
	--bind-interfaces --address=/rig.test/10.9.9.9 --pid-file="$T/dnsmasq.pid" \
	--user=root 2>"$T/dnsmasq.err" &
pids="$pids $!"
ip netns exec "$ns_s" rpcbind -f -w -h "$srv" 2>"$T/rpcbind.err" &
pids="$pids $!"
sleep 0.5

tcpdump -i "$br" -w "$T/rig.pcap" -U -s 0 --immediate-mode 2>"$T/tcpdump.err" &
tcpd=$!
pids="$pids $tcpd"
i=0
until [ -s "$T/rig.pcap" ]; do
	i=$((i + 1)); [ $i -gt 50 ] && { echo "FAIL: tcpdump did not start"; cat "$T/tcpdump.err"; exit 1; }; sleep 0.1
done
sleep 0.5
udp=0 tcp=0
for k in 1 2 3 4 5 6 7 8; do
	ip netns exec "$ns_c" dig +tries=1 +time=2 @"$srv" "h$k.rig.test" A >/dev/null && udp=$((udp + 1))
done
for k in 1 2 3; do
	ip netns exec "$ns_c" dig +tcp +tries=1 +time=2 @"$srv" "t$k.rig.test" A >/dev/null && tcp=$((tcp + 1))
done
ip netns exec "$ns_c" rpcinfo -p "$srv" >"$T/rpcinfo-p.out" 2>&1 || { echo "FAIL: rpcinfo -p"; cat "$T/rpcinfo-p.out"; exit 1; }
ip netns exec "$ns_c" rpcinfo -t "$srv" 100000 2 >/dev/null 2>&1 || { echo "FAIL: rpcinfo -t"; exit 1; }
ip netns exec "$ns_c" rpcinfo -u "$srv" 100000 2 >/dev/null 2>&1 || { echo "FAIL: rpcinfo -u"; exit 1; }
sleep 0.5
kill -INT $tcpd
wait $tcpd

"$BB_BIN/bbcap" -r "$T/rig.pcap" -w "$T/rig.tr" 2>"$T/bbcap.err" || { echo "FAIL: bbcap"; cat "$T/bbcap.err"; exit 1; }
fail=0
dq=$(grep -c "	CALL	$net.1	$srv	.*proto=dns	req=h[0-9].rig.test%20A" "$T/rig.tr")
dr=$(grep -c "	RET	$srv	$net.1	.*proto=dns	req=h[0-9].rig.test%20A" "$T/rig.tr")
tq=$(grep -c "	CALL	.*proto=dns	req=t[0-9].rig.test%20A" "$T/rig.tr")
trr=$(grep -c "	RET	.*proto=dns	req=t[0-9].rig.test%20A" "$T/rig.tr")
echo "dig: $udp UDP and $tcp TCP queries answered; bbcap: UDP $dq/$dr, TCP $tq/$trr"
[ "$dq" = "$udp" ] && [ "$dr" = "$udp" ] && [ "$udp" = 8 ] || { echo "FAIL: dns over UDP"; fail=1; }
[ "$tq" = "$tcp" ] && [ "$trr" = "$tcp" ] && [ "$tcp" = 3 ] || { echo "FAIL: dns over TCP"; fail=1; }
# rpcinfo -p: one DUMP (v2 over TCP, after rpcbind v3/v4 tries); -t/-u: NULL calls
dump=$(grep -c "	RET	.*proto=sunrpc	req=PORTMAPv2.DUMP" "$T/rig.tr")
null=$(grep -c "	RET	.*proto=sunrpc	req=PORTMAPv2.NULL" "$T/rig.tr")
rc=$(grep -c "	CALL	.*proto=sunrpc" "$T/rig.tr")
rr=$(grep -c "	RET	.*proto=sunrpc" "$T/rig.tr")
echo "rpcinfo: DUMP returns $dump, NULL returns $null, sunrpc calls/returns $rc/$rr"
[ "$dump" -ge 1 ] && [ "$null" -ge 2 ] && [ "$rc" = "$rr" ] || { echo "FAIL: sunrpc pairs"; fail=1; }
if command -v tshark >/dev/null 2>&1; then
	# And the counts equal tshark's, the corpus oracle.
	ts=$(tshark -n -r "$T/rig.pcap" -Y rpc -T fields -e rpc.msgtyp 2>/dev/null | tr ';' '\n' | grep -c .)
	[ "$ts" = $((rc + rr)) ] || { echo "FAIL: tshark sees $ts RPC messages, bbcap $((rc + rr))"; fail=1; }
	tsd=$(tshark -n -r "$T/rig.pcap" -Y 'dns' -T fields -e dns.id 2>/dev/null | tr ';' '\n' | grep -c .)
	bd=$(grep -c "proto=dns" "$T/rig.tr")
	[ "$tsd" = "$bd" ] || { echo "FAIL: tshark sees $tsd DNS messages, bbcap $bd"; fail=1; }
fi
grep -v '^#' "$T/rig.tr" | awk -F'\t' '$2 == "CALL" { c[$5] = 1 } $2 == "RET" && !($5 in c) { n++ } END { exit n > 0 }' ||
	{ echo "FAIL: a return without its call"; fail=1; }
exit $fail

# netns.sh - sourced by the tests that run real servers and clients on a Linux
# bridge between two network namespaces (the "mirror port" bbcap captures on).
#
#   rig_up TAG OCTET   makes bridge $br, namespaces $ns_c (client, $net.1 and
#                      $net6::1) and $ns_s (server, $net.2 and $net6::2) on
#                      10.OCTET.x.0/24, and removes them all on exit; skips
#                      the test (77) when no bridge can be made.
#   rig_capture NAME FILTER...  starts bbcap (-> $T/NAME.tr) and tcpdump (->
#                      $T/NAME.pcap) on $br and waits until both write;
#   rig_capture_stop   stops them (SIGINT): bbcap, then tcpdump once its file
#                      holds as many packets; $rc is bbcap's exit status.
#   pids               processes to stop on exit (stopped ones are continued).
#   rig_extra_cleanup  a test may redefine it to stop what is not in $pids.
# Needs $T (the test's scratch directory) and root.

pids=""
rig_extra_cleanup() { :; }

rig_cleanup() {
	rig_extra_cleanup
	for p in $pids; do
		kill -CONT "$p" 2>/dev/null
		kill "$p" 2>/dev/null
	done
	ip netns del "$ns_c" 2>/dev/null
	ip netns del "$ns_s" 2>/dev/null
	ip link del "$br" 2>/dev/null
}

rig_up() {
	id=$$
	br=bb$1$((id % 10000))
	ns_c=bb$1-c-$id
	ns_s=bb$1-s-$id
	net=10.$2.$((id % 200 + 20))
	net6=fd00:bb:$((id % 200 + 20))
	trap rig_cleanup EXIT INT TERM
	if ! ip link add "$br" type bridge 2>"$T/iperr"; then
		echo "skipped: cannot create a bridge: $(cat "$T/iperr")" >&2
		exit 77
	fi
	ip link set "$br" up
	n=1
	for ns in "$ns_c" "$ns_s"; do
		ip netns add "$ns"
		ip link add "v$n$br" type veth peer name eth0 netns "$ns"
		ip link set "v$n$br" master "$br" up
		ip -n "$ns" addr add "$net.$n/24" dev eth0
		ip -n "$ns" addr add "$net6::$n/64" dev eth0 nodad
		ip -n "$ns" link set eth0 up
		ip -n "$ns" link set lo up
		n=$((n + 1))
	done
}

rig_capture() {
	cap_name=$1
	shift
	"$BB_BIN/bbcap" -i "$br" -w "$T/$cap_name.tr" "$@" 2>"$T/bbcap.err" &
	cap=$!
	tcpdump -i "$br" -w "$T/$cap_name.pcap" -U -s 0 -B 65536 "$@" 2>"$T/tcpdump.err" &
	tcpd=$!
	pids="$pids $cap $tcpd"
	i=0
	until grep -qs '^#bbtrace' "$T/$cap_name.tr" "$T/$cap_name.tr".partial.* 2>/dev/null && [ -s "$T/$cap_name.pcap" ]; do
		i=$((i + 1))
		[ $i -gt 50 ] && { echo "FAIL: bbcap or tcpdump did not start"; cat "$T/bbcap.err"; exit 1; }
		sleep 0.1
	done
	sleep 0.5
}

# tcpdump is stopped once its file holds as many packets as bbcap took (at
# most 5 s later): on a loaded machine it lags, and stopped at once it missed
# the last reply of a run (tshark then counted one return fewer than bbcap).
rig_capture_stop() {
	kill -INT $cap
	wait $cap
	rc=$?
	_want=$(sed -n 's/^\([0-9][0-9]*\) packets captured$/\1/p' "$T/bbcap.err" | tail -n 1)
	_i=0
	while [ -n "$_want" ] && [ $_i -lt 50 ] &&
		[ "$(tcpdump -r "$T/$cap_name.pcap" 2>/dev/null | wc -l)" -lt "$_want" ]; do
		_i=$((_i + 1))
		sleep 0.1
	done
	kill -INT $tcpd
	wait $tcpd
}

# netns.sh - sourced by the tests that run real servers and clients on a Linux
# bridge between two network namespaces (the "mirror port" bbcap captures on).
#
#   rig_up TAG OCTET   makes bridge $br, namespaces $ns_c (client, $net.1 and
#                      $net6::1) and $ns_s (server, $net.2 and $net6::2) on
#                      10.OCTET.x.0/24, and removes them all on exit; skips
#                      the test (77) when no bridge can be made.
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

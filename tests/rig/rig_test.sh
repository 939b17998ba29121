#!/bin/sh
# rig_test.sh - the real multi-tier rig (tests/rig/rig.sh), captured live by
# bbcap on the bridge and scored against the services' own true-path logs:
#   - at 1, 8 and 64 clients, whether the 5 most frequent patterns bbnest
#     infers are the 5 most frequent true ones, each count within 5%, with
#     instance and pattern false positives/negatives (score.py nest);
#   - with +50 ms at app2 before its PostgreSQL call for "item" requests (at
#     8 clients), bbnest's call delay of pg in that pattern grows by 50 ms
#     within 10%, no other node's median by more than 5 ms (score.py delay),
#     and bbconv, its paths rooted at memcached, finds a 50 ms delay on
#     app2 -> pg only (score.py conv).
# The load (docs/accuracy.md, "The real multi-tier rig", has the figures):
#   - the arrival rate is held near 25 requests/s at every level (the
#     "render" time of the app tier grows with the clients), and any two
#     requests begin at least RIG_GAP_MS (20) ms apart: a wrong parent wins
#     when a concurrent request began within a call delay (0.1-2 ms, tens of
#     ms when a server is descheduled) before the call, whose chance grows
#     with the rate of requests, not with the number open at once;
#   - the servers run at real-time priority (rig.sh) so that the builds
#     sharing the machine do not stretch those call delays.
# bbnest runs with --penalty 0,2,2 --smooth 2 (RIG_NEST_OPTS): the app tier
# calls redis and pg in parallel, which the default overlap penalty (2,0,0),
# made for nodes that call one child at a time, punishes in the true parent;
# the same-callee and any-child penalties keep a request that has its
# children from taking another's (an nginx request with app2 taking an app1
# call); smoothing lets a true delay that fell between the histogram's dense
# bins (a forwarding stalled for a few ms) still score.
# Needs root, ip(8), ethtool, nginx, redis-server, memcached, dnsmasq,
# PostgreSQL, /usr/bin/python3; skips (77) otherwise. RIG_KEEP=DIR copies the
# traces, logs and results there; RIG_PCAP=1 also keeps tcpdump captures.
set -u
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (network namespaces)" >&2; exit 77; }
PATH=$PATH:/usr/sbin:/sbin
for t in ip ethtool nginx redis-server memcached dnsmasq runuser bash /usr/bin/python3; do
	command -v $t >/dev/null 2>&1 || { echo "skipped: $t not installed" >&2; exit 77; }
done
ls -d /usr/lib/postgresql/*/bin >/dev/null 2>&1 || { echo "skipped: PostgreSQL not installed" >&2; exit 77; }
[ -x "$BB_BIN/bbapp" ] || { echo "FAIL: $BB_BIN/bbapp not built"; exit 1; }
mkdir -p "$BB_TMP"
T=$(cd "$BB_TMP" && pwd)
rm -f "$T"/*.log "$T"/*.tr "$T"/*.json "$T"/*.err "$T"/*.pcap
. "$BB_SRC/tests/rig/rig.sh"
score() { /usr/bin/python3 "$BB_SRC/tests/rig/score.py" "$@"; }
NEST_OPTS=${RIG_NEST_OPTS---penalty 0,2,2 --smooth 2} # set and empty: bbnest's defaults
RIG_GAP_MS=${RIG_GAP_MS:-20}
export RIG_GAP_MS
LEVELS=${RIG_LEVELS:-"1:20:60:500 8:200:440:500 64:2000:3200:500"}
DELAY_RUN=${RIG_DELAY_RUN:-"8:200:440:500"}
# Enforced at every level: no request failed, every request captured (as
# many inferred path instances as requests), the top-5 check (score.py nest),
# the added-delay checks. RIG_LAX=1 prints a failed top-5 check ("NOT MET")
# without failing, to measure other loads or options.
LAX=${RIG_LAX:-}
nest_check() { # NAME CLIENTS
	out=$(score nest "$T/$1.client.log" "$T/$1.json" $logs --label "$1 (c$2): ")
	rc=$?
	echo "$out"
	true_n=$(echo "$out" | sed -n 's/.*: \([0-9]*\) true instances.*/\1/p' | head -n 1)
	inf_n=$(echo "$out" | sed -n 's/.* \([0-9]*\) inferred; patterns.*/\1/p' | head -n 1)
	failed=$(echo "$out" | sed -n 's/.*(\([0-9]*\) requests failed).*/\1/p' | head -n 1)
	[ "$failed" = 0 ] && [ -n "$true_n" ] && [ "$true_n" = "$inf_n" ] ||
		{ echo "FAIL: $1: requests failed or not all captured"; fail=1; }
	if [ $rc -ne 0 ]; then
		if [ -n "$LAX" ]; then
			echo "NOT MET: $1 (c$2): the top-5 patterns within 5% (RIG_LAX: not enforced)"
		else
			echo "FAIL: $1 (c$2): the top-5 patterns within 5%"
			fail=1
		fi
	fi
}
QUANTUM=${RIG_QUANTUM:-0.001}
# bbconv's paths start at memcached (RIG_CONV_OPTS): the added delay (before
# app2's pg call) is then four edges down instead of nine from the client. On
# the way down each correlation keeps fewer of the item/app2 requests (about 40
# of 500), and the 20 ms request pacing puts spikes at 20, 40 and 60 ms on the
# upper edges: rooted at the client, 3 of 6 kept delay runs missed it at -q
# 0.001 (and 4 of 18 runs at other quanta); rooted at memcached, 0 of 18
# (docs/accuracy.md, "The real multi-tier rig").
CONV_OPTS=${RIG_CONV_OPTS---root memcached}

rig_up 240
rig_servers || exit 1
echo "rig: bbnest ${NEST_OPTS:-(defaults)}; requests at least $RIG_GAP_MS ms apart;" \
	"servers ${rig_rt:-at normal priority}"
fail=0
logs="$T/app1.log $T/app2.log $T/auth.log"
for lv in $LEVELS; do
	IFS=: read -r c rmin rmax nreq <<EOF
$lv
EOF
	rig_apps "$rmin:$rmax" || exit 1
	RIG_RAMP_MS=$(((rmin + rmax) / 2)) rig_run "c$c" "$c" "$nreq" || exit 1
	# shellcheck disable=SC2086
	"$BB_BIN/bbnest" -q --json --no-bins $NEST_OPTS "$T/c$c.tr" >"$T/c$c.json" ||
		{ echo "FAIL: bbnest c$c"; exit 1; }
	nest_check "c$c" "$c"
done

# the added delay: the normal run and the delayed one at the same level
IFS=: read -r c rmin rmax nreq <<EOF
$DELAY_RUN
EOF
for run in normal delay; do
	d=""
	[ $run = delay ] && d="item:pg:50"
	rig_apps "$rmin:$rmax" $d || exit 1
	RIG_RAMP_MS=$(((rmin + rmax) / 2)) rig_run "$run" "$c" "$nreq" || exit 1
	# shellcheck disable=SC2086
	"$BB_BIN/bbnest" -q --json --no-bins $NEST_OPTS "$T/$run.tr" >"$T/$run.json" ||
		{ echo "FAIL: bbnest $run"; exit 1; }
	# shellcheck disable=SC2086
	"$BB_BIN/bbconv" -Q "$QUANTUM" --max-delay 1 $CONV_OPTS --json "$T/$run.tr" >"$T/$run.conv.json" ||
		{ echo "FAIL: bbconv $run"; exit 1; }
	nest_check "$run" "$c"
done
score delay "$T/normal.json" "$T/delay.json" "$T/delay.client.log" $logs \
	--type item --via app2 --node pg --ms 50 || fail=1
score conv "$T/normal.conv.json" "$T/delay.conv.json" --from app2 --to pg --ms 50 || fail=1
if [ -n "${RIG_KEEP:-}" ]; then
	mkdir -p "$RIG_KEEP"
	cp "$T"/*.tr "$T"/*.json "$T"/*.log "$T/hosts" "$RIG_KEEP"/
	[ -n "${RIG_PCAP:-}" ] && cp "$T"/*.pcap "$RIG_KEEP"/
fi
exit $fail

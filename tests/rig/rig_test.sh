#!/bin/sh
# rig_test.sh - the real multi-tier rig (tests/rig/rig.sh) at the load users
# really have, captured live by bbcap on the bridge and scored against the
# services' own true-path logs (tests/rig/README.md: how to run it, and every
# variable below).
#
# Levels (RIG_LEVELS), each an open loop (bbapp load --rate): requests arrive
# at Poisson times, or in page views of 3-5 requests fired at once (the page
# views at Poisson times), over a bounded pool of keep-alive connections; the
# rates are chosen so that about 8 or 64 requests are in flight on average
# (the load prints the mean it measured). No pacing between requests, the
# servers at normal priority. Then the normal/+50 ms pair at the first level:
# +50 ms at app2 before its PostgreSQL call for "item" requests.
#
# Every run is scored (score.py nest --brief) with several bbnest option sets:
# RIG_NEST_OPTS (default: bbnest's defaults; the one enforced), the defaults,
# "--penalty 0,2,2 --smooth 2", "--return-score --global" and $BBNEST_OPTS if
# set; each also with --no-content when bbnest --help has it (content tokens
# and context headers ignored). A row: the share of true path instances not
# inferred (bbnest --truth's instance false negatives / true instances), the
# worst count error among the 5 most frequent true patterns, and "met" or
# "NOT MET".
#
# Enforced, for RIG_NEST_OPTS only (the issue's targets; RIG_LAX=1 prints
# "NOT MET" without failing): no request failed and every request captured;
# at every level at most RIG_MAX_WRONG (0.02) of the instances wrong and the
# top-5 true patterns the top-5 inferred, each count within RIG_TOP_TOL
# (0.05); the +50 ms found on app2's pg call within RIG_DELAY_TOL (0.10) and
# no other node's median call delay moved by more than RIG_OTHER_MS (2) ms
# (score.py delay); bbconv, rooted at memcached, finds 50 ms on app2 -> pg
# only (score.py conv).
#
# The paced rig of docs/accuracy.md ("The real multi-tier rig") is
# RIG_GAP_MS=20 RIG_RT=1 with closed-loop levels (README.md).
# Needs root, ip(8), ethtool, nginx, redis-server, memcached, dnsmasq,
# PostgreSQL, /usr/bin/python3; skips (77) otherwise. RIG_KEEP=DIR copies the
# traces, logs and results there; RIG_PCAP=1 also keeps tcpdump captures.
set -u
. "$BB_SRC/tests/rig/rigtest.sh"
rig_prelude nginx dnsmasq
. "$BB_SRC/tests/rig/rig.sh"
# NAME:CONNECTIONS:RENDER_MIN_MS:RENDER_MAX_MS:RATE:REQUESTS; NAME starting
# with poisson or burst (3-5 requests a page view) is an open loop at RATE
# requests/s over CONNECTIONS connections, anything else a closed loop of
# CONNECTIONS clients (RATE unused; RIG_GAP_MS paces it).
LEVELS=${RIG_LEVELS:-"poisson-8:16:50:150:100:800 burst-8:16:50:150:100:800 poisson-64:96:150:450:285:1600 burst-64:96:150:450:285:1600"}
DELAY_RUN=${RIG_DELAY_RUN:-"poisson-8:16:50:150:100:800"}
DELAY_SPEC=item:pg:50
QUANTUM=${RIG_QUANTUM:-0.001}
# bbconv's paths start at memcached: the added delay (before app2's pg call)
# is then four edges down instead of nine from the client (docs/accuracy.md,
# "The real multi-tier rig").
CONV_OPTS=${RIG_CONV_OPTS---root memcached}
logs="$T/app1.log $T/app2.log $T/auth.log"

# run_level SPEC [DELAY]: restarts the apps with the level's render time
# (and the added delay), runs the load, captures it as $T/NAME.tr
run_level() {
	IFS=: read -r lname conns rmin rmax lrate nreq <<EOF
$1
EOF
	rig_apps "$rmin:$rmax" $2 || exit 1
	case $lname in
	poisson*) RIG_LOAD_ARGS="--rate $lrate" RIG_RAMP_MS=0 rig_run "$3" "$conns" "$nreq" || exit 1 ;;
	burst*) RIG_LOAD_ARGS="--rate $lrate --burst 3:5" RIG_RAMP_MS=0 rig_run "$3" "$conns" "$nreq" || exit 1 ;;
	*) RIG_LOAD_ARGS="" RIG_RAMP_MS=$(((rmin + rmax) / 2)) rig_run "$3" "$conns" "$nreq" || exit 1 ;;
	esac
}

# bbconv on each run of the added-delay pair
after_run() {
	# shellcheck disable=SC2086
	"$BB_BIN/bbconv" -Q "$QUANTUM" --max-delay 1 $CONV_OPTS --json "$T/$1.tr" >"$T/$1.conv.json" ||
		{ echo "FAIL: bbconv $1"; exit 1; }
}

rig_up 240
rig_servers || exit 1
run_all rig
# shellcheck disable=SC2086
delay_rows "$T/delay.client.log" $logs --type item --via app2 --node pg --ms 50
score conv "$T/normal.conv.json" "$T/delay.conv.json" --from app2 --to pg --ms 50 ||
	enforce "bbconv ${CONV_OPTS}: the added 50 ms on app2 -> pg only"
rig_keep
exit $fail

#!/bin/sh
# rig2_test.sh - the second app on the rig, of another shape than the first
# (tests/rig/README.md, "The second app"): client -> front (HTTP, a fixed pool
# of worker threads) -> redis, memcached, PostgreSQL and search (HTTP, its own
# worker pool; -> memcached, PostgreSQL), keep-alive connection pools between
# the tiers, opened before the capture. No request id on the wire: requests
# carry a user id, an item id and a search term drawn from small sets, which
# repeat across requests; the services log each request by its connection and
# its order on it, and score.py joins those logs (with the trace, for the
# path= of every record) into the true paths.
#
# The same loads, option sets, table and targets as rig_test.sh (rigtest.sh):
# poisson-8, burst-8, poisson-64, burst-64, then the normal/+50 ms pair at
# poisson-8 (+50 ms at the front end before its PostgreSQL call of an item
# page). Levels: NAME:CONNECTIONS:RENDER_MIN:RENDER_MAX:RATE:REQUESTS:WORKERS,
# WORKERS the front end's pool (the search service has RIG2_SEARCH_WORKERS, 8).
# Needs root, ip(8), ethtool, redis-server, memcached, PostgreSQL,
# /usr/bin/python3; skips (77) otherwise. RIG_KEEP=DIR keeps the runs.
set -u
. "$BB_SRC/tests/rig/rigtest.sh"
rig_prelude
RIG_NODES="client front search redis memcached pg"
RIG_ENTRY=front:8000
RIG_MIX=${RIG2_MIX:-home=40,search=35,item=25}
RIG_LOAD_FLAGS=--conn-log
. "$BB_SRC/tests/rig/rig.sh"
LEVELS=${RIG2_LEVELS:-"poisson-8:16:50:150:80:800:12 burst-8:16:50:150:80:800:12 poisson-64:96:150:450:210:1600:80 burst-64:96:150:450:210:1600:80"}
DELAY_RUN=${RIG2_DELAY_RUN:-"poisson-8:16:50:150:80:800:12"}
DELAY_SPEC=item:pg:50
SEARCH_WORKERS=${RIG2_SEARCH_WORKERS:-8}
logs="$T/front.log $T/search.log"
front_pid=""

# front_up RENDER WORKERS [DELAY]: (re)starts the front end; its pools open now
front_up() {
	if [ -n "$front_pid" ]; then
		kill "$front_pid" 2>/dev/null
		wait "$front_pid" 2>/dev/null
	fi
	d=""
	[ -n "${3:-}" ] && d="--delay $3"
	# shellcheck disable=SC2086
	ip netns exec "$(ns front)" $rig_rt "$BB_BIN/bbapp" serve --name front --listen "$(ip_of front):8000" \
		--config "$BB_SRC/tests/rig/front.conf" --log "$T/front.log" --pool 16 --conn-log \
		--workers "$2" --render "$1" --backend "search=http@$(ip_of search):8000" \
		--backend "redis=redis@$(ip_of redis):6379" --backend "memcached=memcached@$(ip_of memcached):11211" \
		--backend "pg=pg@$(ip_of pg):5432" $d 2>>"$T/front.err" &
	front_pid=$!
	rig_pids="$rig_pids $front_pid"
	wait_tcp front 8000 front || return 1
	kill -0 "$front_pid" 2>/dev/null || { echo "FAIL: front did not start: $(tail -n 1 "$T/front.err")"; return 1; }
}

run_level() { # SPEC DELAY NAME
	IFS=: read -r lname conns rmin rmax lrate nreq workers <<EOF2
$1
EOF2
	front_up "$rmin:$rmax" "$workers" "$2" || exit 1
	case $lname in
	burst*) RIG_LOAD_ARGS="--rate $lrate --burst 3:5" rig_run "$3" "$conns" "$nreq" || exit 1 ;;
	*) RIG_LOAD_ARGS="--rate $lrate" rig_run "$3" "$conns" "$nreq" || exit 1 ;;
	esac
	# the true path of every record of the trace, from the logs (path=)
	score join "$T/$3.tr" "$T/hosts" "$T/$3.client.log" $logs >"$T/$3.path.tr" ||
		{ echo "FAIL: $3: the logs do not join the trace"; fail=1; }
}

rig_up 241
rig_stores || exit 1
# shellcheck disable=SC2086
ip netns exec "$(ns search)" $rig_rt "$BB_BIN/bbapp" serve --name search --listen "$(ip_of search):8000" \
	--config "$BB_SRC/tests/rig/search.conf" --log "$T/search.log" --pool 16 --conn-log \
	--workers "$SEARCH_WORKERS" --render 1:4 --backend "memcached=memcached@$(ip_of memcached):11211" \
	--backend "pg=pg@$(ip_of pg):5432" 2>"$T/search.err" &
rig_pids="$rig_pids $!"
wait_tcp search 8000 search || exit 1
run_all rig2
# shellcheck disable=SC2086
delay_rows "$T/delay.client.log" $logs --type item --via front --node pg --ms 50
rig_keep
exit $fail

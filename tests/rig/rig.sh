# rig.sh - sourced: a small data centre in network namespaces on one bridge.
#
#   rig_up OCTET       bridge $br (promiscuous: the mirror port) and one
#                      namespace per node on 10.OCTET.x.0/24: client .1,
#                      nginx .2, app1 .3, app2 .4, auth .5, redis .6,
#                      memcached .7, pg .8, dns .9; writes $T/hosts for
#                      bbcap --names. Everything made is removed on exit.
#   rig_stores         starts redis, memcached, PostgreSQL (and dnsmasq when
#                      RIG_NODES has dns): the stores both apps use
#   rig_servers        starts redis, memcached, PostgreSQL, dnsmasq, auth,
#                      app1, app2 (bbapp) and nginx; the backend pools are
#                      opened here, before any capture.
#   rig_apps RENDER [DELAY]
#                      (re)starts app1 and app2 with bbapp --render RENDER,
#                      app2 with --delay DELAY if given.
#   rig_run NAME CLIENTS REQUESTS   ($RIG_LOAD_FLAGS: bbapp load options for
#                      the warm-up too; $RIG_LOAD_ARGS: more bbapp load options,
#                      e.g. "--rate 90 --burst 3:5", an open loop over a pool
#                      of CLIENTS connections; $RIG_RAMP_MS spreads closed-loop
#                      clients' starts, $RIG_GAP_MS spaces any two requests'
#                      starts: the paced rig, off by default)
#                      warms the nginx upstream connections up (not
#                      captured), starts bbcap on the bridge (and tcpdump when
#                      $RIG_PCAP is set), runs the load, stops the capture:
#                      $T/NAME.tr, $T/NAME.client.log, $T/NAME.pcap,
#                      $T/NAME.load (the load's summary: rate, in flight).
# Needs $T (scratch directory, absolute), $BB_BIN, $BB_SRC and root.
#
# RIG_RT=1 runs the servers and the load client under the lowest real-time
# priority (chrt -f 1) when the kernel allows it: on a machine shared with
# builds, a server descheduled for tens of milliseconds between a request's
# arrival and its calls lets other requests arrive in between. Users' servers
# run at normal priority, so that is the default (docs/accuracy.md, "The rig
# at real load"); RIG_RT=1 with RIG_GAP_MS=20 is the paced rig of "The real
# multi-tier rig".

RIG_NODES=${RIG_NODES:-"client nginx app1 app2 auth redis memcached pg dns"}
RIG_ENTRY=${RIG_ENTRY:-nginx:80} # NODE:PORT the load client sends to
RIG_MIX=${RIG_MIX:-cart=45,item=25,static=20,login=6,lookup=4}
RIG_RENDER=${RIG_RENDER:-50:150}
rig_pids=""
rig_rt="" # the servers' priority (see above); unquoted where used
if [ "${RIG_RT:-0}" != 0 ] && chrt -f 1 true 2>/dev/null; then
	rig_rt="chrt -f 1"
fi
rig_pgdata=""

rig_cleanup() {
	for p in $rig_pids; do
		kill -CONT "$p" 2>/dev/null
		kill "$p" 2>/dev/null
	done
	if [ -n "$rig_pgdata" ] && [ -f "$rig_pgdata/postmaster.pid" ]; then
		kill "$(head -n 1 "$rig_pgdata/postmaster.pid")" 2>/dev/null
		sleep 0.5
	fi
	[ -s "$T/nginx.pid" ] && kill "$(cat "$T/nginx.pid" 2>/dev/null)" 2>/dev/null
	for n in $RIG_NODES; do
		ip netns del "bbrig-$n-$rig_id" 2>/dev/null
	done
	ip link del "$br" 2>/dev/null
	[ -n "$rig_pgdata" ] && rm -rf "$rig_pgdata"
	return 0
}

# ns NODE: the namespace of NODE; ip_of NODE: its address.
ns() { echo "bbrig-$1-$rig_id"; }
ip_of() {
	_i=1
	for _n in $RIG_NODES; do
		[ "$_n" = "$1" ] && { echo "$net.$_i"; return; }
		_i=$((_i + 1))
	done
}
in_ns() { _ns=$(ns "$1"); shift; ip netns exec "$_ns" "$@"; }
# Servers are started as `ip netns exec NS $rig_rt CMD &`, never through a
# shell function: $! must be the server's own PID (ip and chrt exec it).

rig_up() {
	rig_id=$$
	br=bbrig$((rig_id % 100000))
	net=10.$1.$((rig_id % 200 + 20))
	trap rig_cleanup EXIT
	trap 'exit 1' INT TERM
	if ! ip link add "$br" type bridge 2>"$T/iperr"; then
		echo "skipped: cannot create a bridge: $(cat "$T/iperr")" >&2
		exit 77
	fi
	ip link set "$br" promisc on up
	: >"$T/hosts"
	i=1
	for n in $RIG_NODES; do
		ip netns add "$(ns "$n")"
		ip link add "v$i$br" type veth peer name eth0 netns "$(ns "$n")"
		ip link set "v$i$br" master "$br" up
		in_ns "$n" ip addr add "$net.$i/24" dev eth0
		in_ns "$n" ip link set eth0 up
		in_ns "$n" ip link set lo up
		# ordinary frames on the mirror port: no partial checksums, no super-frames
		in_ns "$n" ethtool -K eth0 tx off tso off gso off >/dev/null 2>&1
		echo "$net.$i $n" >>"$T/hosts"
		i=$((i + 1))
	done
}

# wait_tcp NODE PORT WHAT: until something listens there (10 s)
wait_tcp() {
	k=0
	until in_ns client bash -c "exec 3<>/dev/tcp/$(ip_of "$1")/$2" 2>/dev/null; do
		k=$((k + 1))
		[ $k -gt 100 ] && { echo "FAIL: $3 did not start"; return 1; }
		sleep 0.1
	done
}

rig_backends() {
	echo "--backend auth=http@$(ip_of auth):8000 --backend redis=redis@$(ip_of redis):6379" \
		"--backend memcached=memcached@$(ip_of memcached):11211" \
		"--backend pg=pg@$(ip_of pg):5432 --backend dns=dns@$(ip_of dns):53"
}

# rig_apps RENDER [DELAY]: (re)starts app1 and app2 with bbapp --render
# RENDER, and app2 with --delay DELAY if given; their pools open now.
rig_apps() {
	for p in ${app_pids:-}; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	app_pids=""
	for a in app1 app2; do
		d=""
		[ $a = app2 ] && [ -n "${2:-}" ] && d="--delay $2"
		# shellcheck disable=SC2046,SC2086
		ip netns exec "$(ns $a)" $rig_rt "$BB_BIN/bbapp" serve --name $a --listen "$(ip_of $a):8000" \
			--config "$BB_SRC/tests/rig/app.conf" --log "$T/$a.log" --pool 16 \
			--render "$1" $(rig_backends) $d 2>>"$T/$a.err" &
		app_pids="$app_pids $!"
		rig_pids="$rig_pids $!"
	done
	wait_tcp app1 8000 app1 && wait_tcp app2 8000 app2 || return 1
	# the listener found must be the new one, not a survivor of the last
	for p in $app_pids; do
		kill -0 "$p" 2>/dev/null ||
			{ echo "FAIL: bbapp (pid $p) did not start: $(tail -n 1 "$T/app1.err" "$T/app2.err")"; return 1; }
	done
}

# rig_stores: redis, memcached, PostgreSQL, and dnsmasq when there is a dns node
rig_stores() {
	# shellcheck disable=SC2086
	ip netns exec "$(ns redis)" $rig_rt redis-server --bind "$(ip_of redis)" --port 6379 --protected-mode no \
		--daemonize no --save '' --appendonly no --logfile "$T/redis.log" &
	rig_pids="$rig_pids $!"
	# shellcheck disable=SC2086
	ip netns exec "$(ns memcached)" $rig_rt memcached -l "$(ip_of memcached)" -p 11211 -U 0 -u root -t 2 \
		2>"$T/memcached.err" &
	rig_pids="$rig_pids $!"
	case " $RIG_NODES " in
	*" dns "*)
	# shellcheck disable=SC2086
	ip netns exec "$(ns dns)" $rig_rt dnsmasq -k --no-resolv --no-hosts --listen-address="$(ip_of dns)" \
		--bind-interfaces --address=/rig.test/10.9.9.9 --pid-file="$T/dnsmasq.pid" \
		--user=root --cache-size=0 2>"$T/dnsmasq.err" &
	rig_pids="$rig_pids $!"
	;;
	esac
	pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
	rig_pgdata=$(mktemp -d)
	chown postgres "$rig_pgdata"
	runuser -u postgres -- "$pgbin/initdb" -D "$rig_pgdata/db" -A trust -U postgres \
		>"$T/initdb.log" 2>&1 || { echo "FAIL: initdb"; cat "$T/initdb.log"; return 1; }
	echo "host all all $net.0/24 trust" >>"$rig_pgdata/db/pg_hba.conf"
	# shellcheck disable=SC2086
	ip netns exec "$(ns pg)" $rig_rt runuser -u postgres -- "$pgbin/pg_ctl" -D "$rig_pgdata/db" -l "$rig_pgdata/pg.log" \
		-o "-c listen_addresses=$(ip_of pg) -k $rig_pgdata -c fsync=off" -w start \
		>"$T/pg_ctl.log" 2>&1 || { echo "FAIL: pg_ctl"; cat "$T/pg_ctl.log" "$rig_pgdata/pg.log"; return 1; }
	wait_tcp redis 6379 redis || return 1
	wait_tcp memcached 11211 memcached || return 1
}

rig_servers() {
	rig_stores || return 1
	# shellcheck disable=SC2086
	ip netns exec "$(ns auth)" $rig_rt "$BB_BIN/bbapp" serve --name auth --listen "$(ip_of auth):8000" \
		--config "$BB_SRC/tests/rig/auth.conf" --log "$T/auth.log" --pool 16 \
		$(rig_backends | sed 's/--backend auth=[^ ]*//') 2>"$T/auth.err" &
	rig_pids="$rig_pids $!"
	wait_tcp auth 8000 auth || return 1
	rig_apps "$RIG_RENDER" || return 1
	mkdir -p "$T/ngx"
	cat >"$T/nginx.conf" <<NGEOF
worker_processes 1;
pid $T/nginx.pid;
error_log $T/nginx-error.log;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $T/ngx;
	proxy_temp_path $T/ngx;
	fastcgi_temp_path $T/ngx;
	uwsgi_temp_path $T/ngx;
	scgi_temp_path $T/ngx;
	keepalive_requests 1000000;
	upstream apps {
		server $(ip_of app1):8000 weight=2;
		server $(ip_of app2):8000;
		keepalive 128;
		keepalive_requests 1000000;
	}
	server {
		listen $(ip_of nginx):80;
		location /static { default_type text/plain; return 200 "static\n"; }
		location / {
			proxy_pass http://apps;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
		}
	}
}
NGEOF
	in_ns nginx nginx -t -c "$T/nginx.conf" >"$T/nginx-t.log" 2>&1 ||
		{ echo "skipped: nginx -t failed: $(cat "$T/nginx-t.log")" >&2; exit 77; }
	# shellcheck disable=SC2086
	ip netns exec "$(ns nginx)" $rig_rt nginx -c "$T/nginx.conf" -g 'daemon off;' &
	rig_pids="$rig_pids $!"
	wait_tcp nginx 80 nginx
}

rig_load() { # NAME CLIENTS REQUESTS LOG [RAMP_MS [MORE OPTIONS]]
	_n=$1 _c=$2 _r=$3 _l=$4 _ramp=${5:-0}
	shift 4
	[ $# -gt 0 ] && shift
	# shellcheck disable=SC2086
	ip netns exec "$(ns client)" $rig_rt "$BB_BIN/bbapp" load --target "$(ip_of "${RIG_ENTRY%:*}"):${RIG_ENTRY#*:}" --clients "$_c" \
		--requests "$_r" --mix "$RIG_MIX" --seed "$_c" --id "$_n" --log "$_l" --ramp "$_ramp" \
		--gap "${RIG_GAP_MS:-0}" "$@"
}

rig_run() {
	name=$1 clients=$2 requests=$3
	# warm-up: nginx opens its upstream keep-alive connections now, so the
	# capture picks them up mid-stream, like the app tier's pools
	# shellcheck disable=SC2086
	rig_load "$name-w" "$clients" "$clients" "$T/warmup.log" 0 ${RIG_LOAD_FLAGS:-} >/dev/null ||
		{ echo "FAIL: warm-up load"; return 1; }
	if [ -n "${RIG_PCAP:-}" ]; then
		tcpdump -i "$br" --time-stamp-precision=nano -w "$T/$name.pcap" -s 0 -B 32768 2>"$T/$name.tcpdump.err" &
		tcpd=$!
		rig_pids="$rig_pids $tcpd"
	fi
	"$BB_BIN/bbcap" -i "$br" -w "$T/$name.tr" --names "$T/hosts" 2>"$T/$name.bbcap.err" &
	cap=$!
	rig_pids="$rig_pids $cap"
	k=0
	until grep -qs '^#bbtrace' "$T/$name.tr".partial.* 2>/dev/null; do
		k=$((k + 1))
		[ $k -gt 100 ] && { echo "FAIL: bbcap did not start"; cat "$T/$name.bbcap.err"; return 1; }
		sleep 0.1
	done
	sleep 0.5
	start=$(date +%s.%N)
	# shellcheck disable=SC2086
	rig_load "$name" "$clients" "$requests" "$T/$name.client.log" "${RIG_RAMP_MS:-0}" \
		${RIG_LOAD_FLAGS:-} ${RIG_LOAD_ARGS:-} >"$T/$name.load" ||
		{ echo "FAIL: load $name"; cat "$T/$name.load"; return 1; }
	end=$(date +%s.%N)
	sleep 0.5
	kill -INT $cap
	wait $cap || { echo "FAIL: bbcap exit status"; cat "$T/$name.bbcap.err"; return 1; }
	if [ -n "${RIG_PCAP:-}" ]; then
		kill -INT $tcpd
		wait $tcpd
	fi
	echo "$name: $clients clients, $requests requests in $(awk "BEGIN { printf \"%.2f\", $end - $start }") s;" \
		"bbcap: $(sed -n 's/^\([0-9]*\) packets captured$/\1/p' "$T/$name.bbcap.err") packets," \
		"$(sed -n 's/^\([0-9]*\) packets dropped by kernel$/\1/p' "$T/$name.bbcap.err") dropped," \
		"$(grep -c '	CALL	' "$T/$name.tr") calls"
	sed "s/^load: /  /" "$T/$name.load"
}

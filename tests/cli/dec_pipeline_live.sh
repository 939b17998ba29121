#!/bin/sh
# dec_pipeline_live.sh - deep pipelines to real servers on a namespace bridge,
# bbcap live on the bridge (stopped by SIGINT): nginx (HTTP/1.1), redis,
# memcached (text), PostgreSQL 15 (extended protocol, a Sync per query, as
# libpq's pipeline mode) and MariaDB (COM_QUERY, COM_PING), each on one
# connection per depth 1, 16, 17, 100, 1,025 and 5,000 (tests/cli/
# dec_pipeline_client.py writes the calls back to back before reading a reply).
# Every reply must pair with its own call (its id and req=, in order; none
# unmatched), and the memcached connection picked up mid-stream must pair its
# first reply, a bare END. With BB_PIPELINE_KEEP=DIR the tcpdump of the run is
# copied there (tests/fixtures/pipeline/ was made so). Needs root, ip(8),
# nginx, redis-server, memcached, mariadbd, PostgreSQL, tcpdump; skips (77)
# otherwise.
set -u
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (network namespaces)" >&2; exit 77; }
PATH=$PATH:/usr/sbin:/sbin
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$pgbin" ] && PATH=$pgbin:$PATH
for t in ip nginx redis-server memcached mariadbd mariadb-install-db mariadb initdb postgres \
	setpriv tcpdump; do
	command -v $t >/dev/null 2>&1 || { echo "skipped: $t not installed" >&2; exit 77; }
done
id postgres >/dev/null 2>&1 || { echo "skipped: no postgres user" >&2; exit 77; }
mkdir -p "$BB_TMP"
T=$(cd "$BB_TMP" && pwd)
rm -rf "$T/db" "$T/tmp"
mkdir -p "$T/tmp"
PGD=$(mktemp -d) # the postgres user's: outside the build tree
chown postgres: "$PGD"
. "$BB_SRC/tests/cli/netns.sh"
pg=""
rig_extra_cleanup() {
	[ -s "$T/nginx.pid" ] && kill "$(cat "$T/nginx.pid" 2>/dev/null)" 2>/dev/null
	[ -n "$pg" ] && kill -INT "$pg" 2>/dev/null && sleep 0.5
	rm -rf "$PGD"
}
rig_up pl 227
srv=$net.2
# Not a function for the servers: $! must be the server's own process (ip
# netns exec execs it), which the client stops and continues.
S="ip netns exec $ns_s"
C() { ip netns exec "$ns_c" "$@"; }

cat >"$T/nginx.conf" <<NGEOF
worker_processes 1;
pid $T/nginx.pid;
error_log $T/nginx.err;
events { worker_connections 64; }
http {
	access_log off;
	server_tokens off;
$(for t in client_body proxy fastcgi uwsgi scgi; do printf '\t%s_temp_path %s;\n' $t "$T/tmp"; done)
	keepalive_requests 100000;
	server {
		listen $srv:80;
		location / { return 204; }
	}
}
NGEOF
$S nginx -t -c "$T/nginx.conf" >"$T/nginx-t.log" 2>&1 || { echo "skipped: nginx -t failed: $(cat "$T/nginx-t.log")" >&2; exit 77; }
$S nginx -c "$T/nginx.conf" -g 'daemon off;' &
ngx=$!
pids="$pids $ngx"
$S redis-server --bind "$srv" --port 6379 --save '' --appendonly no --protected-mode no \
	--dir "$T" --logfile "$T/redis.log" &
rds=$!
pids="$pids $rds"
$S memcached -u root -l "$srv" -p 11211 &
mc=$!
pids="$pids $mc"
mariadb-install-db --no-defaults --user=root --datadir="$T/db" --auth-root-authentication-method=socket \
	>"$T/install.log" 2>&1 || { echo "FAIL: mariadb-install-db"; tail -5 "$T/install.log"; exit 1; }
$S mariadbd --no-defaults --user=root --datadir="$T/db" --bind-address="$srv" --port=3306 \
	--socket="$T/my.sock" --pid-file="$T/my.pid" --skip-log-bin --innodb-buffer-pool-size=16M \
	--log-error="$T/mariadbd.err" 2>"$T/mariadbd.out" &
my=$!
pids="$pids $my"
setpriv --reuid=postgres --regid=postgres --init-groups initdb -D "$PGD/data" -A trust -U postgres \
	>"$T/initdb.log" 2>&1 || { echo "FAIL: initdb"; tail -5 "$T/initdb.log"; exit 1; }
echo "host all all $net.0/24 trust" >>"$PGD/data/pg_hba.conf"
$S setpriv --reuid=postgres --regid=postgres --init-groups \
	postgres -D "$PGD/data" -h "$srv" -p 5432 -k "$PGD" -c fsync=off >"$T/postgres.log" 2>&1 &
pg=$!
i=0
until mariadb --no-defaults -S "$T/my.sock" -u root -e "CREATE USER bb@'%'; GRANT ALL ON *.* TO bb@'%'" 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 150 ] && { echo "FAIL: mariadbd did not start"; tail -5 "$T/mariadbd.err"; exit 1; }; sleep 0.1
done
i=0
until C /usr/bin/python3 -c "import socket
for p in 80, 6379, 11211, 5432: socket.create_connection(('$srv', p)).close()" 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 100 ] && { echo "FAIL: servers did not start"; exit 1; }; sleep 0.1
done
# The process that reads nginx's connections: its worker.
wrk=""
i=0
until [ -n "$wrk" ]; do
	wrk=$(ps -o pid= --ppid "$ngx" | head -n 1 | tr -d ' ')
	[ -n "$wrk" ] && break
	i=$((i + 1)); [ $i -gt 50 ] && { echo "FAIL: no nginx worker"; exit 1; }; sleep 0.1
done

# The client opens its mid-stream memcached connection, then waits.
mkfifo "$T/go"
C /usr/bin/python3 "$BB_SRC/tests/cli/dec_pipeline_client.py" "$srv" "$wrk" "$rds" "$mc" "$my" \
	1 16 17 100 1025 5000 <"$T/go" >"$T/client.out" 2>&1 &
client=$!
pids="$pids $client"
exec 3>"$T/go"
i=0
until grep -q READY "$T/client.out"; do
	i=$((i + 1)); [ $i -gt 100 ] && { echo "FAIL: client did not start"; cat "$T/client.out"; exit 1; }; sleep 0.1
done

rig_capture live tcp and '(' port 80 or port 6379 or port 11211 or port 5432 or port 3306 ')'
echo go >&3
exec 3>&-
fail=0
wait $client || { echo "FAIL: client"; cat "$T/client.out"; fail=1; }
sleep 0.5
rig_capture_stop
[ $rc -eq 0 ] || { echo "FAIL: bbcap exit $rc"; cat "$T/bbcap.err"; fail=1; }
if [ -n "${BB_PIPELINE_KEEP:-}" ]; then
	mkdir -p "$BB_PIPELINE_KEEP"
	cp "$T/live.pcap" "$BB_PIPELINE_KEEP/" && echo "kept $BB_PIPELINE_KEEP/live.pcap"
fi
sh "$BB_SRC/tests/cli/dec_pipeline_verify.sh" "$T/live.tr" || fail=1
exit $fail

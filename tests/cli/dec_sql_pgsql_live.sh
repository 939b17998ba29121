#!/bin/sh
# dec_sql_pgsql_live.sh - PostgreSQL 15 answering psql and pgbench on a
# namespace bridge, bbcap live on the bridge (stopped by SIGINT): every
# statement the clients sent appears as a CALL/RET pair with the right req=,
# for the simple protocol (psql, pgbench -M simple), the extended one
# (pgbench -M extended: Parse/Bind/Describe/Execute/Sync) and named prepared
# statements (pgbench -M prepared: Bind of P0_n), with SSL negotiation
# (psql's SSLRequest answered 'N') and COPY (pgbench -i, psql \copy). A
# tcpdump of the same traffic is counted by tshark (ORACLE.md) too: bbcap's
# totals must equal it. Needs root, ip(8), PostgreSQL (initdb, postgres,
# psql, pgbench); skips (77) otherwise.
set -u
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (network namespaces)" >&2; exit 77; }
PATH=$PATH:/usr/sbin:/sbin
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$pgbin" ] && PATH=$pgbin:$PATH
for t in ip initdb postgres psql pgbench setpriv; do
	command -v $t >/dev/null 2>&1 || { echo "skipped: $t not installed" >&2; exit 77; }
done
id postgres >/dev/null 2>&1 || { echo "skipped: no postgres user" >&2; exit 77; }
mkdir -p "$BB_TMP"
T=$(cd "$BB_TMP" && pwd)
# The data directory must be the postgres user's: outside the build tree.
PGD=$(mktemp -d)
chown postgres: "$PGD"
. "$BB_SRC/tests/cli/netns.sh"
pg=""
rig_extra_cleanup() {
	[ -n "$pg" ] && kill -INT "$pg" 2>/dev/null && sleep 0.5
	rm -rf "$PGD"
}
rig_up pq 225
srv=$net.2
asuser() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }

asuser initdb -D "$PGD/data" -A trust -U postgres >"$T/initdb.log" 2>&1 ||
	{ echo "FAIL: initdb"; tail -5 "$T/initdb.log"; exit 1; }
echo "host all all $net.0/24 trust" >>"$PGD/data/pg_hba.conf"
ip netns exec "$ns_s" setpriv --reuid=postgres --regid=postgres --init-groups \
	postgres -D "$PGD/data" -h "$srv" -p 5432 -k "$PGD" -c fsync=off >"$T/postgres.log" 2>&1 &
pg=$!
export PGHOST=$srv PGUSER=postgres PGDATABASE=postgres PGCONNECT_TIMEOUT=5 PGSSLMODE=prefer
i=0
until ip netns exec "$ns_c" psql -qAtc "select 1" >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -gt 100 ] && { echo "FAIL: postgres did not start"; tail -5 "$T/postgres.log"; exit 1; }; sleep 0.1
done

"$BB_BIN/bbcap" -i "$br" -w "$T/pg.tr" tcp port 5432 2>"$T/bbcap.err" &
cap=$!
pids="$pids $cap"
tcpdump -i "$br" -w "$T/pg.pcap" -U -s 0 -B 65536 --immediate-mode tcp port 5432 2>"$T/tcpdump.err" &
tcpd=$!
pids="$pids $tcpd"
i=0
until grep -qs '^#bbtrace' "$T/pg.tr".partial.* 2>/dev/null && [ -s "$T/pg.pcap" ]; do
	i=$((i + 1)); [ $i -gt 50 ] && { echo "FAIL: bbcap or tcpdump did not start"; cat "$T/bbcap.err"; exit 1; }; sleep 0.1
done
sleep 0.5

C() { ip netns exec "$ns_c" "$@"; }
fail=0
# psql: one connection per statement (startup with SSLRequest, one Query)
for q in "CREATE TABLE bbt (id int, v text)" \
	"INSERT INTO bbt VALUES (1, 'a')" \
	"INSERT INTO bbt VALUES (2, 'b')" \
	"SELECT v FROM bbt WHERE id = 1" \
	"UPDATE bbt SET v = 'c' WHERE id = 2" \
	"WITH x AS (SELECT 2 AS id) DELETE FROM bbt USING x WHERE bbt.id = x.id"; do
	C psql -qAtc "$q" >/dev/null || { echo "FAIL: psql -c \"$q\""; fail=1; }
done
printf '3\tc\n4\td\n' | C psql -qc "\\copy bbt from stdin" || { echo "FAIL: psql \\copy"; fail=1; }
C psql -qc "DROP TABLE bbt" || fail=1
# pgbench: 2 clients x 10 transactions in each query mode
C pgbench -q -i -s 1 >"$T/pgbench-i.log" 2>&1 || { echo "FAIL: pgbench -i"; cat "$T/pgbench-i.log"; fail=1; }
for m in simple extended prepared; do
	C pgbench -n -c 2 -t 10 -M $m >"$T/pgbench-$m.log" 2>&1 || { echo "FAIL: pgbench -M $m"; cat "$T/pgbench-$m.log"; fail=1; }
done
sleep 0.5
cap_name=pg
rig_capture_stop
[ $rc -eq 0 ] || { echo "FAIL: bbcap exit $rc"; fail=1; }

tr=$T/pg.tr
body() { grep -v '^#' "$tr"; }
# n_op OP REQ: records of op OP with req=REQ (percent-encoded)
n_op() { body | grep -c "	$1	.*	proto=pgsql	req=$2	"; }
check() { # want op req
	got=$(n_op "$2" "$3")
	if [ "$got" = "$1" ]; then echo "ok   $1 $2 req=$3"; else echo "FAIL: $got $2 req=$3, want $1"; fail=1; fi
}
for op in CALL RET; do
	check 1 $op "CREATE%20TABLE%20bbt"
	check 2 $op "INSERT%20bbt"
	check 1 $op "SELECT%20bbt"
	check 1 $op "UPDATE%20bbt"
	check 1 $op "DELETE%20bbt"
	check 1 $op "COPY%20bbt"
	check 1 $op "DROP%20TABLE%20bbt"
	# pgbench's tpcb-like transaction: 7 statements, 20 transactions per
	# mode, 3 modes = 60 each; -M prepared also prepares each statement once
	# per client (Parse P_n + Sync: a cycle of its own) = +2; pgbench -i runs
	# one BEGIN of its own = +1.
	check 63 $op "BEGIN"
	check 62 $op "UPDATE%20pgbench_accounts"
	check 62 $op "SELECT%20pgbench_accounts"
	check 62 $op "UPDATE%20pgbench_tellers"
	check 62 $op "UPDATE%20pgbench_branches"
	check 62 $op "INSERT%20pgbench_history"
	check 62 $op "END"
	check 1 $op "COPY%20pgbench_accounts"
done
calls=$(body | grep -c "	CALL	$net.1	$srv	.*proto=pgsql")
rets=$(body | grep -c "	RET	$srv	$net.1	.*proto=pgsql")
startups=$(n_op CALL STARTUP)
# every return has its call: same id, reversed nodes, not earlier
unpaired=$(body | awk -F'\t' '$2 == "CALL" { c[$3 " " $4 " " $5] = $1 }
	$2 == "RET" { k = $4 " " $3 " " $5; if (!(k in c) || c[k] > $1) n++ } END { print n + 0 }')
[ "$unpaired" = 0 ] || { echo "FAIL: $unpaired returns without their call"; fail=1; }
[ "$calls" = "$rets" ] || { echo "FAIL: $calls calls, $rets returns"; fail=1; }
echo "bbcap: $calls CALL, $rets RET, $startups connections (STARTUP), every RET paired"
tdrops=$(sed -n 's/^\([0-9]*\) packets dropped by kernel$/\1/p' "$T/tcpdump.err")
if [ "${tdrops:-1}" != 0 ]; then
	# (the machine is shared: tcpdump, unlike bbcap, may fall behind)
	echo "note: tcpdump dropped ${tdrops:-?} packets: no tshark comparison"
elif command -v tshark >/dev/null 2>&1; then
	tshark -n -r "$T/pg.pcap" -Y pgsql -T fields -E occurrence=a -E aggregator=';' -e pgsql.type 2>/dev/null |
		tr ';' '\n' >"$T/types"
	tq=$(grep -c -e '^Startup message$' -e '^Simple query$' -e '^Sync$' "$T/types")
	tr_=$(grep -c '^Ready for query$' "$T/types")
	echo "tshark on the same traffic: $tq calls, $tr_ returns"
	[ "$tq" = "$calls" ] && [ "$tr_" = "$rets" ] || { echo "FAIL: bbcap and tshark disagree"; fail=1; }
fi
drops=$(sed -n 's/^\([0-9]*\) packets dropped by kernel$/\1/p' "$T/bbcap.err")
[ "${drops:-1}" = 0 ] || echo "note: ${drops:-?} kernel drops"
exit $fail

#!/bin/sh
# dec_sql_mysql_live.sh - MariaDB answering the mariadb client (text
# protocol: COM_QUERY, result sets) and DBD::MariaDB with server-side
# prepared statements (COM_STMT_PREPARE/EXECUTE/CLOSE) on a namespace
# bridge, bbcap live on the bridge (stopped by SIGINT): every statement the
# clients sent appears as a CALL/RET pair with the right req= (a statement
# executed gets the verb and table of the text it was prepared from), and
# the CLOSEs and QUITs as calls without a return. A tcpdump of the same
# traffic is counted by tshark (ORACLE.md) too: bbcap's totals must equal it
# (when tcpdump dropped nothing). Needs root, ip(8), mariadb-server,
# mariadb-client, perl DBD::MariaDB; skips (77) otherwise.
set -u
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (network namespaces)" >&2; exit 77; }
PATH=$PATH:/usr/sbin:/sbin
for t in ip mariadbd mariadb-install-db mariadb perl; do
	command -v $t >/dev/null 2>&1 || { echo "skipped: $t not installed" >&2; exit 77; }
done
perl -MDBD::MariaDB -e 1 2>/dev/null || { echo "skipped: perl DBD::MariaDB (libdbd-mariadb-perl) not installed" >&2; exit 77; }
mkdir -p "$BB_TMP"
T=$(cd "$BB_TMP" && pwd)
rm -rf "$T/db"
. "$BB_SRC/tests/cli/netns.sh"
rig_up my 226
srv=$net.2

mariadb-install-db --no-defaults --user=root --datadir="$T/db" --auth-root-authentication-method=socket \
	>"$T/install.log" 2>&1 || { echo "FAIL: mariadb-install-db"; tail -5 "$T/install.log"; exit 1; }
ip netns exec "$ns_s" mariadbd --no-defaults --user=root --datadir="$T/db" --bind-address="$srv" \
	--port=3306 --socket="$T/my.sock" --pid-file="$T/my.pid" --skip-log-bin \
	--innodb-buffer-pool-size=16M --log-error="$T/mariadbd.err" 2>"$T/mariadbd.out" &
pids="$pids $!"
i=0
until mariadb --no-defaults -S "$T/my.sock" -u root -e "CREATE USER bb@'%'; GRANT ALL ON *.* TO bb@'%'; CREATE DATABASE bbdb" 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 150 ] && { echo "FAIL: mariadbd did not start"; tail -5 "$T/mariadbd.err"; exit 1; }; sleep 0.1
done

"$BB_BIN/bbcap" -i "$br" -w "$T/my.tr" tcp port 3306 2>"$T/bbcap.err" &
cap=$!
pids="$pids $cap"
tcpdump -i "$br" -w "$T/my.pcap" -U -s 0 -B 65536 --immediate-mode tcp port 3306 2>"$T/tcpdump.err" &
tcpd=$!
pids="$pids $tcpd"
i=0
until grep -qs '^#bbtrace' "$T/my.tr".partial.* 2>/dev/null && [ -s "$T/my.pcap" ]; do
	i=$((i + 1)); [ $i -gt 50 ] && { echo "FAIL: bbcap or tcpdump did not start"; cat "$T/bbcap.err"; exit 1; }; sleep 0.1
done
sleep 0.5

fail=0
# The text protocol: one connection, one COM_QUERY per statement; a stored
# procedure answers with two result sets.
ip netns exec "$ns_c" mariadb --no-defaults -h "$srv" -u bb bbdb >"$T/client.out" 2>&1 <<'SQL' || { echo "FAIL: mariadb client"; cat "$T/client.out"; fail=1; }
CREATE TABLE bbt (id INT PRIMARY KEY, v VARCHAR(20));
INSERT INTO bbt VALUES (1, 'one'), (2, 'two'), (3, 'three');
SELECT v FROM bbt WHERE id > 1;
UPDATE bbt SET v = 'deux' WHERE id = 2;
SELECT COUNT(*) FROM bbt;
DELETE FROM bbt WHERE id = 3;
SHOW TABLES;
DELIMITER //
CREATE PROCEDURE bbp() BEGIN SELECT v FROM bbt; SELECT COUNT(*) FROM bbt; END//
DELIMITER ;
CALL bbp();
SQL
# Server-side prepared statements: one prepare, 5 executions, a close.
cat >"$T/ps.pl" <<'PERL'
use strict;
use DBI;
my ($host) = @ARGV;
my $dbh = DBI->connect("DBI:MariaDB:database=bbdb;host=$host;mariadb_server_prepare=1", "bb", "",
	{RaiseError => 1, PrintError => 0});
my $sel = $dbh->prepare("SELECT v FROM bbt WHERE id = ?");
for my $id (1, 2, 1, 2, 1) {
	$sel->execute($id);
	my @row = $sel->fetchrow_array;
	$sel->finish;
}
undef $sel;
my $ins = $dbh->prepare("INSERT INTO bbt (id, v) VALUES (?, ?)");
$ins->execute(10 + $_, "ps$_") for 1 .. 3;
undef $ins;
$dbh->disconnect;
PERL
ip netns exec "$ns_c" perl "$T/ps.pl" "$srv" >"$T/ps.out" 2>&1 || { echo "FAIL: DBD::MariaDB client"; cat "$T/ps.out"; fail=1; }
ip netns exec "$ns_c" mariadb --no-defaults -h "$srv" -u bb bbdb -e "DROP TABLE bbt" || fail=1
sleep 0.5
cap_name=my
rig_capture_stop
[ $rc -eq 0 ] || { echo "FAIL: bbcap exit $rc"; fail=1; }

tr=$T/my.tr
body() { grep -v '^#' "$tr"; }
n_op() { body | grep -c "	$1	.*	proto=mysql	req=$2	"; }
check() { # want op req
	got=$(n_op "$2" "$3")
	if [ "$got" = "$1" ]; then echo "ok   $1 $2 req=$3"; else echo "FAIL: $got $2 req=$3, want $1"; fail=1; fi
}
for op in CALL RET; do
	check 1 $op "CREATE%20TABLE%20bbt"
	check 1 $op "UPDATE%20bbt"
	check 1 $op "DELETE%20bbt"
	check 1 $op "SHOW%20TABLES"
	# two result sets and the final OK (SERVER_MORE_RESULTS_EXISTS): one reply
	check 1 $op "CREATE%20PROCEDURE%20bbp"
	check 1 $op "CALL%20bbp"
	check 1 $op "DROP%20TABLE%20bbt"
	# text: 2 SELECTs; prepared: 5 executions of the prepared SELECT
	check 7 $op "SELECT%20bbt"
	check 1 $op "PREPARE%20SELECT%20bbt"
	check 1 $op "PREPARE%20INSERT%20bbt"
done
ins_c=$(n_op CALL "INSERT%20bbt")
ins_r=$(n_op RET "INSERT%20bbt")
[ "$ins_c" = 4 ] && [ "$ins_r" = 4 ] || { echo "FAIL: $ins_c/$ins_r INSERT bbt pairs, want 4 (1 text + 3 executions)"; fail=1; }
check 1 CALL "STMT_CLOSE%20SELECT%20bbt"
check 1 CALL "STMT_CLOSE%20INSERT%20bbt"
check 0 RET "STMT_CLOSE%20SELECT%20bbt"
check 3 CALL "QUIT"
check 0 RET "QUIT"
calls=$(body | grep -c "	CALL	$net.1	$srv	.*proto=mysql")
rets=$(body | grep -c "	RET	$srv	$net.1	.*proto=mysql")
unpaired=$(body | awk -F'\t' '$2 == "CALL" { c[$3 " " $4 " " $5] = $1 }
	$2 == "RET" { k = $4 " " $3 " " $5; if (!(k in c) || c[k] > $1) n++ } END { print n + 0 }')
[ "$unpaired" = 0 ] || { echo "FAIL: $unpaired returns without their call"; fail=1; }
noreply=$(body | grep -c -e "	CALL	.*proto=mysql	req=QUIT	" -e "	CALL	.*proto=mysql	req=STMT_CLOSE")
[ $((calls - noreply)) = "$rets" ] || { echo "FAIL: $calls calls ($noreply without reply), $rets returns"; fail=1; }
echo "bbcap: $calls CALL ($noreply without a reply: QUIT, STMT_CLOSE), $rets RET, every RET paired"
tdrops=$(sed -n 's/^\([0-9]*\) packets dropped by kernel$/\1/p' "$T/tcpdump.err")
if [ "${tdrops:-1}" != 0 ]; then
	echo "note: tcpdump dropped ${tdrops:-?} packets: no tshark comparison"
elif command -v tshark >/dev/null 2>&1; then
	tshark -n -r "$T/my.pcap" -Y mysql -T fields -E occurrence=a -E aggregator=';' \
		-e tcp.srcport -e mysql.command -e mysql.packet_number 2>/dev/null >"$T/fields"
	tq=$(awk -F'\t' '$2 != "" { n += split($2, a, ";") } END { print n + 0 }' "$T/fields")
	tr_=$(awk -F'\t' '$1 == 3306 { k = split($3, a, ";"); for (i = 1; i <= k; i++) n += a[i] == 1 } END { print n + 0 }' "$T/fields")
	echo "tshark on the same traffic: $tq calls, $tr_ returns"
	[ "$tq" = "$calls" ] && [ "$tr_" = "$rets" ] || { echo "FAIL: bbcap and tshark disagree"; fail=1; }
fi
exit $fail

#!/bin/sh
# dec_redis_live.sh - real servers and clients on a namespace bridge, bbcap live
# on the bridge, stopped with SIGINT:
#   redis-server 7 with redis-cli (RESP2 and RESP3 sessions, pub/sub) and
#     redis-benchmark pipelining 16 commands (-P 16);
#   memcached 1.6 with a scripted client: text (multi-key get, noreply,
#     stats), binary (quiet GETKQ + NOOP, STAT) and UDP;
#   Thrift servers and clients on python3-thrift: binary buffered and compact
#     framed, with ONEWAY and EXCEPTION.
# Every request the clients made appears as a CALL/RET pair (ONEWAY and
# noreply as a CALL alone) with the right req=, and published messages are not
# returns. Needs root, ip(8), redis-server, redis-cli, redis-benchmark,
# memcached and python3-thrift; skips (77) otherwise.
set -u
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (network namespaces)" >&2; exit 77; }
PATH=$PATH:/usr/sbin:/sbin
for t in ip redis-server redis-cli redis-benchmark memcached; do
	command -v $t >/dev/null 2>&1 || { echo "skipped: $t not installed" >&2; exit 77; }
done
/usr/bin/python3 -c 'import thrift' 2>/dev/null || { echo "skipped: python3-thrift not installed" >&2; exit 77; }
mkdir -p "$BB_TMP"
T=$(cd "$BB_TMP" && pwd)
. "$BB_SRC/tests/cli/netns.sh"
rig_up rd 220
srv=$net.2
cli="ip netns exec $ns_c"
peer="$BB_SRC/tests/cli/thrift_peer.py"

ip netns exec "$ns_s" redis-server --bind "$srv" --port 6379 --save '' --appendonly no \
	--protected-mode no --dir "$T" --logfile "$T/redis.log" &
pids="$pids $!"
ip netns exec "$ns_s" memcached -u root -l "$srv" -p 11211 -U 11211 &
pids="$pids $!"
ip netns exec "$ns_s" /usr/bin/python3 "$peer" server "$srv" 9090 binary buffered 2>"$T/th1.err" &
pids="$pids $!"
ip netns exec "$ns_s" /usr/bin/python3 "$peer" server "$srv" 9091 compact framed 2>"$T/th2.err" &
pids="$pids $!"
i=0
until $cli redis-cli -h "$srv" ping >/dev/null 2>&1 &&
	$cli /usr/bin/python3 -c "import socket; socket.create_connection(('$srv', 11211)).close(); socket.create_connection(('$srv', 9090)).close(); socket.create_connection(('$srv', 9091)).close()" 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 100 ] && { echo "FAIL: servers did not start"; exit 1; }; sleep 0.1
done

"$BB_BIN/bbcap" -i "$br" -w "$T/live.tr" --decode-as 9090=thrift --decode-as 9091=thrift \
	port 6379 or port 11211 or port 9090 or port 9091 2>"$T/bbcap.err" &
cap=$!
pids="$pids $cap"
i=0
until grep -qs '^#bbtrace' "$T/live.tr".partial.* 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 50 ] && { echo "FAIL: bbcap did not start"; cat "$T/bbcap.err"; exit 1; }; sleep 0.1
done
sleep 0.5
fail=0

# ---- redis: one RESP2 session, one RESP3 session, pub/sub, a pipelined benchmark
printf '%s\n' 'SET greeting hello' 'GET greeting' 'HSET user:1 name ann age 7' 'HGETALL user:1' \
	'INCR visits' 'RPUSH list a b c' 'LRANGE list 0 -1' 'DEL greeting' |
	$cli redis-cli -h "$srv" >"$T/r2.out" || { echo "FAIL: redis-cli"; fail=1; }
printf '%s\n' 'HGETALL user:1' 'ZADD z 1 one 2 two' 'ZRANGE z 0 -1 WITHSCORES' |
	$cli redis-cli -3 -h "$srv" >"$T/r3.out" || { echo "FAIL: redis-cli -3"; fail=1; }
$cli redis-cli -h "$srv" SUBSCRIBE news sport >"$T/sub.out" &
sub=$!
pids="$pids $sub"
i=0
until [ "$($cli redis-cli -h "$srv" PUBSUB NUMSUB news | tail -1)" = 1 ]; do
	i=$((i + 1)); [ $i -gt 50 ] && { echo "FAIL: subscriber not there"; exit 1; }; sleep 0.1
done
$cli redis-cli -h "$srv" PUBLISH news one >/dev/null
$cli redis-cli -h "$srv" PUBLISH sport two >/dev/null
$cli redis-cli -h "$srv" PUBLISH news three >/dev/null
sleep 0.3
kill "$sub"
$cli redis-benchmark -h "$srv" -n 2000 -c 2 -P 16 -t set,get -q >"$T/bench.out" 2>&1 ||
	{ echo "FAIL: redis-benchmark"; cat "$T/bench.out"; fail=1; }

# ---- memcached: text, binary and UDP from one script
$cli /usr/bin/python3 - "$srv" >"$T/mc.out" 2>&1 <<'PYEOF' || { echo "FAIL: memcached client"; cat "$T/mc.out"; fail=1; }
import socket, struct, sys
srv = sys.argv[1]
def until(s, ends):
    d = b""
    while not any(d.endswith(e) for e in ends):
        c = s.recv(65536)
        if not c: raise SystemExit("closed")
        d += c
    return d
t = socket.create_connection((srv, 11211))
t.sendall(b"set alpha 0 0 5\r\nhello\r\n"); until(t, [b"STORED\r\n"])
t.sendall(b"set beta 0 0 3 noreply\r\nxyz\r\n")
t.sendall(b"get alpha beta gamma\r\n"); until(t, [b"END\r\n"])
t.sendall(b"incr counter 1\r\n"); until(t, [b"NOT_FOUND\r\n"])
t.sendall(b"stats\r\n"); until(t, [b"END\r\n"])
t.sendall(b"delete alpha\r\n"); until(t, [b"DELETED\r\n"])
t.close()
H = struct.Struct(">BBHBBHIIQ")
def req(op, key=b"", ext=b"", val=b"", opq=0):
    return H.pack(0x80, op, len(key), len(ext), 0, 0, len(key) + len(ext) + len(val), opq, 0) + ext + key + val
def resp(s, buf):
    while len(buf) < 24: buf += s.recv(65536)
    bl, opq = struct.unpack(">II", buf[8:16]); kl = struct.unpack(">H", buf[2:4])[0]
    while len(buf) < 24 + bl: buf += s.recv(65536)
    return buf[1], kl, opq, buf[24 + bl:]
b = socket.create_connection((srv, 11211)); buf = b""
b.sendall(req(0x01, b"k1", b"\0" * 8, b"v1", 1)); op, kl, opq, buf = resp(b, buf)
b.sendall(req(0x00, b"k1", opq=2)); op, kl, opq, buf = resp(b, buf)
b.sendall(req(0x0d, b"k1", opq=3) + req(0x0d, b"nokey", opq=4) + req(0x0a, opq=5))
while True:
    op, kl, opq, buf = resp(b, buf)
    if op == 0x0a: break
b.sendall(req(0x10, opq=6))
while True:
    op, kl, opq, buf = resp(b, buf)
    if kl == 0: break
b.close()
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.settimeout(2)
for i in range(3):
    u.sendto(struct.pack(">HHHH", 40 + i, 0, 1, 0) + b"get alpha\r\n", (srv, 11211)); u.recvfrom(65536)
print("ok")
PYEOF

# ---- thrift: binary buffered, compact framed
$cli /usr/bin/python3 "$peer" client "$srv" 9090 binary buffered >"$T/th1.out" 2>&1 || { echo "FAIL: thrift client 1"; cat "$T/th1.out"; fail=1; }
$cli /usr/bin/python3 "$peer" client "$srv" 9091 compact framed >"$T/th2.out" 2>&1 || { echo "FAIL: thrift client 2"; cat "$T/th2.out"; fail=1; }

sleep 0.5
kill -INT $cap
wait $cap
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: bbcap exit $rc"; cat "$T/bbcap.err"; fail=1; }

# calls PROTO REQ: CALL records of that decoder and req=; rets likewise
calls() { grep -c "	CALL	$net.1	$srv	.*	proto=$1	req=$2	" "$T/live.tr"; }
rets() { grep -c "	RET	$srv	$net.1	.*	proto=$1	req=$2	" "$T/live.tr"; }
# want PROTO REQ CALLS RETS: exactly that many
want() {
	c=$(calls "$1" "$2") r=$(rets "$1" "$2")
	if [ "$c" = "$3" ] && [ "$r" = "$4" ]; then
		echo "ok   $1 $2: $c CALL, $r RET"
	else
		echo "FAIL $1 $2: $c CALL, $r RET, want $3/$4"
		fail=1
	fi
}
for c in HSET INCR RPUSH LRANGE DEL ZADD ZRANGE SUBSCRIBE HELLO; do
	want redis $c 1 1
done
want redis HGETALL 2 2
want redis PUBLISH 3 3
# redis-benchmark's 2000 SET and 2000 GET pipelined by 16, and redis-cli's one each
for c in SET GET; do
	n=$(calls redis $c)
	[ "$n" -ge 2001 ] && [ "$(rets redis $c)" = "$n" ] && echo "ok   redis $c: $n CALL and RET" ||
		{ echo "FAIL redis $c: $n CALL, $(rets redis $c) RET, want 2001 or more, as many"; fail=1; }
done
grep -q '^message' "$T/sub.out" || { echo "FAIL: the subscriber got no message"; fail=1; }
want memcache set 2 1        # one noreply
want memcache get 4 4        # TCP: three keys, one reply; UDP: 3
want memcache incr 1 1
want memcache stats 1 1
want memcache delete 1 1
want memcache SET 1 1
want memcache GET 1 1
want memcache GETKQ 2 1      # the miss is silent
want memcache NOOP 1 1
want memcache STAT 1 1       # one RET for all the statistics
udp_c=$(grep -c "	CALL	$net.1	$srv	c[0-9]*\.u4[0-2]	proto=memcache	req=get	" "$T/live.tr")
udp_r=$(grep -c "	RET	$srv	$net.1	c[0-9]*\.u4[0-2]	proto=memcache	req=get	" "$T/live.tr")
[ "$udp_c" = 3 ] && [ "$udp_r" = 3 ] && echo "ok   memcache UDP: 3 CALL, 3 RET" ||
	{ echo "FAIL memcache UDP: $udp_c CALL, $udp_r RET, want 3/3"; fail=1; }
want thrift getUser 4 4
want thrift putUser 2 2
want thrift log 2 0          # ONEWAY
want thrift fail 2 2         # answered by an EXCEPTION
want thrift ping 2 2

# every return pairs with an earlier call of the same id, nothing unmatched
unpaired=$(grep -v '^#' "$T/live.tr" | awk -F'	' '$2 == "CALL" { c[$3 " " $5]++ }
	$2 == "RET" { k = $4 " " $5; if (c[k] > 0) c[k]--; else n++ } END { print n + 0 }')
[ "$unpaired" = 0 ] || { echo "FAIL: $unpaired returns without their call"; fail=1; }
for d in redis memcache thrift; do
	grep -q "^#capture .* $d=calls:[0-9]*,rets:[0-9]*,unanswered:[0-9]*,unmatched_ret:0,malformed:0" "$T/live.tr" ||
		{ echo "FAIL: $d counters: $(grep -o " $d=[^ ]*" "$T/live.tr")"; fail=1; }
done
grep '^#capture' "$T/live.tr" | tr ' ' '\n' | grep -E '^(packets|dropped_kernel|tcp_gaps|redis|memcache|thrift)='
exit $fail

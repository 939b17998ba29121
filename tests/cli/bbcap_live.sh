#!/bin/sh
# bbcap_live.sh - bbcap -i on a network-namespace bridge while a real HTTP/1.1
# server answers real clients (curl over IPv4 and IPv6, and a keep-alive
# connection opened before the capture started); stopped with SIGINT: exit 0,
# every request appears as a CALL/RET pair and the summary is printed. A second
# bbcap on "-i any" (Linux SLL2, every packet seen on several interfaces) with
# -Z nobody must find the same pairs; SIGUSR1 prints its counters.
# Needs root, ip(8), curl, python3.
set -u
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (network namespaces)" >&2; exit 77; }
for t in ip curl; do
	command -v $t >/dev/null 2>&1 || { echo "skipped: $t not installed" >&2; exit 77; }
done
PY=/usr/bin/python3
[ -x $PY ] || PY=$(command -v python3) || { echo "skipped: python3 not installed" >&2; exit 77; }
mkdir -p "$BB_TMP"
T=$BB_TMP
. "$BB_SRC/tests/cli/netns.sh"
rig_up br 213

cat >"$T/server.py" <<'PYEOF'
import sys, socket, http.server, socketserver
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        body = b"x" * (100 + len(self.path))
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    address_family = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
S((sys.argv[1], 8080), H).serve_forever()
PYEOF
cat >"$T/keepalive.py" <<'PYEOF'
import sys, time, http.client
c = http.client.HTTPConnection(sys.argv[1], 8080, timeout=10)
c.request("GET", "/before"); c.getresponse().read()
print("open", flush=True)
sys.stdin.readline()          # the capture has started
for i in range(5):
    c.request("GET", "/ka%d" % i); c.getresponse().read()
print("done", flush=True)
PYEOF
ip netns exec "$ns_s" $PY "$T/server.py" "$net.2" &
pids="$pids $!"
ip netns exec "$ns_s" $PY "$T/server.py" "$net6::2" &
pids="$pids $!"
i=0
until ip netns exec "$ns_c" curl -s -o /dev/null "http://$net.2:8080/ping"; do
	i=$((i + 1))
	[ $i -gt 50 ] && { echo "FAIL: server did not start"; exit 1; }
	sleep 0.1
done
rm -f "$T/ka.in"
mkfifo "$T/ka.in"
ip netns exec "$ns_c" $PY "$T/keepalive.py" "$net.2" <"$T/ka.in" >"$T/ka.out" &
pids="$pids $!"
exec 3>"$T/ka.in"
i=0
until grep -q open "$T/ka.out" 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 50 ] && { echo "FAIL: keep-alive client"; exit 1; }; sleep 0.1
done

"$BB_BIN/bbcap" -i "$br" -w "$T/live.tr" tcp port 8080 2>"$T/bbcap.err" &
cap=$!
pids="$pids $cap"
: >"$T/any.tr"
chmod 666 "$T/any.tr"
"$BB_BIN/bbcap" -i any -Z nobody -w "$T/any.tr" tcp port 8080 2>"$T/any.err" &
cap2=$!
pids="$pids $cap2"
for f in live.tr any.tr; do
	i=0
	until grep -qs '^#bbtrace' "$T/$f".partial.* 2>/dev/null; do
		i=$((i + 1)); [ $i -gt 50 ] && { echo "FAIL: bbcap did not start ($f)"; cat "$T/bbcap.err" "$T/any.err"; exit 1; }; sleep 0.1
	done
done
sleep 0.5
echo go >&3
for k in 1 2 3 4 5 6 7 8 9 10; do
	ip netns exec "$ns_c" curl -s -o /dev/null "http://$net.2:8080/c$k" || { echo "FAIL: curl"; exit 1; }
done
for k in 1 2 3 4 5; do
	ip netns exec "$ns_c" curl -s -o /dev/null "http://[$net6::2]:8080/v6_$k" || { echo "FAIL: curl -6"; exit 1; }
done
kill -USR1 $cap2
sleep 0.3
i=0
until grep -q done "$T/ka.out" 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 50 ] && { echo "FAIL: keep-alive requests"; exit 1; }; sleep 0.1
done
exec 3>&-
# No pause: the last packets are still in the kernel's block when SIGINT
# comes; bbcap must take them before it exits.
kill -INT $cap
wait $cap
rc=$?
kill -TERM $cap2
wait $cap2
rc2=$?
fail=0
[ $rc -eq 0 ] || { echo "FAIL: bbcap exit $rc after SIGINT"; cat "$T/bbcap.err"; fail=1; }
[ $rc2 -eq 0 ] || { echo "FAIL: bbcap -i any exit $rc2 after SIGTERM"; cat "$T/any.err"; fail=1; }
[ "$(grep -c 'packets captured' "$T/any.err")" -ge 2 ] || { echo "FAIL: SIGUSR1 printed no counters"; cat "$T/any.err"; fail=1; }
grep -q 'packets captured' "$T/bbcap.err" || { echo "FAIL: no summary"; fail=1; }
grep -q '^  http .* 20 calls, 20 returns, 0 unmatched returns, 0 malformed' "$T/bbcap.err" ||
	{ echo "FAIL: summary counts"; fail=1; }
grep -q '(1 picked up mid-stream' "$T/bbcap.err" || { echo "FAIL: summary mid-stream count"; fail=1; }
grep -q 'packets dropped by kernel' "$T/bbcap.err" || { echo "FAIL: no kernel drop count"; fail=1; }
calls=$(grep -c "	CALL	.*proto=http" "$T/live.tr")
rets=$(grep -c "	RET	.*proto=http" "$T/live.tr")
ka=$(grep "	CALL	.*req=GET%20/ka" "$T/live.tr" | awk '{print $5}' | sort -u | wc -l)
v6=$(grep -c "	CALL	fd00:bb:.*req=GET%20/v6_" "$T/live.tr")
echo "bridge: calls=$calls rets=$rets keep-alive ids=$ka ipv6 calls=$v6"
[ "$calls" = 20 ] && [ "$rets" = 20 ] || { echo "FAIL: want 20 CALL and 20 RET"; fail=1; }
[ "$v6" = 5 ] || { echo "FAIL: want 5 IPv6 calls named by their IPv6 address"; fail=1; }
acalls=$(grep -c "	CALL	.*proto=http" "$T/any.tr")
arets=$(grep -c "	RET	.*proto=http" "$T/any.tr")
echo "any (SLL2, -Z nobody): calls=$acalls rets=$arets"
[ "$acalls" = 20 ] && [ "$arets" = 20 ] || { echo "FAIL: -i any: want 20 CALL and 20 RET"; cat "$T/any.err"; fail=1; }
[ "$ka" = 5 ] || { echo "FAIL: want the 5 keep-alive requests"; fail=1; }
grep -q 'tcp_midstream=1 ' "$T/live.tr" || { echo "FAIL: the keep-alive connection was not picked up mid-stream"; grep '^#capture' "$T/live.tr"; fail=1; }
grep -q '^#capture packets=' "$T/live.tr" || { echo "FAIL: no #capture line"; fail=1; }
cat "$T/bbcap.err"
exit $fail

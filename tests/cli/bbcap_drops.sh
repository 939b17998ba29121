#!/bin/sh
# bbcap_drops.sh - a live capture with kernel drops: bbcap -i with a 1 MB
# buffer is stopped (SIGSTOP) while a keep-alive client downloads megabytes
# through the bridge, then continued; the client goes on on the same
# connection. The kernel drops packets; bbcap must count them, skip the hole
# in the TCP stream (a gap, counted) and pair the requests made on that
# connection after it resumed. Needs root, ip(8), python3.
set -u
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (network namespaces)" >&2; exit 77; }
command -v ip >/dev/null 2>&1 || { echo "skipped: ip not installed" >&2; exit 77; }
PY=/usr/bin/python3
[ -x $PY ] || PY=$(command -v python3) || { echo "skipped: python3 not installed" >&2; exit 77; }
mkdir -p "$BB_TMP"
T=$BB_TMP
. "$BB_SRC/tests/cli/netns.sh"
rig_up dr 215
cat >"$T/server.py" <<'PYEOF'
import sys, http.server, socketserver
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        size = int(self.path.split("/")[-1])
        self.send_response(200)
        self.send_header("Content-Length", str(size))
        self.end_headers()
        self.wfile.write(b"y" * size)
    def log_message(self, *a):
        pass
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
S((sys.argv[1], 8080), H).serve_forever()
PYEOF
cat >"$T/client.py" <<'PYEOF'
import sys, http.client
c = http.client.HTTPConnection(sys.argv[1], 8080, timeout=20)
def get(what, n, size):
    for i in range(n):
        c.request("GET", "/%s/%d" % (what, size)); c.getresponse().read()
get("before", 5, 1000)
print("stop", flush=True); sys.stdin.readline()
get("flood", 20, 2000000)
print("flooded", flush=True); sys.stdin.readline()
get("after", 5, 1000)
print("done", flush=True)
PYEOF
ip netns exec "$ns_s" $PY "$T/server.py" "$net.2" &
pids="$pids $!"
sleep 1
"$BB_BIN/bbcap" -i "$br" -B 1 -w "$T/drops.tr" tcp port 8080 2>"$T/bbcap.err" &
cap=$!
pids="$pids $cap"
i=0
until grep -qs '^#bbtrace' "$T/drops.tr".partial.* 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 50 ] && { echo "FAIL: bbcap did not start"; cat "$T/bbcap.err"; exit 1; }; sleep 0.1
done
sleep 0.5
rm -f "$T/in"
mkfifo "$T/in"
ip netns exec "$ns_c" $PY "$T/client.py" "$net.2" <"$T/in" >"$T/client.out" &
pids="$pids $!"
exec 3>"$T/in"
waitfor() {
	i=0
	until grep -q "$1" "$T/client.out" 2>/dev/null; do
		i=$((i + 1)); [ $i -gt 200 ] && { echo "FAIL: client did not say $1"; exit 1; }; sleep 0.1
	done
}
waitfor stop
kill -STOP $cap
echo >&3
waitfor flooded
kill -CONT $cap
sleep 1
echo >&3
waitfor done
exec 3>&-
sleep 0.5
kill -INT $cap
wait $cap
rc=$?
fail=0
[ $rc -eq 0 ] || { echo "FAIL: bbcap exit $rc"; fail=1; }
cat "$T/bbcap.err"
drops=$(sed -n 's/^\([0-9]*\) packets dropped by kernel$/\1/p' "$T/bbcap.err")
before=$(grep -c "	RET	.*req=GET%20/before/" "$T/drops.tr")
after=$(grep -c "	RET	.*req=GET%20/after/" "$T/drops.tr")
after_c=$(grep -c "	CALL	.*req=GET%20/after/" "$T/drops.tr")
gaps=$(sed -n 's/^#capture .* tcp_gaps=\([0-9]*\) .*/\1/p' "$T/drops.tr")
echo "kernel drops $drops, TCP gaps $gaps; paired before/after the drops: $before/$after (calls after: $after_c)"
[ "${gaps:-0}" -gt 0 ] || { echo "FAIL: no TCP gap counted on the connection that lost packets"; fail=1; }
[ "${drops:-0}" -gt 0 ] || { echo "FAIL: no kernel drops measured (the test could not provoke them)"; fail=1; }
grep -q "^#capture .*dropped_kernel=$drops " "$T/drops.tr" || { echo "FAIL: #capture lacks dropped_kernel=$drops"; fail=1; }
[ "$before" = 5 ] && [ "$after" = 5 ] && [ "$after_c" = 5 ] || { echo "FAIL: want the 5+5 exchanges around the drops paired"; fail=1; }
exit $fail

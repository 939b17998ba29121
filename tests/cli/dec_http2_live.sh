#!/bin/sh
# dec_http2_live.sh - real HTTP/2 and gRPC servers and clients on a namespace
# bridge, bbcap live on the bridge; every request the clients made is a
# CALL/RET pair with its req=:
#   nginx (listen ... http2: cleartext, prior knowledge) on port 8080, the
#   http decoder's port, found by the client preface: curl
#   --http2-prior-knowledge (3 GET, 1 POST) and h2load (-n 300 -c 3 -m 10:
#   10 concurrent streams per connection);
#   python3-grpcio on 50051: unary x20, server-, client-streaming and bidi,
#   and a method the server lacks (trailers-only UNIMPLEMENTED answer);
#   nghttpx (frontend without TLS on port 80, the http decoder's port, in front
#   of nginx) answering nghttp -u: the h2c upgrade, whose HTTP/1.1 request is
#   stream 1 (CALL, interim RET for the 101, final RET), and 2 more requests on
#   the upgraded connection (nghttp gives them streams 13 and 15);
#   server push: nghttp asks nginx for /push.html, nginx pushes /a.html?pushed
#   (PUSH_PROMISE): a RET with the promised request and no CALL.
# Needs root, ip(8), nginx, curl, h2load, nghttpx, nghttp, /usr/bin/python3
# with grpc; skips (77) otherwise.
set -u
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (network namespaces)" >&2; exit 77; }
PATH=$PATH:/usr/sbin:/sbin
for t in ip nginx curl h2load nghttpx nghttp; do
	command -v $t >/dev/null 2>&1 || { echo "skipped: $t not installed" >&2; exit 77; }
done
py=/usr/bin/python3
$py -c 'import grpc' 2>/dev/null || { echo "skipped: python3-grpcio not installed" >&2; exit 77; }
mkdir -p "$BB_TMP"
T=$(cd "$BB_TMP" && pwd)
. "$BB_SRC/tests/cli/netns.sh"
rig_extra_cleanup() {
	[ -s "$T/nginx.pid" ] && kill "$(cat "$T/nginx.pid" 2>/dev/null)" 2>/dev/null
}
rig_up h2 230
srv=$net.2
mkdir -p "$T/www" "$T/tmp"
head -c 3000 /dev/zero | tr '\0' x >"$T/www/index.html"
echo page >"$T/www/push.html"
cp "$T/www/index.html" "$T/www/a.html"
cat >"$T/nginx.conf" <<NGEOF
worker_processes 1;
pid $T/nginx.pid;
error_log $T/error.log;
events { worker_connections 256; }
http {
	access_log off;
	client_body_temp_path $T/tmp;
	proxy_temp_path $T/tmp;
	fastcgi_temp_path $T/tmp;
	uwsgi_temp_path $T/tmp;
	scgi_temp_path $T/tmp;
	server {
		listen $srv:8080 http2;
		root $T/www;
		location = /post { return 200 "posted\\n"; }
		location = /push.html { http2_push /a.html?pushed; }
	}
	server {
		listen 127.0.0.1:8081;
		root $T/www;
	}
}
NGEOF
ip netns exec "$ns_s" nginx -t -c "$T/nginx.conf" >"$T/nginx-t.log" 2>&1 || { echo "skipped: nginx -t failed: $(cat "$T/nginx-t.log")" >&2; exit 77; }
ip netns exec "$ns_s" nginx -c "$T/nginx.conf" -g 'daemon off;' &
pids="$pids $!"
ip netns exec "$ns_s" $py "$BB_SRC/tests/cli/dec_http2_grpc.py" server "$srv" 50051 2>"$T/grpc-server.err" &
pids="$pids $!"
ip netns exec "$ns_s" nghttpx --conf=/dev/null --frontend="$srv,80;no-tls" \
	--backend=127.0.0.1,8081 --workers=1 --errorlog-file="$T/nghttpx.log" \
	--accesslog-file=/dev/null 2>"$T/nghttpx.err" &
pids="$pids $!"
i=0
until ip netns exec "$ns_c" curl -s --http2-prior-knowledge -o /dev/null "http://$srv:8080/"; do
	i=$((i + 1)); [ $i -gt 50 ] && { echo "FAIL: nginx did not start"; cat "$T/error.log"; exit 1; }; sleep 0.1
done

"$BB_BIN/bbcap" -i "$br" -w "$T/h2.tr" tcp port 8080 or tcp port 50051 or tcp port 80 2>"$T/bbcap.err" &
cap=$!
pids="$pids $cap"
i=0
until grep -qs '^#bbtrace' "$T/h2.tr".partial.* 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 50 ] && { echo "FAIL: bbcap did not start"; cat "$T/bbcap.err"; exit 1; }; sleep 0.1
done
sleep 0.5
fail=0
for k in 1 2 3; do
	ip netns exec "$ns_c" curl -s --http2-prior-knowledge -o /dev/null "http://$srv:8080/a.html?curl=$k" ||
		{ echo "FAIL: curl"; fail=1; }
done
# nginx's `return` answers without reading the body, then may reset the stream
# (RST_STREAM NO_ERROR) while curl still sends it: curl then exits 92 though the
# response came whole. Either way the exchange is one CALL/RET pair.
ip netns exec "$ns_c" curl -s --http2-prior-knowledge -o /dev/null -d 'x=1' "http://$srv:8080/post?x=2"
rc=$?
[ $rc = 0 ] || [ $rc = 92 ] || { echo "FAIL: curl POST: exit $rc"; fail=1; }
ip netns exec "$ns_c" h2load -n 300 -c 3 -m 10 "http://$srv:8080/index.html" >"$T/h2load.out" 2>&1 ||
	{ echo "FAIL: h2load"; cat "$T/h2load.out"; fail=1; }
ip netns exec "$ns_c" $py "$BB_SRC/tests/cli/dec_http2_grpc.py" client "$srv" 50051 20 >"$T/grpc.out" 2>"$T/grpc.err" ||
	{ echo "FAIL: gRPC client: $(tail -3 "$T/grpc.err")"; fail=1; }
i=0
until ip netns exec "$ns_c" curl -s -o /dev/null "http://$srv:80/a.html?ready" 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 50 ] && { echo "FAIL: nghttpx did not start: $(tail -3 "$T/nghttpx.log")"; fail=1; break; }; sleep 0.1
done
ip netns exec "$ns_c" nghttp -u "http://$srv/a.html?up=1" "http://$srv/a.html?up=2" \
	"http://$srv/index.html?up=3" >"$T/nghttp.out" 2>&1 ||
	{ echo "FAIL: nghttp -u: $(tail -3 "$T/nghttp.out")"; fail=1; }
ip netns exec "$ns_c" nghttp "http://$srv:8080/push.html" >"$T/push.out" 2>&1 ||
	{ echo "FAIL: nghttp push: $(tail -3 "$T/push.out")"; fail=1; }
sleep 0.5
kill -INT $cap
wait $cap
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: bbcap exit $rc: $(cat "$T/bbcap.err")"; fail=1; }
grep -v '^#' "$T/h2.tr" >"$T/recs"

# pairs REQ WANT: WANT CALLs with req=REQ (URL-encoded as in the trace), each
# answered by a RET with its id and the same req=.
pairs() {
	c=$(awk -F'\t' -v r="req=$1" '$2 == "CALL" && $7 == r' "$T/recs" | grep -c "proto=http2")
	p=$(awk -F'\t' -v r="req=$1" '$7 == r && $2 == "CALL" { c[$5] = 1 } $7 == r && $2 == "RET" && ($5 in c) { n++ } END { print n + 0 }' "$T/recs")
	if [ "$c" = "$2" ] && [ "$p" = "$2" ]; then
		echo "ok   $1: $c CALL, $p answered"
	else
		echo "FAIL $1: $c CALL, $p answered, the client made $2"
		fail=1
	fi
}
for k in 1 2 3; do
	pairs "GET%20/a.html?curl=$k" 1
done
pairs "POST%20/post?x=2" 1
h2done=$(sed -n 's/^requests: .* \([0-9][0-9]*\) succeeded.*/\1/p' "$T/h2load.out")
pairs "GET%20/index.html" "${h2done:-300}"
[ "${h2done:-0}" = 300 ] || { echo "FAIL: h2load: $(grep '^requests:' "$T/h2load.out")"; fail=1; }
while read -r m c; do
	pairs "POST%20$m" "$c"
done <"$T/grpc.out"
[ "$(wc -l <"$T/grpc.out")" = 5 ] || { echo "FAIL: gRPC client did not finish"; fail=1; }
# h2c upgrade: stream 1 is the HTTP/1.1 request; its RETs are the 101 and the
# HTTP/2 response; two more requests follow on the upgraded connection.
up=$(awk -F'\t' '$7 == "req=GET%20/a.html?up=1" && $5 ~ /\.s1$/ { print $2 }' "$T/recs" | tr '\n' ' ')
if [ "$up" = "CALL RET RET " ]; then
	echo "ok   h2c upgrade: stream 1 GET /a.html?up=1: CALL, RET (101), RET"
else
	echo "FAIL h2c upgrade: stream 1 records: '$up'"
	fail=1
fi
pairs "GET%20/a.html?up=2" 1
pairs "GET%20/index.html?up=3" 1
# on the upgraded connection (stream 1's connection)
c1=$(awk -F'\t' '$7 == "req=GET%20/a.html?up=1" { split($5, a, "."); print a[1]; exit }' "$T/recs")
[ "$(grep -c "	CALL	.*	$c1\.s[0-9]*	proto=http2	" "$T/recs")" = 3 ] ||
	{ echo "FAIL: the 3 nghttp requests are not on one upgraded connection"; fail=1; }
pairs "GET%20/push.html" 1
pushed=$(awk -F'\t' '$7 == "req=GET%20/a.html?pushed" { print $2 }' "$T/recs" | tr '\n' ' ')
[ "$pushed" = "RET " ] && echo "ok   pushed GET /a.html?pushed: RET without CALL" ||
	{ echo "FAIL pushed /a.html?pushed: '$pushed'"; fail=1; }
awk -F'\t' '$2 == "CALL" { c[$5] = 1 } $2 == "RET" && !($5 in c) && $7 !~ /pushed/ { n++ } END { exit n > 0 }' "$T/recs" ||
	{ echo "FAIL: a return without its call"; fail=1; }
grep '^#capture' "$T/h2.tr" | grep -q ' http2=calls:[0-9]*,rets:[0-9]*,unanswered:0,unmatched_ret:1,malformed:0' ||
	{ echo "FAIL: $(grep '^#capture' "$T/h2.tr")"; fail=1; }
# h2load -m 10: streams of one connection overlap (calls outstanding at once).
conc=$(sort -t '	' -k1,1 -s "$T/recs" | awk -F'\t' '{ split($5, a, ".") }
	$2 == "CALL" && $7 ~ /index.html/ { o[a[1]]++; if (o[a[1]] > m) m = o[a[1]] }
	$2 == "RET" && $7 ~ /index.html/ { o[a[1]]-- } END { print m + 0 }')
echo "h2load: up to $conc streams outstanding on one connection; $(grep '^#capture' "$T/h2.tr" | grep -o 'http2=[^ ]*')"
[ "$conc" -ge 2 ] || { echo "FAIL: no concurrent streams seen"; fail=1; }
exit $fail

#!/bin/sh
# bbnest_otlp.sh - bbnest --otlp and --otlp-endpoint, read by an independent consumer: the
# OpenTelemetry .proto files compiled by protoc, the output parsed by python3-protobuf's
# json_format into ExportTraceServiceRequest (tests/otlp/otlp_check.py): span count = calls
# of the instances, every parent id resolves. The POST goes to a tiny collector on loopback
# (tests/otlp/otlp_server.py); a collector's error is bbnest's error.
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
nest=$BB_BIN/bbnest
py=/usr/bin/python3
command -v protoc >/dev/null 2>&1 || { echo "SKIP: needs protoc (protobuf-compiler)"; exit 77; }
$py -c 'import google.protobuf' 2>/dev/null || { echo "SKIP: needs python3-protobuf"; exit 77; }
fail=0
no() { echo "FAIL: $*"; fail=1; }
check() { $py "$BB_SRC/tests/otlp/otlp_check.py" "$BB_SRC/tests/otlp/proto" gen "$@"; }
srv_pid=""
stop() { [ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null; srv_pid=""; }
trap stop EXIT
serve() { # DIR STATUS: starts the collector, sets $port
	rm -rf "$1" port
	mkdir -p "$1"
	$py "$BB_SRC/tests/otlp/otlp_server.py" "$1" port "$2" &
	srv_pid=$!
	i=0
	while [ ! -s port ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	port=$(cat port 2>/dev/null)
}

"$BB_BIN/bbcap" -q -r "$BB_SRC/examples/rig/delay.pcap" --names "$BB_SRC/examples/rig/hosts" \
	-w rig.tr 2>/dev/null || no "bbcap failed"
"$BB_BIN/maketrace" -q -d 60 -o mt.tr "$BB_SRC/maketrace/configs/multitier.json" ||
	no "maketrace failed"
for t in rig mt; do
	"$nest" -q --penalty 0,2,2 --instances $t.jsonl --otlp $t.otlp.json -o /dev/null $t.tr 2>err ||
		no "$t: bbnest --otlp failed: $(cat err)"
	check $t.jsonl $t.otlp.json || no "$t: the OTLP file does not parse or does not match"
	# deterministic ids: the same run, the same bytes
	"$nest" -q --penalty 0,2,2 --otlp $t.again.json -o /dev/null $t.tr 2>err
	cmp -s $t.otlp.json $t.again.json || no "$t: two runs give different OTLP output"
done
grep -q '"key":"bb.req","value":{"stringValue":"GET /item?id=delay-' rig.otlp.json ||
	no "rig: no bb.req attribute"

# POST to a collector on loopback: 256 instances a request, all of them arrive
serve posts 200
if [ -z "$port" ]; then
	no "the test collector did not start"
else
	"$nest" -q --penalty 0,2,2 --otlp-endpoint "http://127.0.0.1:$port" -o /dev/null rig.tr \
		2>err || no "--otlp-endpoint failed: $(cat err)"
	n=$(ls posts | wc -l)
	[ "$n" -ge 2 ] || no "$n requests for $(wc -l <rig.jsonl) instances"
	check rig.jsonl posts/*.json || no "the POSTed spans do not parse or do not match"
fi
stop
# a collector that fails: exit 1, the status named
serve bad 503
"$nest" -q --otlp-endpoint "http://127.0.0.1:$port/v1/traces" -o /dev/null mt.tr 2>err; rc=$?
[ $rc -eq 1 ] && grep -q "^bbnest: error: http://127.0.0.1:$port/v1/traces: .*HTTP 503" err ||
	no "collector answering 503: exit $rc, $(cat err)"
stop
# nobody listening (the port just freed), and not a URL
"$nest" -q --otlp-endpoint "http://127.0.0.1:$port" -o /dev/null mt.tr 2>err; rc=$?
[ $rc -eq 1 ] && grep -q '^bbnest: error: http://127.0.0.1:' err ||
	no "refused connection: exit $rc, $(cat err)"
"$nest" -q --otlp-endpoint "localhost:4318" -o /dev/null mt.tr 2>err; rc=$?
[ $rc -eq 1 ] && grep -q 'not an http:// or https:// URL' err || no "bad URL: exit $rc, $(cat err)"
exit $fail

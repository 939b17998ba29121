#!/bin/sh
# run.sh - run every benchmark: sh tests/bench/run.sh BUILD_DIR
# Append new benchmarks to BENCHES (each is BUILD_DIR/bin/NAME).
set -eu

BENCHES="bench_trace"
BENCHES="$BENCHES bench_nesting"
BENCHES="$BENCHES bench_instances"
BENCHES="$BENCHES bench_conv"
BENCHES="$BENCHES bench_capture"
BENCHES="$BENCHES bench_capture_wm"
BENCHES="$BENCHES bench_dec_ms"
BENCHES="$BENCHES bench_dec_http"
BENCHES="$BENCHES bench_dec_http2"
BENCHES="$BENCHES bench_dec_redis"
BENCHES="$BENCHES bench_dec_sql"

if [ $# -ne 1 ]; then
	echo "usage: sh tests/bench/run.sh BUILD_DIR" >&2
	exit 2
fi
bin=$1/bin
status=0
for b in $BENCHES; do
	if [ ! -x "$bin/$b" ]; then
		echo "run.sh: error: $bin/$b not built" >&2
		status=1
		continue
	fi
	echo "== $b"
	"$bin/$b" || status=1
done
exit $status

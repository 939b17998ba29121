#!/bin/sh
# dec_pipeline_fixture.sh - bbcap on tests/fixtures/pipeline/pipeline.pcap.gz
# (real nginx, redis, memcached, PostgreSQL and MariaDB answering pipelines 1,
# 16, 17, 100, 1,025 and 5,000 deep, and a memcached connection picked up
# mid-stream whose first reply is a miss): every reply pairs with its own
# call, none unmatched (dec_pipeline_verify.sh), nothing lost to the bound of
# the reply queue.
set -u
mkdir -p "$BB_TMP"
T=$(cd "$BB_TMP" && pwd)
gzip -dc "$BB_SRC/tests/fixtures/pipeline/pipeline.pcap.gz" >"$T/pipeline.pcap" || exit 1
"$BB_BIN/bbcap" -q -r "$T/pipeline.pcap" -w "$T/pipeline.tr" 2>"$T/bbcap.err" ||
	{ echo "FAIL: bbcap"; cat "$T/bbcap.err"; exit 1; }
fail=0
sh "$BB_SRC/tests/cli/dec_pipeline_verify.sh" "$T/pipeline.tr" || fail=1
if grep -q '^#capture.*queue_full' "$T/pipeline.tr"; then
	echo "FAIL: calls lost to the reply queue's bound: $(grep '^#capture' "$T/pipeline.tr")"
	fail=1
fi
exit $fail

#!/bin/sh
# bbnest_instances_mem.sh - bbnest --instances streams: with pass 2 reading the trace
# again (--memory 0), what --instances adds to bbnest's max RSS is no more (give or take
# 2 MB) on a 200,000-message trace than on a 20,000-message one. The figures up to 10^7
# messages, OTLP too: tests/bench/bench_instances.sh.in.
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
fail=0
no() { echo "FAIL: $*"; fail=1; }
# memory is the program's: AddressSanitizer's quarantine of freed blocks would
# grow with the work done, not with what is held
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
export ASAN_OPTIONS
rss() {
	# shellcheck disable=SC2086
	"$BB_BIN/bbnest" -q --stats --memory 0 $2 -o /dev/null "$1" 2>err ||
		{ no "bbnest $1 $2: $(cat err)"; echo 0; return; }
	sed -n 's/.*max_rss_kb \([0-9]*\).*/\1/p' err
}
for n in 20000 200000; do
	"$BB_BIN/maketrace" -q -d 0 -N $n -o t$n.tr "$BB_SRC/maketrace/configs/multitier.json" ||
		no "maketrace -N $n failed"
done
# what the instances add to bbnest's own memory, at each size
base_s=$(rss t20000.tr "")
with_s=$(rss t20000.tr "--instances i.jsonl")
base_l=$(rss t200000.tr "")
with_l=$(rss t200000.tr "--instances i.jsonl")
lines=$(wc -l <i.jsonl)
echo "max RSS without/with --instances: 20,000 messages $base_s/$with_s kB," \
	"200,000 messages $base_l/$with_l kB ($lines instances)"
[ "$lines" -gt 20000 ] || no "only $lines instances from 200,000 messages"
[ $((with_l - base_l)) -le $((with_s - base_s + 2048)) ] ||
	no "--instances costs more memory on the longer trace"
exit $fail

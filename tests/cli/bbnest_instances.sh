#!/bin/sh
# bbnest_instances.sh - bbnest --instances: one JSON line per instance of the run (as many
# as stats.instances), each pattern's slowest instance at its p100, the same lines whether
# pass 2 replays the messages or reads the trace again, the oracle's instances too, and
# write errors reported.
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
nest=$BB_BIN/bbnest
py=/usr/bin/python3
check=$BB_SRC/tests/cli/instances_check.py
[ -x $py ] || { echo "SKIP: needs $py"; exit 77; }
fail=0
no() { echo "FAIL: $*"; fail=1; }

# a synthetic multi-tier trace (about 40,000 messages) and the rig's capture
"$BB_BIN/maketrace" -q -d 100 -o mt.tr "$BB_SRC/maketrace/configs/multitier.json" ||
	no "maketrace failed"
"$BB_BIN/bbcap" -q -r "$BB_SRC/examples/rig/normal.pcap" --names "$BB_SRC/examples/rig/hosts" \
	-w rig.tr 2>/dev/null || no "bbcap failed"
for t in mt rig; do
	opts=""
	[ $t = rig ] && opts="--penalty 0,2,2 --smooth 2"
	# shellcheck disable=SC2086
	"$nest" -q $opts --json --no-bins --instances $t.jsonl $t.tr >$t.json 2>err ||
		no "$t: bbnest --instances failed: $(cat err)"
	$py "$check" $t.jsonl $t.json || no "$t: instances do not match the patterns"
	# pass 2 from the trace instead of the kept messages: the same instances
	# (content evidence needs the messages in memory: both without it)
	# shellcheck disable=SC2086
	"$nest" -q $opts --no-content --instances $t.nc.jsonl $t.tr >/dev/null 2>err ||
		no "$t: --no-content failed: $(cat err)"
	# shellcheck disable=SC2086
	"$nest" -q $opts --no-content --memory 0 --instances $t.m0.jsonl $t.tr >/dev/null 2>err ||
		no "$t: --memory 0 failed: $(cat err)"
	cmp -s $t.nc.jsonl $t.m0.jsonl || no "$t: --memory 0 gives other instances"
done
grep -q '"req":"GET /item?id=normal-' rig.jsonl || no "rig: no req= labels in the instances"
grep -q '"proto":"pgsql"' rig.jsonl || no "rig: no proto= in the instances"
# the true instances with --oracle: never ambiguous
"$nest" -q --oracle --json --no-bins --instances or.jsonl mt.tr >or.json 2>err ||
	no "--oracle --instances failed: $(cat err)"
$py "$check" or.jsonl or.json || no "oracle instances do not match the oracle's patterns"
grep -q '"ambiguous":true' or.jsonl && no "the oracle's instances are ambiguous"
# to standard output, with the patterns to a file
"$nest" -q --instances - -o pat.dot mt.tr >stdout.jsonl 2>err || no "--instances - failed"
cmp -s stdout.jsonl mt.jsonl || no "--instances - differs from the file"
# write errors
"$nest" -q --instances no/such/dir/x.jsonl mt.tr >/dev/null 2>err; rc=$?
[ $rc -eq 1 ] && grep -q '^bbnest: error: no/such/dir/x.jsonl: ' err ||
	no "unwritable --instances: exit $rc, $(cat err)"
if [ -w /dev/full ]; then
	"$nest" -q --instances /dev/full mt.tr >/dev/null 2>err; rc=$?
	[ $rc -eq 1 ] && grep -q '^bbnest: error: /dev/full: ' err ||
		no "full disk: exit $rc, $(cat err)"
fi
exit $fail

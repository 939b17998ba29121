#!/bin/sh
# bbcap_robustness.sh - bbcap -r on every file of the shared robustness corpus
# (truncated, corrupted, odd link types) and on the regression captures of
# tests/fuzz/regress/capture-* (one per crash ever found, named after it): no
# crash, no hang, no sanitizer report. Exit status 0 (read) or 1 (unreadable
# file) only. BB_ROBUSTNESS_LIMIT=N checks only the first N corpus files.
set -u
dir="$BB_SRC/../shared/corpus/robustness"
regress="$BB_SRC/tests/fuzz/regress"
if [ ! -d "$dir" ]; then
	echo "note: robustness corpus not found at $dir: regression captures only" >&2
	dir=""
fi
mkdir -p "$BB_TMP"
: "${ASAN_OPTIONS:=detect_leaks=1:abort_on_error=1}"
: "${UBSAN_OPTIONS:=print_stacktrace=1:halt_on_error=1}"
export ASAN_OPTIONS UBSAN_OPTIONS
limit=${BB_ROBUSTNESS_LIMIT:-0}
n=0 bad=0 unreadable=0
for f in "$regress"/capture-* ${dir:+"$dir"/*}; do
	n=$((n + 1))
	if [ "$limit" -gt 0 ] && [ "$n" -gt "$limit" ]; then
		n=$((n - 1))
		break
	fi
	timeout 60 "$BB_BIN/bbcap" -q -r "$f" -w /dev/null 2>"$BB_TMP/err"
	rc=$?
	if [ $rc -eq 1 ]; then
		unreadable=$((unreadable + 1))
	fi
	if { [ $rc -ne 0 ] && [ $rc -ne 1 ]; } ||
		grep -q -e 'Sanitizer' -e 'runtime error' "$BB_TMP/err"; then
		echo "FAIL ($rc) $f"
		head -20 "$BB_TMP/err"
		bad=$((bad + 1))
	fi
done
echo "$n files, $unreadable unreadable by libpcap, $bad failures"
[ $bad -eq 0 ]

#!/bin/sh
# cut.sh - a trace without the lines before (start) or after (end) a share of its span,
# as a capture begun or stopped while requests are in flight (header lines kept).
#
#   sh tests/rig/cut.sh TRACE start|end SHARE > OUT
set -u
[ $# -eq 3 ] || { echo "usage: sh $0 TRACE start|end SHARE" >&2; exit 2; }
case $2 in start | end) ;; *) echo "$0: error: '$2': start or end" >&2; exit 2 ;; esac
t0=$(grep -v '^#' "$1" | head -n 1 | cut -f1)
t1=$(grep -v '^#' "$1" | tail -n 1 | cut -f1)
awk -F'\t' -v t0="$t0" -v t1="$t1" -v f="$3" -v s="$2" \
	'/^#/ || (s == "start" && $1 >= t0 + f * (t1 - t0)) ||
	 (s == "end" && $1 <= t0 + f * (t1 - t0))' "$1"

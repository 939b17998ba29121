#!/bin/sh
# rescore.sh DIR - the table rows of rig_test.sh / rig2_test.sh again, for the
# runs kept in DIR (RIG_KEEP=DIR): bbnest with the option sets of rigtest.sh
# (BBNEST_OPTS adds one, RIG_NEST_OPTS is the one checked against the
# targets) on the same traces, so that options are compared without the
# run-to-run differences of new captures. No root needed. The delay rows
# follow when DIR holds normal.tr and delay.tr. Exit status 1 when a target
# is missed (RIG_LAX=1: 0), as in the tests.
#   BB_BIN=build/bin sh tests/rig/rescore.sh keep
set -u
[ $# = 1 ] && [ -d "$1" ] || { echo "usage: rescore.sh DIR (a RIG_KEEP directory)" >&2; exit 2; }
BB_SRC=${BB_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
: "${BB_BIN:?set BB_BIN to the directory of bbnest}"
. "$BB_SRC/tests/rig/rigtest.sh"
T=$(cd "$1" && pwd)
if [ -f "$T/front.log" ]; then # the second app
	logs="$T/front.log $T/search.log"
	via=front
else
	logs="$T/app1.log $T/app2.log $T/auth.log"
	via=app2
fi
for tr in "$T"/*.tr; do
	name=$(basename "$tr" .tr)
	case $name in *.path) continue ;; esac
	[ -f "$T/$name.client.log" ] || continue
	# shellcheck disable=SC2086
	nest_rows "$name" "$T/$name.client.log" $logs
done
if [ -f "$T/normal.tr" ] && [ -f "$T/delay.tr" ]; then
	# shellcheck disable=SC2086
	delay_rows "$T/delay.client.log" $logs --type item --via $via --node pg --ms 50
fi
exit $fail

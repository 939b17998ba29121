#!/bin/sh
# bbnest_onehost.sh - services on one host (issue 17): the one-host capture of
# tests/fixtures/onehost (client, nginx :8001, the app :8002, redis :6379 and
# PostgreSQL :5432, all on 127.0.0.1) gives one three-tier pattern per request
# type, with the counts the client logged (onehost.truth): a call leaving
# 127.0.0.1 nests under a call into a service on it (bbcap's #naming line), and
# the client's calls, which start requests, nest under nothing. Without the
# #naming line (names taken as opaque) nothing nests, as before.
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
command -v jq >/dev/null 2>&1 || { echo "SKIP: needs jq"; exit 77; }
fx=$BB_SRC/tests/fixtures/onehost
fail=0
no() { echo "FAIL: $*"; fail=1; }

"$BB_BIN/bbcap" -q -r "$fx/onehost.pcap" -w oh.tr 2>err || no "bbcap failed: $(cat err)"
grep -q '^#naming servers=auto' oh.tr || no "no #naming line"
"$BB_BIN/bbnest" -q --json --no-bins --rank count oh.tr >oh.json 2>err || no "bbnest failed: $(cat err)"
[ -s err ] && no "bbnest wrote to stderr: $(cat err)"
shape() { # the pattern's tree as text
	jq -r "$1"' | def t: .name + (if (.children | length) > 0 then "(" + ([.children[] | t] | join(" ")) + ")" else "" end); .root | t' oh.json
}
n=$(jq '.patterns | length' oh.json)
[ "$n" -eq 2 ] || no "$n patterns, want 2: $(jq -c '[.patterns[] | .count]' oh.json)"
item=$(awk '$1 == "item" {print $2}' "$fx/onehost.truth")
user=$(awk '$1 == "user" {print $2}' "$fx/onehost.truth")
s0=$(shape '.patterns[0]')
s1=$(shape '.patterns[1]')
c0=$(jq '.patterns[0].count' oh.json)
c1=$(jq '.patterns[1].count' oh.json)
want0='127.0.0.1(127.0.0.1:8001(127.0.0.1:8002(127.0.0.1:6379 127.0.0.1:5432)))'
want1='127.0.0.1(127.0.0.1:8001(127.0.0.1:8002(127.0.0.1:5432)))'
[ "$s0" = "$want0" ] && [ "$c0" -eq "$item" ] || no "item: '$s0' x $c0, want '$want0' x $item"
[ "$s1" = "$want1" ] && [ "$c1" -eq "$user" ] || no "user: '$s1' x $c1, want '$want1' x $user"
# the intervals hold the true counts
jq -e --argjson i "$item" --argjson u "$user" \
	'.patterns[0].count_interval[0] <= $i and $i <= .patterns[0].count_interval[1] and
	 .patterns[1].count_interval[0] <= $u and $u <= .patterns[1].count_interval[1]' oh.json \
	>/dev/null || no "count intervals: $(jq -c '[.patterns[] | .count_interval]' oh.json)"
# without #naming, names are opaque: four flat patterns, as bbnest did before
grep -v '^#naming' oh.tr >flat.tr
"$BB_BIN/bbnest" -q --json --no-bins flat.tr >flat.json || no "bbnest on flat.tr failed"
[ "$(jq '.patterns | length' flat.json)" -eq 4 ] || no "without #naming: $(jq '.patterns | length' flat.json) patterns, want 4"
exit $fail

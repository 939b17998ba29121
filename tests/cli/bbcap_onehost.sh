#!/bin/sh
# bbcap_onehost.sh - services that share one address are distinct nodes.
# tests/fixtures/onehost/onehost.pcap (made by make_onehost.sh there): a load
# client, nginx on 127.0.0.1:8001, an app (bbapp) on 127.0.0.1:8002, redis on
# 127.0.0.1:6379 and PostgreSQL on 127.0.0.1:5432, all on one loopback.
# bbcap's default naming gives each service its own node "127.0.0.1:PORT"
# (callers stay "127.0.0.1"), says so in "#naming servers=auto", and the
# calls into each service match what the client asked (onehost.truth):
# "item" requests through nginx and the app to redis and pg, "user" ones to
# pg; every call answered. --by-host gives the old single node. When run as
# root with the servers installed, a fresh capture is made the same way
# (make_onehost.sh) and checked too; without them that part is skipped.
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
fail=0
no() { echo "FAIL: $*"; fail=1; }
fx=$BB_SRC/tests/fixtures/onehost

check() { # PCAP TRUTH WHAT
	"$BB_BIN/bbcap" -q -r "$1" -w one.tr 2>one.err || no "$3: bbcap exit $?: $(cat one.err)"
	[ -s one.err ] && no "$3: bbcap stderr: $(cat one.err)"
	item=$(awk '$1 == "item" { print $2 }' "$2")
	user=$(awk '$1 == "user" { print $2 }' "$2")
	[ "${item:-0}" -gt 0 ] && [ "${user:-0}" -gt 0 ] || no "$3: truth '$(cat "$2")'"
	grep -q '^#naming servers=auto$' one.tr || no "$3: no '#naming servers=auto' line"
	nodes=$(grep -v '^#' one.tr | cut -f3,4 | tr '\t' '\n' | sort -u | tr '\n' ' ')
	[ "$nodes" = "127.0.0.1 127.0.0.1:5432 127.0.0.1:6379 127.0.0.1:8001 127.0.0.1:8002 " ] ||
		no "$3: nodes '$nodes'"
	calls() { grep -c "	CALL	127.0.0.1	127.0.0.1:$1	.*req=$2" one.tr; }
	[ "$(calls 8001 'GET%20/item')" = "$item" ] || no "$3: $(calls 8001 'GET%20/item') item calls into nginx, want $item"
	[ "$(calls 8002 'GET%20/item')" = "$item" ] || no "$3: $(calls 8002 'GET%20/item') item calls into the app, want $item"
	[ "$(calls 8001 'GET%20/user')" = "$user" ] || no "$3: $(calls 8001 'GET%20/user') user calls into nginx, want $user"
	[ "$(calls 8002 'GET%20/user')" = "$user" ] || no "$3: $(calls 8002 'GET%20/user') user calls into the app, want $user"
	[ "$(calls 6379 INCR)" = "$item" ] || no "$3: $(calls 6379 INCR) redis calls, want $item"
	[ "$(calls 5432 SELECT)" = "$((item + user))" ] || no "$3: $(calls 5432 SELECT) pg calls, want $((item + user))"
	grep '^#capture' one.tr | tr ' ' '\n' | grep '=calls:' | grep -v 'unanswered:0,unmatched_ret:0,malformed:0' &&
		no "$3: unanswered, unmatched or malformed messages"
	# the old naming: one node for everything
	"$BB_BIN/bbcap" -q --by-host -r "$1" -w host.tr || no "$3: --by-host exit $?"
	grep -q '^#naming servers=hosts$' host.tr || no "$3: no '#naming servers=hosts' line"
	[ "$(grep -v '^#' host.tr | cut -f3,4 | tr '\t' '\n' | sort -u)" = 127.0.0.1 ] ||
		no "$3: --by-host does not collapse the services"
	echo "$3: item $item, user $user; nodes $nodes"
}
check "$fx/onehost.pcap" "$fx/onehost.truth" fixture

# a fresh capture, when this machine can make one
sh "$fx/make_onehost.sh" "$BB_TMP/fresh" >make.out 2>make.err
rc=$?
if [ $rc -eq 77 ]; then
	echo "fresh capture skipped: $(cat make.err)"
elif [ $rc -ne 0 ]; then
	no "make_onehost.sh exit $rc: $(cat make.out make.err)"
else
	check "$BB_TMP/fresh/onehost.pcap" "$BB_TMP/fresh/onehost.truth" fresh
fi
exit $fail

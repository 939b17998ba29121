#!/bin/sh
# dec_pipeline_verify.sh TRACE - checks a trace of dec_pipeline_client.py's
# traffic (dec_pipeline_live.sh, dec_pipeline_fixture.sh): for http, redis,
# memcache, pgsql and mysql, one connection per depth 1, 16, 17, 100, 1,025
# and 5,000 whose every reply pairs with its own call (id and req= of a call
# of its connection, in order, none unmatched), and the memcached connection
# picked up mid-stream with its 3 calls (a miss answered by a bare END first)
# all paired. Prints each connection's depth reached (calls waiting at once);
# on the deepest connection of each protocol it must pass 1,088 (the most the
# decoders kept before the shared reply queue: 16, or 64 + 1,024), or the
# capture does not test what it should.
set -u
tr=$1
here=$(dirname "$0")
fail=0
awk -f "$here/dec_pipeline_check.awk" "$tr" >"$tr.conns"
for proto in http redis memcache pgsql mysql; do
	# pgsql: the startup is a call of each connection too
	want="1 16 17 100 1025 5000"
	[ $proto = pgsql ] && want="2 17 18 101 1026 5001"
	[ $proto = memcache ] && want="1 3 16 17 100 1025 5000"
	got=$(awk -v p=$proto '$1 == p { print $3 }' "$tr.conns" | sort -n | tr '\n' ' ' | sed 's/ $//')
	if [ "$got" != "$want" ]; then
		echo "FAIL: $proto connections with $got calls, want $want"
		fail=1
	fi
	while read -r p conn calls rets maxw errs first; do
		[ "$p" = $proto ] || continue
		if [ "$rets" != "$calls" ] || [ "$errs" != 0 ]; then
			echo "FAIL: $proto $conn: $calls calls, $rets returns, $errs wrong; first: $first"
			fail=1
		else
			echo "ok   $proto $conn: $calls calls, all paired in order, $maxw waiting at most"
		fi
		if [ "$calls" -ge 5000 ] && [ "$maxw" -le 1088 ]; then
			echo "FAIL: $proto $conn: only $maxw calls waited at once"
			fail=1
		fi
	done <"$tr.conns"
done
exit $fail

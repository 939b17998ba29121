#!/bin/sh
# dec_sql_counts.sh - the pgsql, mysql and kafka decoders: CALL and RET counts
# on every file of their protocols in the shared corpus agree with tshark's
# (the requests/responses columns of MANIFEST.tsv, see ORACLE.md), every
# return carries the id of a call of the same decoder where the call was
# captured, and a few req= values are what the client asked.
set -u
corpus="$BB_SRC/../shared/corpus"
if [ ! -f "$corpus/MANIFEST.tsv" ]; then
	echo "skipped: shared corpus not found at $corpus" >&2
	exit 77
fi
mkdir -p "$BB_TMP"
fail=0 n=0
awk -F'\t' '$2 == "protocols" && ($8 == "pgsql" || $8 == "mysql" || $8 == "kafka") {
	print $1 "\t" $8 "\t" $9 "\t" $10 "\t" $11 }' "$corpus/MANIFEST.tsv" | sort -u >"$BB_TMP/list"
while IFS='	' read -r file dec req resp notes; do
	# "tshark needs: -d tcp.port==8000,pgsql" -> --decode-as 8000=pgsql
	da=$(echo "$notes" | sed -n 's/.*-d tcp\.port==\([0-9]*\),\([a-z]*\).*/--decode-as \1=\2/p')
	out="$BB_TMP/$(basename "$file").tr"
	# shellcheck disable=SC2086
	if ! "$BB_BIN/bbcap" -q $da -r "$corpus/$file" -w "$out" 2>"$BB_TMP/err"; then
		echo "FAIL $file: bbcap failed: $(cat "$BB_TMP/err")"
		fail=1
		continue
	fi
	if [ -s "$BB_TMP/err" ]; then
		echo "FAIL $file: stderr: $(cat "$BB_TMP/err")"
		fail=1
	fi
	calls=$(grep -c "	CALL	.*	proto=$dec	" "$out")
	rets=$(grep -c "	RET	.*	proto=$dec	" "$out")
	n=$((n + 1))
	if [ "$calls" != "$req" ] || [ "$rets" != "$resp" ]; then
		echo "FAIL $file: calls/returns $calls/$rets, tshark $req/$resp"
		fail=1
	else
		echo "ok   $file: $calls/$rets $da"
	fi
	# No return may pair with a call of another id: every RET whose call was
	# captured (its id is not "?") has a CALL with that id.
	bad=$(grep -v '^#' "$out" | awk -F'\t' '$2 == "CALL" { c[$5] = 1 }
		$2 == "RET" && $5 !~ /\?$/ && !($5 in c) && $5 !~ /#/ { n++ } END { print n + 0 }')
	[ "$bad" = 0 ] || { echo "FAIL $file: $bad returns with an ordinal id no call has"; fail=1; }
done <"$BB_TMP/list"

# What was asked, as the client sent it (checked against tshark's pgsql.query,
# mysql.query and kafka.topic_name fields by hand).
#   file  decoder  count  op  req
cat >"$BB_TMP/reqs" <<'REQS'
protocols/pgsql__zeek__psql-create-insert-select-delete-drop.pcap	pgsql	1	CALL	STARTUP
protocols/pgsql__zeek__psql-create-insert-select-delete-drop.pcap	pgsql	1	RET	CREATE%20TABLE%20t
protocols/pgsql__zeek__greenhouse-app.pcap	pgsql	16	RET	SELECT%20plant
protocols/pgsql__zeek__greenhouse-app.pcap	pgsql	2	CALL	SELECT%20pg_type
protocols/pgsql__zeek__greenhouse-app.pcap	pgsql	1	CALL	INSERT%20user
protocols/pgsql__ndpi__pgsql.pcap	pgsql	2	CALL	SELECT%20users
protocols/mysql__zeek__mysql.pcap	mysql	1	CALL	CREATE%20TABLE%20foo
protocols/mysql__zeek__mysql.pcap	mysql	3	RET	SELECT%20foo
protocols/mysql__zeek__many-query-attrs.pcap	mysql	1	CALL	SHOW%20tables
protocols/mysql__zeek__many-query-attrs.pcap	mysql	1	CALL	QUIT
protocols/mysql__deepflow__mysql-statement.pcap	mysql	1	RET	SELECT%20domain
protocols/mysql__deepflow__mysql-statement.pcap	mysql	4	CALL	PREPARE%20SELECT%20domain
protocols/kafka__ndpi__kafka.pcapng	kafka	2	RET	Produce%20LB_MAIN_LOG_INPUT
protocols/kafka__ndpi__kafka.pcapng	kafka	1	RET	Metadata%20sampleTopic
protocols/kafka__deepflow__00-produce-v7-sw8.pcap	kafka	1	RET	Produce%20quickstart-events
protocols/kafka__deepflow__mixed-with-unsupported.pcap	kafka	1	RET	OffsetCommit
REQS
while IFS='	' read -r file dec want op rq; do
	out="$BB_TMP/$(basename "$file").tr"
	got=$(grep -c "	$op	.*	proto=$dec	req=$rq	" "$out")
	if [ "$got" = "$want" ]; then
		echo "ok   $file: $want $op req=$rq"
	else
		echo "FAIL $file: $got $op with req=$rq, want $want"
		fail=1
	fi
done <"$BB_TMP/reqs"
echo "$n files checked"
exit $fail

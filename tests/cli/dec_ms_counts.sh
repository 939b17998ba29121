#!/bin/sh
# dec_ms_counts.sh - the ldap, dcerpc and smb2 decoders: CALL and RET counts on
# every corpus file of those protocols agree with tshark's (the requests and
# responses columns of the shared corpus MANIFEST.tsv, ORACLE.md), and every
# RET has a CALL of the same id in the trace, except where noted.
set -u
corpus="$BB_SRC/../shared/corpus"
if [ ! -f "$corpus/MANIFEST.tsv" ]; then
	echo "skipped: shared corpus not found at $corpus" >&2
	exit 77
fi
mkdir -p "$BB_TMP"
fail=0 n=0
awk -F'\t' '$2 == "protocols" && ($8 == "ldap" || $8 == "dcerpc" || $8 == "smb2") {
	print $1 "\t" $8 "\t" $9 "\t" $10 }' "$corpus/MANIFEST.tsv" | sort -u >"$BB_TMP/list"
while IFS='	' read -r file dec req resp; do
	out="$BB_TMP/out.tr"
	if ! "$BB_BIN/bbcap" -q -r "$corpus/$file" -w "$out" 2>"$BB_TMP/err"; then
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
	unpaired_ok=0
	why=
	case $file in
	# LDAP: the RET of a search is its searchResDone; tshark's responses
	# column also counts every searchResEntry/searchResRef, which the
	# oracle marks "partial" (ORACLE.md). Final responses, measured with
	#   python3 oracle.py ldap FILE | grep RETURN | grep -vc partial
	*ldap__zeek__missing_ldap_logs.pcapng)
		# 74 responses = 20 final + 54 searchResEntry. The three
		# bindRequests (Kerberos tickets) are TSO super-frames of 1848
		# and 1880 bytes (IPv4 total length and header checksum 0:
		# captured on the sender before the NIC cut them); bbcap takes
		# their captured length, as tshark does: 22 calls as tshark.
		resp=20
		why="54 partial results (searchResEntry)" ;;
	*ldap__zeek__sasl-ntlm.pcap)
		resp=3 why="9 partial results (searchResEntry)" ;;
	# DCE-RPC
	*dcerpc__zeek__mapi.pcap)
		# tshark 211/218 includes 38/46 DCE-RPC PDUs carried in SMB1
		# named pipes on port 139 (not decoded: SMB1 transactions);
		# bbcap finds one stream more than tshark (1153 -> 1032, 5
		# requests and 5 responses whose bind is before the capture:
		# tshark takes it for ANSI C12.22, the dcerpc probe knows it).
		# The first response answers a call made before the capture.
		req=178 resp=177 unpaired_ok=1
		why="-38/-46 DCE-RPC in SMB1 pipes, +5/+5 a stream tshark misses" ;;
	*dcerpc__ndpi__dcerpc.pcap)
		# Connectionless over UDP: the responses come from another
		# port than the requests went to (another flow: the decoder
		# cannot match them, the trace ids do, "a<activity>.<seq>").
		unpaired_ok=1 why="replies on another UDP flow" ;;
	# SMB2
	*smb2__arkime__wireshark-smb-on-windows10.pcap)
		# Five connections open with an SMB1 NEGOTIATE; bbcap makes
		# it the call that the SMB2 NEGOTIATE response (MessageId 0)
		# answers (four of them; one server answers in SMB1);
		# tshark's smb2 filter does not see SMB1.
		req=33 why="+5 SMB1 NEGOTIATE calls" ;;
	*smb2__ndpi__smb_deletefile.pcap | *smb2__zeek__smb2readwrite.pcap)
		# The capture starts while one request is pending: its
		# response has no call.
		unpaired_ok=1 why="one response to a call made before the capture" ;;
	esac
	# every return pairs with a call of the same id; SMB2 oplock and lease
	# break notifications (MessageId 0xFFFFFFFFFFFFFFFF, [MS-SMB2]
	# 2.2.23) are returns that no call asked for
	unpaired=$(grep -v '^#' "$out" | awk -F'	' -v d="proto=$dec" '$6 == d && $2 == "CALL" { c[$5] = 1 }
		$6 == d && $2 == "RET" && !($5 in c) && $5 !~ /[.]18446744073709551615$/ { n++ }
		END { print n + 0 }')
	n=$((n + 1))
	if [ "$calls" != "$req" ] || [ "$rets" != "$resp" ]; then
		echo "FAIL $file: calls/returns $calls/$rets, want $req/$resp ${why:+($why)}"
		fail=1
	elif [ "$unpaired" != 0 ] && [ $unpaired_ok = 0 ]; then
		echo "FAIL $file: $unpaired returns without their call"
		fail=1
	else
		echo "ok   $file: $calls/$rets ${why:+($why)}"
	fi
done <"$BB_TMP/list"
[ $n -ge 15 ] || { echo "FAIL only $n files of ldap/dcerpc/smb2 in the manifest"; fail=1; }
echo "$n files checked"
exit $fail

#!/bin/sh
# dec_ms_smb_live.sh - Samba on a namespace bridge, bbcap live on the bridge:
#   smbd (a guest share in the test's scratch directory) answering smbclient
#   doing ls, put and get over SMB2/3: each command a CALL/RET pair with its
#   req= (CREATE with the file name, WRITE, READ, QUERY_DIRECTORY ...);
#   samba-dcerpcd serving DCE-RPC over TCP (ncacn_ip_tcp: the endpoint mapper
#   on port 135, srvsvc on a dynamic port) answering rpcclient's srvinfo and
#   netshareenum: epm.op3 (ept_map), bind srvsvc, srvsvc.op21
#   (NetrServerGetInfo) and srvsvc.op36 (tshark: NetShareEnum) as CALL/RET
#   pairs.
# The counts also equal tshark's on a tcpdump of the same traffic when tshark
# is there. Needs root, ip(8), smbd, smbclient, rpcclient and samba-dcerpcd;
# skips (77) otherwise.
set -u
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (network namespaces)" >&2; exit 77; }
PATH=$PATH:/usr/sbin:/sbin
for t in ip setsid smbd smbclient rpcclient tcpdump; do
	command -v $t >/dev/null 2>&1 || { echo "skipped: $t not installed" >&2; exit 77; }
done
dcerpcd=
for d in /usr/libexec/samba/samba-dcerpcd /usr/lib/samba/samba-dcerpcd; do
	[ -x "$d" ] && dcerpcd=$d
done
[ -n "$dcerpcd" ] || { echo "skipped: samba-dcerpcd not found" >&2; exit 77; }
mkdir -p "$BB_TMP"
T=$(cd "$BB_TMP" && pwd)
. "$BB_SRC/tests/cli/netns.sh"
rig_up sm 236
srv=$net.2
for ns in "$ns_c" "$ns_s"; do
	ip netns exec "$ns" ethtool -K eth0 tx off tso off gso off >/dev/null 2>&1
done
rm -rf "$T/s"
for d in share private lock state cache pid ncalrpc; do
	mkdir -p "$T/s/$d"
done
echo "hello from the share" >"$T/s/share/hello.txt"
head -c 100000 /dev/zero | tr '\0' y >"$T/up.txt"
cat >"$T/smb.conf" <<EOF
[global]
  workgroup = BB
  server role = standalone server
  map to guest = Bad User
  interfaces = $srv/24
  bind interfaces only = yes
  smb ports = 445
  private dir = $T/s/private
  lock directory = $T/s/lock
  state directory = $T/s/state
  cache directory = $T/s/cache
  pid directory = $T/s/pid
  ncalrpc dir = $T/s/ncalrpc
  log file = $T/s/log.%m
  disable netbios = yes
  load printers = no
  printcap name = /dev/null
  disable spoolss = yes
  rpc start on demand helpers = no
[share]
  path = $T/s/share
  guest ok = yes
  read only = no
  force user = root
EOF
# Each in a session of its own (--no-process-group: smbd would fail to make
# one itself): on exit Samba signals its whole process group,
# which would otherwise be this script's, ctest's and make's.
ip netns exec "$ns_s" setsid smbd -F --no-process-group -s "$T/smb.conf" >"$T/smbd.log" 2>&1 &
pids="$pids $!"
ip netns exec "$ns_s" setsid "$dcerpcd" --libexec-rpcds -F --no-process-group -s "$T/smb.conf" \
	>"$T/dcerpcd.log" 2>&1 &
pids="$pids $!"
rig_extra_cleanup() {
	# the rpcd_* helpers samba-dcerpcd started, in the server namespace only
	for p in $(ip netns pids "$ns_s" 2>/dev/null); do
		kill "$p" 2>/dev/null
	done
}
i=0
until ip netns exec "$ns_c" smbclient -N -s "$T/smb.conf" "//$srv/share" -c ls >/dev/null 2>&1 &&
	ip netns exec "$ns_s" ss -ltn 2>/dev/null | grep -q "$srv:135 "; do
	i=$((i + 1)); [ $i -gt 100 ] && { echo "FAIL: samba did not start"; cat "$T/smbd.log" "$T/dcerpcd.log"; exit 1; }; sleep 0.1
done

rig_capture smb
ip netns exec "$ns_c" smbclient -N -s "$T/smb.conf" "//$srv/share" \
	-c "ls; put $T/up.txt up.txt; get hello.txt $T/got.txt" >"$T/smbclient.log" 2>&1 ||
	{ echo "FAIL: smbclient"; cat "$T/smbclient.log"; exit 1; }
cmp -s "$T/got.txt" "$T/s/share/hello.txt" && cmp -s "$T/up.txt" "$T/s/share/up.txt" ||
	{ echo "FAIL: smbclient did not copy the files"; exit 1; }
ip netns exec "$ns_c" rpcclient -U% -N -s "$T/smb.conf" "ncacn_ip_tcp:$srv" \
	-c "srvinfo; netshareenum" >"$T/rpcclient.log" 2>&1 ||
	{ echo "FAIL: rpcclient"; cat "$T/rpcclient.log"; exit 1; }
grep -q "netname: share" "$T/rpcclient.log" || { echo "FAIL: rpcclient netshareenum"; cat "$T/rpcclient.log"; exit 1; }
sleep 0.5
rig_capture_stop
fail=0
[ $rc -eq 0 ] || { echo "FAIL: bbcap exit $rc"; fail=1; }

# req=  min-calls  (each must have as many returns)
cat >"$T/want" <<'EOF'
smb2	NEGOTIATE	1
smb2	SESSION_SETUP	1
smb2	TREE_CONNECT	1
smb2	CREATE%20up.txt	1
smb2	CREATE%20hello.txt	1
smb2	WRITE	1
smb2	READ	1
smb2	QUERY_DIRECTORY	1
smb2	CLOSE	2
dcerpc	epm.op3	1
dcerpc	bind%20epm	1
dcerpc	bind%20srvsvc	1
dcerpc	srvsvc.op21	1
dcerpc	srvsvc.op36	1
EOF
# (a RET pairs with its CALL by id; a CREATE's RET says only "CREATE")
while IFS='	' read -r dec req want; do
	gc=$(grep -c "	CALL	$net.1	$srv	c[0-9]*\.[0-9]*	proto=$dec	req=$req	" "$T/smb.tr")
	gr=$(grep -v '^#' "$T/smb.tr" | awk -F'\t' -v c="$net.1" -v s="$srv" -v d="proto=$dec" -v q="req=$req" '
		$2 == "CALL" && $3 == c && $4 == s && $6 == d && $7 == q { id[$5] = 1 }
		$2 == "RET" && $3 == s && $4 == c && $6 == d && ($5 in id) { n++; delete id[$5] }
		END { print n + 0 }')
	if [ "$gc" -lt "$want" ] || [ "$gr" != "$gc" ]; then
		echo "FAIL: $dec req=$req: $gc calls, $gr returns; want at least $want pairs"
		fail=1
	else
		echo "ok   $dec req=$req: $gc/$gr"
	fi
done <"$T/want"
for dec in smb2 dcerpc; do
	c=$(grep -c "	CALL	.*	proto=$dec	" "$T/smb.tr")
	r=$(grep -c "	RET	.*	proto=$dec	" "$T/smb.tr")
	echo "$dec: $c calls, $r returns"
	# Every call answered; an SMB2 server under load may first send an interim
	# STATUS_PENDING reply, a second RET of the same call (tshark counts it too).
	[ "$r" -ge "$c" ] || { echo "FAIL: $dec: fewer returns than calls"; fail=1; }
	if command -v tshark >/dev/null 2>&1 && [ -f "$BB_SRC/../shared/corpus/oracle.py" ]; then
		o=$(python3 "$BB_SRC/../shared/corpus/oracle.py" $dec "$T/smb.pcap" --count 2>/dev/null)
		[ "$o" = "$c $r" ] || { echo "FAIL: $dec: tshark counts $o, bbcap $c $r"; fail=1; }
		echo "$dec: tshark $o"
	fi
done
grep -v '^#' "$T/smb.tr" | awk -F'\t' '$2 == "CALL" { c[$5] = 1 } $2 == "RET" && !($5 in c) { n++ } END { exit n > 0 }' ||
	{ echo "FAIL: a return without its call"; fail=1; }
[ $fail = 0 ] || cat "$T/bbcap.err"
exit $fail

#!/bin/sh
# robust_bbcap_live.sh - faults during a live capture, on a veth pair between
# two network namespaces made here (removed by a trap) while a client sends
# DNS queries that a responder answers:
#   SIGTERM: stops, flushes and summarises; exit 0, records written.
#   SIGKILL: an existing -w file is untouched; the records are in the
#            temporary file next to it (kill.tr.partial.XXXXXX), and every
#            complete line written before the kill reads back with bbnest
#            (exit 0); there is at least one record.
#   ip link del: the interface goes away; bbcap exits 1 within 10 s with
#            "bbcap: error: IFACE: ..." and the trace is closed (its #capture
#            line is written).
#   -Z nobody: the running capture's real, effective, saved and file-system
#            uids (/proc/PID/status) are those of nobody, and it still writes.
# Needs root, ip(8) and python3; skips (77) otherwise.
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (network namespaces)"; exit 77; }
command -v ip >/dev/null 2>&1 || { echo "skipped: ip(8) not installed"; exit 77; }
PY=/usr/bin/python3
[ -x $PY ] || PY=$(command -v python3) || { echo "skipped: python3 not installed"; exit 77; }
id -u nobody >/dev/null 2>&1 || { echo "skipped: no user nobody"; exit 77; }
mkdir -p "$BB_TMP"
chmod 0777 "$BB_TMP"
cd "$BB_TMP" || exit 1
: "${ASAN_OPTIONS:=detect_leaks=1:abort_on_error=1}"
: "${UBSAN_OPTIONS:=print_stacktrace=1:halt_on_error=1}"
export ASAN_OPTIONS UBSAN_OPTIONS
fail=0
no() { echo "FAIL: $*"; fail=1; }
id=$$
nsa=bbr-a-$id
nsb=bbr-b-$id
net=10.214.$((id % 200 + 20))
pids=""
cleanup() {
	for p in $pids; do kill -9 "$p" 2>/dev/null; done
	ip netns del "$nsa" 2>/dev/null
	ip netns del "$nsb" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 1' INT TERM
ip netns add "$nsa" 2>iperr || { echo "skipped: cannot create a namespace: $(cat iperr)"; exit 77; }
ip netns add "$nsb"
# add_link NAME: a veth NAME in nsa, its peer eth0... in nsb (one pair per case)
n=0
add_link() {
	n=$((n + 1))
	ip -n "$nsa" link add "$1" type veth peer name "p$1" netns "$nsb" || return 1
	ip -n "$nsa" addr add "$net.$((2 * n - 2))/31" dev "$1"
	ip -n "$nsb" addr add "$net.$((2 * n - 1))/31" dev "p$1"
	ip -n "$nsa" link set "$1" up
	ip -n "$nsb" link set "p$1" up
	ip -n "$nsa" link set lo up
	ip -n "$nsb" link set lo up
	peer=$net.$((2 * n - 1))
}
cat >dns.py <<'PYEOF'
import socket, struct, sys, time
if sys.argv[1] == "serve":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", 53))
    while True:
        d, a = s.recvfrom(2048)
        s.sendto(d[:2] + b"\x81\x80" + d[4:], a)
else:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(0.05)
    q = b"\x07example\x03com\x00\x00\x01\x00\x01"
    i = 0
    while True:
        i += 1
        try:
            s.sendto(struct.pack("!HHHHHH", i & 0xffff, 0x0100, 1, 0, 0, 0) + q, (sys.argv[2], 53))
            s.recvfrom(2048)
        except OSError:
            pass
        time.sleep(0.005)
PYEOF
ip netns exec "$nsb" $PY dns.py serve &
pids="$pids $!"
# traffic on every link: one client per peer address
client() {
	ip netns exec "$nsa" $PY dns.py query "$1" &
	pids="$pids $!"
}
# start NAME ARGS: bbcap in nsa (ip netns exec execs it: $! is bbcap)
start() {
	nm=$1
	shift
	ip netns exec "$nsa" "$BB_BIN/bbcap" "$@" 2>"$nm.err" &
	cap=$!
	pids="$pids $cap"
}
# waitfor PID SECONDS: exit status of PID, or 124 when it is still running
waitfor() {
	t=0
	while kill -0 "$1" 2>/dev/null && [ $t -lt $(($2 * 10)) ]; do
		sleep 0.1
		t=$((t + 1))
	done
	if kill -0 "$1" 2>/dev/null; then
		kill -9 "$1"
		wait "$1" 2>/dev/null
		return 124
	fi
	wait "$1"
}
san() {
	if grep -q -e Sanitizer -e 'runtime error' "$1"; then
		no "sanitizer report in $1:"; head -20 "$1"
	fi
}
recs() { grep -c -v '^#' "$1"; }

# SIGTERM
add_link bbt0 || { echo "skipped: cannot create a veth pair"; exit 77; }
client "$peer"
start term -i bbt0 -q -w term.tr udp port 53
sleep 3
kill -TERM "$cap"
waitfor "$cap" 20
rc=$?
san term.err
[ $rc -eq 0 ] || no "SIGTERM: exit $rc, want 0; stderr: $(cat term.err)"
[ "$(recs term.tr)" -gt 10 ] || no "SIGTERM: $(recs term.tr) records, want > 10"
grep -q '^#capture packets=' term.tr || no "SIGTERM: no #capture line: $(grep '^#' term.tr)"
echo "SIGTERM: exit $rc, $(recs term.tr) records"

# SIGKILL: the old -w file stays; what was written (in the temporary file)
# must be complete lines, readable
printf 'old trace\n' >kill.tr
rm -f kill.tr.partial.*
start kill -i bbt0 -q -w kill.tr udp port 53
sleep 4
kill -KILL "$cap"
wait "$cap" 2>/dev/null
[ "$(cat kill.tr)" = "old trace" ] || no "SIGKILL: kill.tr changed: $(head -c 80 kill.tr)"
part=$(ls kill.tr.partial.* 2>/dev/null | head -1)
[ -n "$part" ] || { no "SIGKILL: no kill.tr.partial.* file"; part=/dev/null; }
# keep complete lines only (a last line without its LF is cut)
if [ -s "$part" ] && [ "$(tail -c 1 "$part" | od -An -c | tr -d ' ')" != '\n' ]; then
	sed '$d' "$part" >kill-complete.tr
	echo "SIGKILL: last line was cut"
else
	cp "$part" kill-complete.tr
fi
nk=$(recs kill-complete.tr)
[ "$nk" -gt 10 ] || no "SIGKILL: $nk complete records after 4 s, want > 10 (lost what it captured)"
timeout 60 "$BB_BIN/bbnest" --text kill-complete.tr >kill.nest 2>kill.nest.err
rc=$?
san kill.nest.err
[ $rc -eq 0 ] || no "SIGKILL: bbnest on the complete lines: exit $rc; $(cat kill.nest.err)"
echo "SIGKILL: $nk complete records, bbnest exit $rc: $(tail -1 kill.nest)"

# the interface goes away
add_link bbt1
client "$peer"
start del -i bbt1 -q -w del.tr udp port 53
sleep 3
ip -n "$nsa" link del bbt1
waitfor "$cap" 10
rc=$?
san del.err
[ $rc -eq 1 ] || no "link del: exit $rc, want 1 (124: still running 10 s later)"
grep -q '^bbcap: error: bbt1: ' del.err || no "link del: stderr '$(cat del.err)', want 'bbcap: error: bbt1: ...'"
grep -q '^#capture packets=' del.tr || no "link del: trace not closed (no #capture line)"
[ "$(recs del.tr)" -gt 10 ] || no "link del: $(recs del.tr) records, want > 10"
echo "link del: exit $rc, $(cat del.err)"

# -Z nobody
add_link bbt2
client "$peer"
start drop -i bbt2 -q -Z nobody -w drop.tr udp port 53
sleep 3
nb=$(id -u nobody)
uids=$(awk '/^Uid:/ { print $2, $3, $4, $5 }' /proc/"$cap"/status 2>/dev/null)
[ "$uids" = "$nb $nb $nb $nb" ] || no "-Z nobody: Uid: '$uids', want '$nb $nb $nb $nb'"
gids=$(awk '/^Groups:/ { $1 = ""; print }' /proc/"$cap"/status 2>/dev/null)
echo "-Z nobody: Uid: $uids; supplementary groups:$gids"
kill -TERM "$cap"
waitfor "$cap" 20
rc=$?
san drop.err
[ $rc -eq 0 ] || no "-Z nobody: exit $rc after SIGTERM, want 0; $(cat drop.err)"
[ "$(recs drop.tr)" -gt 10 ] || no "-Z nobody: $(recs drop.tr) records, want > 10"
grep -q '^#capture packets=' drop.tr || no "-Z nobody: trace not closed (no #capture line)"

[ $fail -eq 0 ] && echo ok
exit $fail

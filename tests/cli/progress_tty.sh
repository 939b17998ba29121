#!/bin/sh
# progress_tty.sh - progress on a terminal, nothing otherwise: bbnest, bbconv and maketrace
# under a pseudo-terminal (script(1)) show "pass 1 of 2", "reading", "generating" lines with
# counts and totals (rate and ETA on bbnest's lines after a pass's first); with standard
# error to a file they write nothing. bbcap -i keeps a live status line (packets, calls,
# returns, drops) on a terminal (as root, on lo, against a python3 HTTP server on
# loopback) and none to a file.
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
command -v script >/dev/null 2>&1 || { echo "SKIP: needs script(1) (util-linux)"; exit 77; }
fail=0
no() { echo "FAIL: $*"; fail=1; }
# on a pseudo-terminal: CMD's output (stdout and stderr) with carriage returns as newlines
tty_run() { script -qfec "$1" /dev/null </dev/null | tr '\r' '\n' >"$2"; }

mt="$BB_BIN/maketrace -d 0 -N 300000 -o t.tr $BB_SRC/maketrace/configs/multitier.json"
tty_run "$mt" mt.tty
# (rate and ETA appear once a line is at least a fraction of a second in: a fast
# machine may generate the whole trace before, so they are not required here)
grep -Eq '^maketrace: generating: [0-9,]+ messages of ~300,000 \([0-9]+%\)' mt.tty ||
	no "maketrace on a TTY: $(head -c 300 mt.tty)"
$mt 2>mt.err || no "maketrace failed"
[ -s mt.err ] && no "maketrace wrote to a non-terminal stderr: $(head -c 200 mt.err)"

tty_run "$BB_BIN/bbnest -o /dev/null t.tr" nest.tty
for pass in 1 2; do
	grep -Eq "^bbnest: pass $pass of 2: [0-9,]+ messages of ~[0-9,]+ \([0-9]+%\)" nest.tty ||
		no "bbnest pass $pass on a TTY: $(head -c 300 nest.tty)"
done
# a pass's lines after its first (due a quarter second later) carry the rate and
# the ETA; an optimised build may read the whole trace before a second line is
# due (test_trace's progress_eta checks the ETA itself)
for pass in 1 2; do
	lines=$(grep -c "^bbnest: pass $pass of 2: " nest.tty)
	if [ "$lines" -gt 1 ]; then
		grep -Eq "^bbnest: pass $pass of 2: .*/s, ETA [0-9]+:[0-9]+" nest.tty ||
			no "bbnest pass $pass: $lines lines, none with an ETA: $(head -c 300 nest.tty)"
	fi
done
"$BB_BIN/bbnest" -o /dev/null t.tr 2>nest.err || no "bbnest failed"
[ -s nest.err ] && no "bbnest wrote to a non-terminal stderr: $(head -c 200 nest.err)"
tty_run "$BB_BIN/bbnest --quiet -o /dev/null t.tr" quiet.tty
grep -q 'pass 1' quiet.tty && no "bbnest --quiet shows progress"

# bbconv on a shorter trace, coarse quantum: its correlations are the slow part
"$BB_BIN/maketrace" -q -d 0 -N 140000 -o c.tr "$BB_SRC/maketrace/configs/multitier.json"
tty_run "$BB_BIN/bbconv -Q 0.1 -o /dev/null c.tr" conv.tty
grep -Eq '^bbconv: reading: [0-9,]+ messages of ~[0-9,]+' conv.tty ||
	no "bbconv on a TTY: $(head -c 300 conv.tty)"
grep -q '^bbconv: searching paths' conv.tty || no "bbconv: no 'searching paths' on a TTY"
"$BB_BIN/bbconv" -Q 0.1 -o /dev/null c.tr 2>conv.err || no "bbconv failed"
[ -s conv.err ] && no "bbconv wrote to a non-terminal stderr: $(head -c 200 conv.err)"

# bbcap -i: the live status line
if [ "$(id -u)" != 0 ]; then
	echo "SKIP (bbcap -i part): needs root to capture on lo"
elif ! command -v curl >/dev/null 2>&1; then
	echo "SKIP (bbcap -i part): needs curl"
else
	mkdir -p www
	echo hello >www/index.html
	/usr/bin/python3 -m http.server 0 --bind 127.0.0.1 --directory www >srv.out 2>&1 &
	srv=$!
	port=""
	i=0
	while [ -z "$port" ] && [ $i -lt 50 ]; do
		sleep 0.1
		port=$(sed -n 's/.*port \([0-9]*\).*/\1/p' srv.out | head -n 1)
		i=$((i + 1))
	done
	load() { # requests for about 4 s
		j=0
		while [ $j -lt 40 ]; do
			curl -s -o /dev/null "http://127.0.0.1:$port/" || true
			sleep 0.1
			j=$((j + 1))
		done
	}
	if [ -z "$port" ]; then
		no "the HTTP server did not start: $(cat srv.out)"
	else
		load &
		ld=$!
		tty_run "timeout -s INT 3 $BB_BIN/bbcap -i lo -w live.tr tcp port $port" cap.tty
		wait $ld
		grep -Eq '^bbcap: [0-9]+ packets, [0-9]+ calls, [0-9]+ returns, [0-9]+ dropped by kernel, [0-9]+ by interface' cap.tty ||
			no "bbcap -i on a TTY: no status line: $(head -c 400 cap.tty)"
		grep -Eq '^bbcap: [1-9][0-9]* packets, [1-9][0-9]* calls' cap.tty ||
			no "bbcap -i on a TTY: the status never counted a call: $(grep packets cap.tty | tail -n 2)"
		load &
		ld=$!
		timeout -s INT 3 "$BB_BIN/bbcap" -i lo -w live2.tr "tcp port $port" 2>cap.err
		wait $ld
		grep -q 'packets, .* calls, .* returns' cap.err && no "bbcap -i: status line on a non-terminal"
	fi
	kill $srv 2>/dev/null
	wait $srv 2>/dev/null
fi
exit $fail

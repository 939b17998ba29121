#!/bin/sh
# trace_errors.sh - each field of a trace line wrong in turn: every command that
# reads traces stops with "PROG: error: FILE:LINE: what is wrong with which field"
# and exit status 2; with --lenient it skips the line and says so.
set -u
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
fail=0
good='1000000000.000000001	CALL	A	B	id1	path=p1'

# name|bad line|expected message after "bad.tr:3: "
cases='timestamp-junk|17x	CALL	A	B	id1|bad timestamp "17x"
timestamp-empty-frac|17.	CALL	A	B	id1|bad timestamp "17."
timestamp-10-decimals|1.0000000001	CALL	A	B	id1|bad timestamp "1.0000000001"
timestamp-overflow|99999999999999	CALL	A	B	id1|bad timestamp "99999999999999"
op|1000000001	CALLL	A	B	id1|bad op "CALLL"
sender|1000000001	CALL|missing sender
receiver|1000000001	CALL	A|missing receiver
id|1000000001	CALL	A	B|missing id
attribute|1000000001	CALL	A	B	id1	foo|bad attribute "foo"
percent|1000000001	CALL	A	B	id1	req=%zz|bad percent-encoding in attribute "req"
end|1000000001	CALL	A	B	id1	end=abc|bad end= time "abc"'

# Commands that read traces, with the arguments that make them read bad.tr.
progs="bbskew bbnest bbconv"
echo "$cases" | while IFS='|' read -r name line want; do
	printf '#bbtrace 1\n%s\n%s\n' "$good" "$line" >bad.tr
	for prog in $progs; do
		[ -x "$BB_BIN/$prog" ] || continue
		"$BB_BIN/$prog" bad.tr >out.txt 2>err.txt
		rc=$?
		msg=$(cat err.txt)
		case "$msg" in
		"$prog: error: bad.tr:3: $want"*) ;;
		*) echo "FAIL $prog $name: message: $msg (want: $prog: error: bad.tr:3: $want)"; echo x >>failed ;;
		esac
		if [ "$rc" != 2 ]; then
			echo "FAIL $prog $name: exit $rc, want 2"; echo x >>failed
		fi
		"$BB_BIN/$prog" --lenient bad.tr >out.txt 2>err.txt
		rc=$?
		if [ "$rc" != 0 ] || ! grep -q "1 bad line" err.txt; then
			echo "FAIL $prog $name --lenient: exit $rc, stderr: $(cat err.txt)"; echo x >>failed
		fi
	done
	echo "checked $name"
done
[ -f failed ] && fail=1
rm -f failed
exit $fail

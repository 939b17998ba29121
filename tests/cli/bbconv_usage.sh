#!/bin/sh
# bbconv_usage.sh - bbconv options, exit codes and messages
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
B=$BB_BIN/bbconv
T=$BB_SRC/tests/golden/bbconv/rpc.tr
fail=0
no() { echo "FAIL: $*"; fail=1; }

# -h: help on stdout, exit 0
"$B" -h >h.out 2>h.err || no "-h exit $?"
grep -q -- '--quantum' h.out || no "-h lacks --quantum"
[ -s h.err ] && no "-h wrote stderr"
"$B" --help >/dev/null || no "--help"
# --version names FFTW
"$B" --version >v.out || no "--version exit"
grep -q 'fftw-3' v.out || no "--version lacks FFTW: $(cat v.out)"

# -q is --quiet (it was the quantum before bb 0.2): an old "-q 0.01 T" says so
"$B" -q 0.01 "$T" >q.out 2>q.err && no "-q 0.01: exit 0"
grep -q '^bbconv: note: -q is --quiet since bb 0.2; the quantum is -Q 0.01$' q.err ||
	no "-q 0.01 has no note: $(cat q.err)"
"$B" -q -Q 0.01 --text "$T" >q.out 2>q.err || no "-q -Q 0.01: exit $?"
[ -s q.err ] && no "-q -Q 0.01 wrote stderr: $(cat q.err)"

# usage errors: exit 2, "bbconv: error: what" and the hint, two lines
for bad in "-Q 0" "-Q x" "--spike 3,4" "--spike 4" "--method fast" "--max-depth 0" "--min-count -1" "--nosuch" "a b" "-Q" "--quantum" "-x" "--json=1"; do
	# shellcheck disable=SC2086
	"$B" $bad >u.out 2>u.err
	rc=$?
	[ $rc -eq 2 ] || no "'$bad' exit $rc, want 2"
	[ "$(wc -l <u.err)" -eq 2 ] && head -n 1 u.err | grep -q '^bbconv: error: ' &&
		tail -n 1 u.err | grep -qx "Try 'bbconv --help' for more information." ||
		no "'$bad' message: $(cat u.err)"
	[ -s u.out ] && no "'$bad' wrote stdout"
done
# the option named as given
"$B" --quantum 2>u.err; grep -q '^bbconv: error: --quantum needs a value$' u.err || no "--quantum: $(cat u.err)"
"$B" -jx 2>u.err; grep -q '^bbconv: error: unknown option -x$' u.err || no "-jx: $(cat u.err)"
"$B" --nosuch=3 2>u.err; grep -q '^bbconv: error: unknown option "--nosuch"$' u.err || no "--nosuch=3: $(cat u.err)"
"$B" --stats=1 2>u.err; grep -q '^bbconv: error: --stats takes no value$' u.err || no "--stats=1: $(cat u.err)"
"$B" --json=1 2>u.err; grep -q '^bbconv: error: --json takes no value$' u.err || no "--json=1: $(cat u.err)"

# missing file: runtime failure, exit 1
"$B" -Q 0.01 /nonexistent/t.tr >/dev/null 2>m.err
rc=$?
[ $rc -eq 1 ] || no "missing file exit $rc, want 1"
grep -q '^bbconv: error: ' m.err || no "missing file message: $(cat m.err)"

# a bad trace line: exit 2, FILE:LINE named
printf '#bbtrace 1\n1.0\tMSG\ta\tb\t-\n17x\tMSG\ta\tb\t-\n' >bad.tr
"$B" -Q 0.01 bad.tr >/dev/null 2>b.err
rc=$?
[ $rc -eq 2 ] || no "bad line exit $rc, want 2"
grep -q '^bbconv: error: bad.tr:3' b.err || no "bad line message: $(cat b.err)"
# --lenient skips it and says so
"$B" -Q 0.01 --lenient bad.tr >l.out 2>l.err || no "--lenient exit $?"
grep -q 'skipped 1 bad line' l.err || no "--lenient message: $(cat l.err)"

# unknown root: exit 2
"$B" -Q 0.01 --root nosuch "$T" >/dev/null 2>r.err
[ $? -eq 2 ] || no "unknown root exit"
grep -q 'nosuch' r.err || no "unknown root message"

# standard input and -o give the same as a file argument
"$B" -Q 0.01 "$T" >f.out || no "file"
"$B" -Q 0.01 <"$T" >s.out || no "stdin"
"$B" -Q 0.01 - <"$T" >d.out || no "stdin -"
"$B" -Q 0.01 -o o.out "$T" || no "-o"
"$B" -Q 0.01 --output=o2.out "$T" || no "--output"
cmp -s f.out s.out || no "stdin differs"
cmp -s f.out d.out || no "'-' differs"
cmp -s f.out o.out || no "-o differs"
cmp -s f.out o2.out || no "--output differs"
# unwritable -o: exit 1
"$B" -Q 0.01 -o /nonexistent/x.dot "$T" 2>w.err
[ $? -eq 1 ] || no "unwritable -o exit"

# JSON has the documented shape
"$B" -Q 0.01 --json "$T" >j.out || no "--json"
for k in '"vertices":[{"id":0,"node":"' '"edges":[{"count":' '"delay_ns":' '"params":{' '"accuracy":null'; do
	grep -qF "$k" j.out || no "JSON lacks $k"
done

# "graph cut" only when --max-vertices really cut the graph
"$B" -Q 0.01 --text "$T" >c.out 2>c.err || no "default run"
grep -q 'graph cut' c.err && no "graph cut warned on $(grep -c . c.out) lines of output: $(cat c.err)"
"$B" -Q 0.01 --text --max-vertices 3 "$T" >c.out 2>c.err || no "--max-vertices 3"
grep -q '^bbconv: warning: graph cut at 3 vertices (--max-vertices)$' c.err ||
	no "--max-vertices 3: no warning: $(cat c.err)"

# an empty trace gives an empty graph
printf '#bbtrace 1\n' >empty.tr
"$B" -Q 0.01 empty.tr >e.out || no "empty trace"
grep -q 'digraph' e.out || no "empty trace: no digraph"
exit $fail

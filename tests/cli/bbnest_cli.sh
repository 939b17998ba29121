#!/bin/sh
# bbnest_cli.sh - bbnest's command line: help, version, usage and input errors, stdin,
# -o, and dot output that Graphviz turns into one valid SVG whatever the node names.
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
nest=$BB_BIN/bbnest
g=$BB_SRC/tests/golden/bbnest
fail=0
no() { echo "FAIL: $*"; fail=1; }

"$nest" -h >help.out 2>help.err || no "-h exits non-zero"
grep -q '^usage: bbnest' help.out || no "-h does not print usage to stdout"
[ -s help.err ] && no "-h writes to stderr"
"$nest" --help | grep -q -- '--skew-window' || no "--help lacks --skew-window"
"$nest" --version | grep -q 'Graphviz' || no "--version does not name Graphviz"

"$nest" --penalty 1,2 "$g/fig3.tr" >/dev/null 2>err; rc=$?
[ $rc -eq 2 ] || no "bad --penalty exits $rc, not 2"
[ "$(wc -l <err)" -eq 2 ] && grep -q "Try 'bbnest --help'" err || no "usage error: $(cat err)"
"$nest" --frobnicate "$g/fig3.tr" >/dev/null 2>err; [ $? -eq 2 ] || no "unknown option not 2"
"$nest" --rank sideways "$g/fig3.tr" >/dev/null 2>err; [ $? -eq 2 ] || no "bad --rank not 2"
"$nest" --scoreboard diagonal "$g/fig3.tr" >/dev/null 2>err; [ $? -eq 2 ] || no "bad --scoreboard not 2"
for sb in auto edge caller paper; do
	"$nest" --json --no-bins --scoreboard $sb "$g/fig3.tr" >sb.out 2>err || no "--scoreboard $sb fails"
	want=$sb; [ $sb = auto ] && want=edge
	grep -q "\"scoreboard\":\"$want\"" sb.out || no "--scoreboard $sb: params do not say $want"
done
"$nest" a.tr b.tr >/dev/null 2>err; [ $? -eq 2 ] || no "two traces not 2"
# --reassign: in params and stats only when given (the goldens without it stay)
"$nest" --json --no-bins --reassign "$g/fig3.tr" >re.out 2>err || no "--reassign fails"
grep -q '"reassign":true' re.out && grep -q '"reassigned":0' re.out ||
	no "--reassign: params.reassign / stats.reassigned missing"
"$nest" --json --no-bins "$g/fig3.tr" | grep -q 'reassign' && no "reassign in JSON without --reassign"
# --global: the same; the figure 3 trace is one instance, found either way
"$nest" --json --no-bins --global "$g/fig3.tr" >gl.out 2>err || no "--global fails"
grep -q '"global":true' gl.out && grep -q '"global_used":true' gl.out &&
	grep -q '"global_over":0' gl.out || no "--global: params.global / stats.global_used missing"
"$nest" --global "$g/fig3.tr" | dot -Tsvg >gl.svg 2>err || no "--global: dot -Tsvg fails"
"$nest" --global --memory 0 "$g/fig3.tr" >/dev/null 2>err || no "--global --memory 0 fails"
grep -q 'warning: .*--global not used' err || no "--global --memory 0: no warning: $(cat err)"
"$nest" --json --no-bins --greedy "$g/fig3.tr" | grep -q 'global' && no "global in JSON with --greedy"
# the default: chosen per trace and said so
"$nest" --json --no-bins "$g/fig3.tr" >auto.out 2>err || no "default run fails"
grep -q '"auto":{"global":true,"return_score":true,"why":"messages in memory"}' auto.out ||
	no "default: params.auto missing: $(head -c 300 auto.out)"
"$nest" --json --no-bins --memory 0 "$g/fig3.tr" >auto0.out 2>err || no "default --memory 0 fails"
[ -s err ] && no "default --memory 0 warns: $(cat err)"
grep -q '"why":"messages not in memory"' auto0.out || no "default --memory 0: params.auto.why"
# --rounds: the most --global rounds, in params; the multi trace takes one by default
# (its first refinement changes nothing: cli_bbnest_settle has the traces that take more)
"$nest" --json --no-bins "$g/multi.tr" >r6.out 2>err || no "multi: default run fails"
grep -q '"rounds":10' r6.out && grep -q '"global_rounds":1' r6.out ||
	no "default: params.rounds 10 and stats.global_rounds 1 expected"
"$nest" --json --no-bins --rounds 1 "$g/multi.tr" >r1.out 2>err || no "--rounds 1 fails"
grep -q '"rounds":1' r1.out && grep -q '"global_rounds":1' r1.out ||
	no "--rounds 1: params.rounds 1 and stats.global_rounds 1 expected"
for bad in 0 101 x -1; do
	"$nest" --rounds "$bad" "$g/multi.tr" >/dev/null 2>err; rc=$?
	[ $rc -eq 2 ] && grep -q -- "--rounds: expected 1 to 100, not '$bad'" err ||
		no "--rounds $bad: exit $rc, $(cat err)"
done

"$nest" no-such.tr >/dev/null 2>err; rc=$?
[ $rc -eq 1 ] || no "missing file exits $rc, not 1"
grep -q '^bbnest: error: no-such.tr: ' err || no "missing file message: $(cat err)"

printf '#bbtrace 1\n1 CALL a b 1\n17x RET b a 1\n' >bad.tr
"$nest" bad.tr >/dev/null 2>err; rc=$?
[ $rc -eq 2 ] || no "bad trace exits $rc, not 2"
grep -q '^bbnest: error: bad.tr:3: ' err || no "parse error message: $(cat err)"
"$nest" --lenient -q bad.tr >/dev/null 2>err || no "--lenient fails on a bad line"
[ -s err ] && no "--lenient -q writes to stderr: $(cat err)"

# standard input is spooled and read twice: same result as the file
"$nest" --json "$g/multi.tr" >file.json 2>err || no "file run failed"
cat "$g/multi.tr" | "$nest" --json >pipe.json 2>>err || no "stdin run failed"
"$nest" --json - <"$g/multi.tr" >dash.json 2>>err || no "'-' run failed"
cmp -s file.json pipe.json || no "stdin output differs from file output"
cmp -s file.json dash.json || no "'-' output differs from file output"
[ -s err ] && no "stderr on good runs: $(cat err)"

"$nest" -o out.dot "$g/multi.tr" >stdout.txt || no "-o failed"
[ -s stdout.txt ] && no "-o still writes to stdout"
"$nest" "$g/multi.tr" | cmp -s - out.dot || no "-o output differs from stdout"
"$nest" -o /no/such/dir/x.dot "$g/fig3.tr" 2>err; [ $? -eq 1 ] || no "unwritable -o not 1"

# one valid SVG, whatever the node names (multi.tr has cli"ent, graph, --, x\y{<b>})
if command -v dot >/dev/null 2>&1; then
	for t in fig3.tr multi.tr; do
		"$nest" "$g/$t" | dot -Tsvg >"$t.svg" 2>dot.err || no "dot -Tsvg failed on $t"
		[ -s dot.err ] && no "dot complains on $t: $(cat dot.err)"
		[ "$(grep -c '</svg>' "$t.svg")" -eq 1 ] || no "$t: not exactly one SVG"
		if command -v xmllint >/dev/null 2>&1; then
			xmllint --noout "$t.svg" || no "$t: SVG is not well-formed XML"
		fi
	done
	grep -q 'cli&quot;ent' multi.tr.svg || no "quoted name lost in SVG"
	# hostile names cannot inject dot syntax
	printf '#bbtrace 1\n1 CALL a];node[shape=box b 1\n2 RET b a];node[shape=box 1\n' >evil.tr
	printf '3 CALL }\\"digraph{ subgraph 1\n4 RET subgraph }\\"digraph{ 1\n' >>evil.tr
	printf '5 CALL \\N \377\376 1\n6 RET \377\376 \\N 1\n' >>evil.tr
	"$nest" evil.tr >evil.dot 2>err || no "evil names: bbnest failed: $(cat err)"
	dot -Tsvg evil.dot >evil.svg 2>dot.err || no "evil names: dot failed: $(cat dot.err)"
	[ "$(grep -c '<g id="clust' evil.svg)" -eq 3 ] || no "evil names: not three clusters"
	grep -q 'shape=box' evil.svg || no "evil names: the name was not kept as text"
	[ "$(grep -c '<ellipse' evil.svg)" -eq 6 ] || no "evil names: not six round nodes"
else
	echo "skip: no dot"
fi
# pattern ids: the same shape has the same id whatever its rank and output
"$nest" --text --rank latency "$g/multi.tr" | sed -n 's/^#\([0-9]*\) .*  id \([0-9a-f]*\).*/\2/p' | sort >id.lat
"$nest" --text --rank count "$g/multi.tr" | sed -n 's/^#\([0-9]*\) .*  id \([0-9a-f]*\).*/\2/p' | sort >id.cnt
"$nest" --json "$g/multi.tr" | tr ',' '\n' | sed -n 's/^"id":"\([0-9a-f]*\)"/\1/p' | sort >id.json
"$nest" "$g/multi.tr" | sed -n 's/.*label="#.*\\nid \([0-9a-f]*\).*/\1/p' | sort >id.dot
[ "$(wc -l <id.lat)" -ge 2 ] && [ "$(sort -u id.lat | wc -l)" -eq "$(wc -l <id.lat)" ] ||
	no "pattern ids: not one distinct id per pattern: $(cat id.lat)"
cmp -s id.lat id.cnt || no "pattern ids change with --rank"
cmp -s id.lat id.json || no "pattern ids differ between text and JSON"
cmp -s id.lat id.dot || no "pattern ids differ between text and dot"
"$nest" --json "$g/multi.tr" | grep -q '^{"accuracy":null,"format_version":1,' || no "JSON has no format_version 1"
exit $fail

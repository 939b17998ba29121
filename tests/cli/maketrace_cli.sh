#!/bin/sh
# maketrace_cli.sh - maketrace's command line: help, version, usage errors, -o, --summary,
# --no-ids, loss and skew options, quiet standard error when it is not a terminal.
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
mt=$BB_BIN/maketrace
cfgs=$BB_SRC/maketrace/configs
fail=0
no() { echo "FAIL: $*"; fail=1; }

"$mt" -h >help.out 2>help.err || no "-h exits non-zero"
grep -q '^usage: maketrace' help.out || no "-h does not print usage to stdout"
[ -s help.err ] && no "-h writes to stderr"
"$mt" --help | grep -q -- '--capture-rate' || no "--help lacks --capture-rate"
"$mt" --version | grep -q '^maketrace (bb) .*jansson' || no "--version: $("$mt" --version)"

for args in "" "--frobnicate x.json" "-S" "--seed x $cfgs/multitier.json" \
	"--queue 0 $cfgs/multitier.json" "--drop 1.5 $cfgs/multitier.json" "a.json b.json" \
	"--skew WS2 $cfgs/multitier.json"; do
	# shellcheck disable=SC2086
	"$mt" $args >out 2>err
	rc=$?
	[ $rc -eq 2 ] || no "'$args' exits $rc, not 2"
	[ "$(wc -l <err)" -eq 2 ] && head -n 1 err | grep -q '^maketrace: error: ' &&
		tail -n 1 err | grep -qx "Try 'maketrace --help' for more information." ||
		no "'$args': $(cat err)"
done

# --summary: counts on stderr, nothing else there; the trace on -o
"$mt" -I -o mt.tr "$cfgs/multitier.json" 2>sum >out || no "-I -o exits non-zero"
[ -s out ] && no "-o still writes to stdout"
n=$(grep -vc '^#' mt.tr)
grep -q "^maketrace: $n messages, 10 nodes, 32 edges\$" sum || no "summary: $(cat sum)"
grep -q '^maketrace: tracelet request: [0-9]* path instances$' sum || no "no instances in summary"
grep -q '^maketrace: mean per-node parallelism [0-9.]* over [0-9]* nested calls$' sum ||
	no "no parallelism in summary"
inst=$(sed -n 's/^maketrace: tracelet request: \([0-9]*\) path instances$/\1/p' sum)
distinct=$(grep -v '^#' mt.tr | sed 's/.*path=//' | sort -u | wc -l)
[ "$inst" = "$distinct" ] || no "summary says $inst instances, the trace has $distinct"
# without -I and with stderr not a terminal, nothing on stderr
"$mt" --messages 100 "$cfgs/multitier.json" >/dev/null 2>err
[ -s err ] && no "stderr not quiet: $(cat err)"

# ids: unique per call, "-" with --no-ids
dup=$(awk '!/^#/ && $2 == "CALL" { print $5 }' mt.tr | sort | uniq -d | head -1)
[ -z "$dup" ] || no "call id $dup used twice"
"$mt" --no-ids --messages 200 "$cfgs/multitier.json" >noid.tr
[ "$(awk '!/^#/ && $5 != "-"' noid.tr | wc -l)" -eq 0 ] || no "--no-ids left ids"

# loss: a slow sniffer drops, reported in the summary; a fast one does not
"$mt" -I --capture-rate 200 "$cfgs/multitier.json" 2>sum >lossy.tr
grep -q '^maketrace: dropped [1-9][0-9]* of [0-9]* messages' sum || no "no drops: $(cat sum)"
grep -q '^#maketrace .* capture_rate=200 queue=64' lossy.tr || no "loss not in metadata"
"$mt" -I --capture-rate 100000 "$cfgs/multitier.json" 2>sum >/dev/null
grep -q '^maketrace: dropped 0 of ' sum || no "a fast sniffer drops: $(cat sum)"
"$mt" -I --drop 0.1 "$cfgs/children-parallel.json" 2>sum >/dev/null
grep -q 'by the sniffer queue, [1-9][0-9]* at random' sum || no "--drop: $(cat sum)"

# skew: WS2's messages move by exactly 30 ms, the others not at all
"$mt" --skew WS2=0.030 "$cfgs/multitier.json" >skew.tr || no "--skew exits non-zero"
grep -q '^#maketrace .* skew=WS2:0.030000000' skew.tr || no "skew not in metadata"
key() { awk '!/^#/ { print $2, $3, $4, $5, $1 }' "$1" | sort; }
key mt.tr >a.k
key skew.tr >b.k
awk 'NR == FNR { t[$1" "$2" "$3" "$4] = $5; next }
     { d = $5 - t[$1" "$2" "$3" "$4]; want = ($2 == "WS2") ? 0.03 : 0;
       if (d - want > 1e-6 || want - d > 1e-6) bad++ }
     END { exit bad > 0 }' a.k b.k || no "--skew did not shift exactly WS2's messages"
cut -f1 skew.tr | grep -v '^#' | sort -c || no "skewed trace not in time order"

[ $fail -eq 0 ] && echo ok
exit $fail

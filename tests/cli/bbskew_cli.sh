#!/bin/sh
# bbskew_cli.sh - bbskew: read-then-write identity, skew then deskew restores the timestamps,
# merging two capture points drops duplicates, table and trace errors name file:line,
# --lenient reports what it skipped, usage errors exit 2.
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
sk=$BB_BIN/bbskew
mt=$BB_BIN/maketrace
fail=0
no() { echo "FAIL: $*"; fail=1; }
records() { grep -v '^#' "$1"; }

"$mt" -q --messages 20000 "$BB_SRC/maketrace/configs/multitier.json" >t.tr || exit 1

# help, version, usage errors
"$sk" -h >help.out 2>help.err || no "-h exits non-zero"
grep -q '^usage: bbskew' help.out || no "-h does not print usage to stdout"
[ -s help.err ] && no "-h writes to stderr"
"$sk" --version | grep -q '^bbskew (bb) ' || no "--version"
for args in "" "--frobnicate t.tr" "--skew WS2 t.tr" "--skew WS2=abc t.tr" "--drift WS2=x t.tr" \
	"- -"; do
	# shellcheck disable=SC2086
	"$sk" $args >out 2>err </dev/null
	rc=$?
	[ $rc -eq 2 ] || no "'$args' exits $rc, not 2"
	[ "$(wc -l <err)" -eq 2 ] && head -n 1 err | grep -q '^bbskew: error: ' &&
		tail -n 1 err | grep -qx "Try 'bbskew --help' for more information." ||
		no "'$args': $(cat err)"
done

# identity: one canonical input, no option: the same bytes, nothing added
"$sk" t.tr >id.tr || no "identity run failed"
cmp -s t.tr id.tr || no "read-then-write changed the trace"
"$sk" - <t.tr >id2.tr || no "stdin run failed"
cmp -s t.tr id2.tr || no "read-then-write from stdin changed the trace"
"$sk" -o id3.tr t.tr && cmp -s t.tr id3.tr || no "-o output differs"

# skew, then deskew with a table: the same records, the same timestamps
"$sk" --skew WS2=0.030 --skew DB=-0.004 --drift AP1=0 t.tr >s.tr || no "--skew failed"
grep -q '^#source bbskew --skew WS2=0.030 --skew DB=-0.004 --drift AP1=0 t.tr$' s.tr ||
	no "no #source bbskew line"
cmp -s t.tr s.tr && no "--skew changed nothing"
cut -f1 s.tr | grep -v '^#' | sort -c || no "skewed trace not in time order"
w1=$(records t.tr | awk '$3 == "WS2" { print $1; exit }')
w2=$(records s.tr | awk -v id="$(records t.tr | awk '$3 == "WS2" { print $5; exit }')" \
	'$3 == "WS2" && $5 == id { print $1; exit }')
awk -v a="$w1" -v b="$w2" 'BEGIN { d = b - a - 0.030; exit !(d < 1e-6 && d > -1e-6) }' ||
	no "WS2's message moved from $w1 to $w2, not by 30 ms"
printf '# measured offsets\nWS2 0.030\n\n  DB  -0.004  # slow\n' >offsets.txt
"$sk" --deskew offsets.txt s.tr >d.tr || no "--deskew failed"
records t.tr | sort >a.sorted
records d.tr | sort >b.sorted
cmp -s a.sorted b.sorted || no "skew then deskew does not restore the records"
# with no ties in time the order is restored too
records t.tr >a.rec
records d.tr >b.rec
cmp -s a.rec b.rec || no "skew then deskew does not restore the order"
# drift moves later messages more
"$sk" --drift WS2=1000 t.tr >dr.tr || no "--drift failed"
cut -f1 dr.tr | grep -v '^#' | sort -c || no "drifted trace not in time order"

# merging two capture points with overlapping records, in time order
{ grep '^#' t.tr; records t.tr | awk 'NR % 3 != 0'; } >a.tr
{ grep '^#' t.tr; records t.tr | awk 'NR % 3 != 1'; } >b.tr
"$sk" a.tr b.tr >m.tr 2>err || no "merge failed: $(cat err)"
records m.tr >m.rec
cmp -s a.rec m.rec || no "the merge is not the original trace"
dups=$(records t.tr | awk 'NR % 3 == 2' | wc -l)
grep -q "^bbskew: merged 2 traces: $(wc -l <a.rec | tr -d ' ') records, $dups exact duplicates dropped\$" err ||
	no "merge report: $(cat err) (want $dups duplicates)"
grep -c '^#source maketrace' m.tr | grep -q '^2$' || no "merge lost the inputs' metadata"
tail -n +2 m.tr | grep -q '^#source bbskew a.tr b.tr$' || no "merge has no #source bbskew line"
"$sk" -q a.tr b.tr >/dev/null 2>err
[ -s err ] && no "-q still reports: $(cat err)"

# bad table lines name file:line, exit 2
printf 'WS1 0.5\n# fine\nWS2 0.1 extra\n' >bad1.txt
"$sk" --deskew bad1.txt t.tr >/dev/null 2>err
[ $? -eq 2 ] || no "bad table does not exit 2"
grep -q '^bbskew: error: bad1.txt:3: expected NODE OFFSET_SECONDS$' err || no "bad table: $(cat err)"
printf 'WS1 fast\n' >bad2.txt
"$sk" --deskew bad2.txt t.tr >/dev/null 2>err
grep -q '^bbskew: error: bad2.txt:1: bad offset "fast"' err || no "bad offset: $(cat err)"
"$sk" --deskew no-such.txt t.tr >/dev/null 2>err
[ $? -eq 1 ] || no "missing table does not exit 1"

# a bad trace line: an error naming file:line, or with --lenient skipped and reported
{ head -10 t.tr; echo '17x RET b a 1'; tail -n +11 t.tr; } >bad.tr
"$sk" bad.tr >/dev/null 2>err
[ $? -eq 2 ] || no "bad trace line does not exit 2"
grep -q '^bbskew: error: bad.tr:11: ' err || no "bad trace line: $(cat err)"
"$sk" --lenient bad.tr >len.tr 2>err || no "--lenient exits non-zero"
grep -q '^bbskew: bad.tr: skipped 1 bad lines (first at line 11)$' err || no "--lenient: $(cat err)"
cmp -s t.tr len.tr || no "--lenient output differs from the clean trace"

[ $fail -eq 0 ] && echo ok
exit $fail

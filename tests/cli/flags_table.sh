#!/bin/sh
# flags_table.sh - one meaning per short flag across every bb command: the
# "-x, --long" lines of each command's --help are collected, and a short flag
# that stands for two different long options (in one command or in two) fails.
# Every short flag of every command must also be in the table of bb(7)
# ("FLAGS"), with its long option and the command named in its row, and
# every command must take -h, -V and --version.
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
fail=0
no() { echo "FAIL: $*"; fail=1; }
cmds="bbcap bbnest bbconv bbskew maketrace"
: >flags.tsv
for c in $cmds; do
	[ -x "$BB_BIN/$c" ] || { no "$c not built"; continue; }
	"$BB_BIN/$c" --help >help.txt 2>&1 || no "$c --help: exit $?"
	# "  -x, --long ..." -> "x<TAB>long<TAB>cmd"
	sed -n 's/^ *-\([A-Za-z0-9]\), --\([a-z0-9-]*\).*/\1	\2/p' help.txt |
		sed "s/\$/	$c/" >>flags.tsv
	"$BB_BIN/$c" -V >v.out 2>&1 || no "$c -V: exit $?"
	"$BB_BIN/$c" --version >v2.out 2>&1 || no "$c --version: exit $?"
	cmp -s v.out v2.out || no "$c: -V and --version differ"
	grep -q "	help	$c\$" flags.tsv || no "$c: no -h, --help line in --help"
done
[ "$(wc -l <flags.tsv)" -gt 30 ] || no "only $(wc -l <flags.tsv) short flags found: is --help parsed?"
# a short flag with two long names
cut -f1,2 flags.tsv | sort -u | cut -f1 | uniq -d >dup.txt
while read -r f; do
	no "-$f means $(grep "^$f	" flags.tsv | cut -f2,3 | tr '\t\n' ' ,')"
done <dup.txt
# every flag in bb(7)'s table: a row ".B \-x" ... "\-\-long" ... "cmd"
man7="$BB_SRC/docs/man/bb.7"
[ -f "$man7" ] || no "no docs/man/bb.7"
sed -n '/^\.SH FLAGS/,/^\.SH [^F]/p' "$man7" | sed 's/\\-/-/g' >table.txt
while IFS='	' read -r f long c; do
	grep -q "^-$f	--$long	.*$c" table.txt || no "bb(7) FLAGS: no row '-$f	--$long	... $c'"
done <flags.tsv
echo "$(cut -f1 flags.tsv | sort -u | wc -l) short flags in $(echo $cmds | wc -w) commands, one meaning each"
exit $fail

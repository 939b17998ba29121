#!/bin/sh
# compare.sh - every benchmark of docs/performance.md on two revisions, side by side in one
# run: `sh tests/bench/compare.sh BASE_REV NEW_REV` (any git revision names).
#
# Builds both revisions (Release, in temporary git worktrees under a temporary directory,
# all removed at the end), makes the inputs once (traces by BASE's maketrace from BASE's
# configs, captures from the shared corpus), then for each of RUNS rounds runs every
# benchmark on BASE and on NEW alternately (a b b a ..., the order flipped every round), and
# prints one table: benchmark, figure, the median of each side, the change, "WORSE" when NEW
# is worse than BASE by more than LIMIT %. Figures are CPU seconds (user + system, wait4) of
# the measured process, or the CPU seconds a benchmark program prints for its inner loop;
# the few that a program only gives as wall time say "wall". A missing tool or input skips
# its benchmarks with the reason.
#
# Env: RUNS (3) rounds; QUICK=1 a subset (docs/performance.md, "Comparing two revisions");
# ONLY=REGEX only the benchmarks whose name (the table's first column) matches (grep -E);
# LIMIT (5) percent; JOBS (2) build jobs; CORPUS (../shared/corpus beside the repository or
# its main worktree) for the capture benchmarks; TMPDIR; KEEP=1 keeps the temporary directory.
# Exit: 0 when no figure is worse by more than LIMIT %, 1 when some is, 2 on usage error.
set -u
me=compare.sh
usage() { echo "usage: sh tests/bench/compare.sh BASE_REV NEW_REV" >&2; exit 2; }
[ $# -eq 2 ] || usage
here=$(cd "$(dirname "$0")" && pwd)
repo=$(git -C "$here" rev-parse --show-toplevel) || exit 1
runs=${RUNS:-3}
quick=${QUICK:-0}
limit=${LIMIT:-5}
jobs=${JOBS:-2}
# the corpus beside the repository, or beside the main worktree of a linked one
corpus=${CORPUS:-$repo/../shared/corpus}
if [ -z "${CORPUS:-}" ] && [ ! -d "$corpus" ]; then
	common=$(git -C "$repo" rev-parse --path-format=absolute --git-common-dir 2>/dev/null)
	[ -n "$common" ] && corpus=$(dirname "$common")/../shared/corpus
fi
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3) || { echo "$me: error: needs python3" >&2; exit 1; }
helper="$py $here/compare.py"
revs=""
for r in "$1" "$2"; do
	c=$(git -C "$repo" rev-parse --verify --quiet "$r^{commit}") ||
		{ echo "$me: error: $r: not a revision" >&2; exit 2; }
	revs="$revs $c"
done
name_a=$1 name_b=$2
# shellcheck disable=SC2086
set -- $revs
rev_a=$1 rev_b=$2

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bb-compare.XXXXXX") || exit 1
cleanup() {
	for s in a b; do
		[ -d "$tmp/$s" ] && git -C "$repo" worktree remove --force "$tmp/$s" 2>/dev/null
	done
	if [ "${KEEP:-0}" = 1 ]; then echo "$me: kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
start=$(date +%s)
say() { printf '%s [%ds] %s\n' "$me" "$(($(date +%s) - start))" "$*" >&2; }

# --- build both revisions ----------------------------------------------------------------
targets="bbcap bbnest bbreport bbskew maketrace bench_trace bench_conv bench_dec_ms"
targets="$targets bench_dec_http bench_dec_http2 bench_dec_redis bench_dec_sql"
for s in a b; do
	eval "r=\$rev_$s"
	say "building $s = $r"
	git -C "$repo" worktree add --detach "$tmp/$s" "$r" >/dev/null 2>&1 ||
		{ echo "$me: error: cannot check out $r" >&2; exit 1; }
	cmake -S "$tmp/$s" -B "$tmp/$s/build" -DCMAKE_BUILD_TYPE=Release >"$tmp/build-$s.log" 2>&1 ||
		{ tail -n 30 "$tmp/build-$s.log" >&2; echo "$me: error: cannot configure $r" >&2; exit 1; }
	# shellcheck disable=SC2086
	if ! nice -n 10 cmake --build "$tmp/$s/build" -j "$jobs" --target $targets \
		>>"$tmp/build-$s.log" 2>&1; then
		# an older revision may lack a benchmark program: build what it has
		for t in $targets; do
			nice -n 10 cmake --build "$tmp/$s/build" -j "$jobs" --target "$t" \
				>>"$tmp/build-$s.log" 2>&1 || say "$s: cannot build $t (its benchmarks are skipped)"
		done
		[ -x "$tmp/$s/build/bin/bbnest" ] ||
			{ tail -n 30 "$tmp/build-$s.log" >&2; echo "$me: error: cannot build $r" >&2; exit 1; }
	fi
done
bin_a=$tmp/a/build/bin bin_b=$tmp/b/build/bin

# --- inputs, made once -------------------------------------------------------------------
in=$tmp/in
mkdir -p "$in"
cfg=$tmp/a/maketrace/configs
mt() { "$bin_a/maketrace" -q "$@"; }
skips=""
skip() { skips="$skips$1: skipped: $2
"; }
say "making inputs"
for t in short normal long par-low par-medium par-high delay; do
	mt -o "$in/$t.tr" "$cfg/table1-$t.json" || exit 1
done
if [ "$quick" != 1 ]; then
	mt -o "$in/m42.tr" "$cfg/multitier-par42.json" || exit 1
	mt -d 13 -o "$in/p.tr" "$cfg/table1-par-high.json" || exit 1
fi
inst_sizes="100000 1000000"
[ "$quick" = 1 ] && inst_sizes=100000
for n in $inst_sizes; do
	mt -d 0 -N "$n" -o "$in/mt$n.tr" "$cfg/multitier.json" || exit 1
done
mt -d 0 -N 2000000 -o "$in/big.tr" "$cfg/multitier.json" || exit 1
zeek=$corpus/protocols/http__zeek__1000-requests-one-dropped-response.pcap
have_cap=1
if [ ! -f "$zeek" ]; then
	have_cap=0
	skip bbcap "no $zeek (set CORPUS)"
elif ! command -v tcpdump >/dev/null 2>&1; then
	have_cap=0
	skip bbcap "no tcpdump"
else
	# bench_capture's capture (copies 2 s apart) and bench_capture_wm's two
	"$py" "$here/gen_copies.py" "$zeek" "$in/big.pcap" 100 2 >/dev/null &&
		"$py" "$here/gen_copies.py" "$zeek" "$in/wrk.pcap" 100 0.03 >/dev/null &&
		"$py" "$here/gen_longflows.py" "$in/long.pcap" 1000 >/dev/null 2>&1 ||
		{ echo "$me: error: cannot build the captures" >&2; exit 1; }
fi

# --- the benchmarks ----------------------------------------------------------------------
rec=$tmp/records
: >"$rec"
fail=0
# want BENCH: whether ONLY selects BENCH
want() { [ -z "${ONLY:-}" ] || printf '%s\n' "$1" | grep -Eq -- "$ONLY"; }
# put BENCH FIGURE SIDE VALUE UNIT
put() { printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" >>"$rec"; }
# cmd BENCH FIGURE K PROGRAM ARGS...: runs PROGRAM (the side's build of it) K times on
# each side, alternately (a b b a a b ...), stdout to /dev/null, and records the CPU of every
# run. IN=FILE for stdin.
cmd() {
	_b=$1 _f=$2 _k=$3
	shift 3
	want "$_b" || return 0
	if [ ! -x "$bin_a/$1" ] || [ ! -x "$bin_b/$1" ]; then
		say "skipped: $_b, $_f: $1 not built on both sides"
		return
	fi
	if $helper ab "$_k" "${IN:-/dev/null}" "$tmp/out" "$bin_a" "$bin_b" "$@" >"$tmp/ab"; then
		while read -r _s _v; do put "$_b" "$_f" "$_s" "$_v" "s CPU"; done <"$tmp/ab"
	else
		fail=1
	fi
}
# prog SIDE BENCH PROGRAM ARGS...: runs a benchmark program (unless ONLY leaves BENCH out),
# its output in $tmp/prog.out and its whole CPU in $pc
prog() {
	s=$1
	want "$2" || return 1
	shift 2
	_p=$bin_a/$1
	[ "$s" = b ] && _p=$bin_b/$1
	[ -x "$_p" ] || { say "skipped: $s has no $1"; return 1; }
	shift
	pc=$($helper cpu 1 /dev/null "$tmp/prog.out" "$_p" "$@") || { fail=1; return 1; }
}
# progs: the benchmark programs, each on both sides in $order2 (twice, QUICK once), their
# own figures
progs() {
	for s in $order2; do
		prog "$s" trace bench_trace || continue
		sed -n 's/^read   \([a-z-]*\) .*(cpu \([0-9.]*\) s).*/read \1\t\2/p' "$tmp/prog.out" |
			while IFS='	' read -r f v; do put trace "$f" "$s" "$v" "s CPU"; done
		put trace "write 2 traces + read them, whole process" "$s" "$pc" "s CPU"
	done
	for s in $order2; do
		prog "$s" "decoders ms" bench_dec_ms || continue
		awk 'NR > 1 && NF > 5 { print $1 "\t" $3 }' "$tmp/prog.out" |
			while IFS='	' read -r f v; do put "decoders ms" "$f" "$s" "$v" "s CPU"; done
	done
	for s in $order2; do
		prog "$s" "decoders http" bench_dec_http || continue
		sed -n 's/^\([a-z]*\) *on \([a-z]*\) .* bytes, \([0-9.]*\) s CPU;.*/\1 on \2\t\3/p' \
			"$tmp/prog.out" |
			while IFS='	' read -r f v; do put "decoders http" "$f" "$s" "$v" "s CPU"; done
	done
	for s in $order2; do
		prog "$s" "decoders http2" bench_dec_http2 || continue
		v=$(sed -n 's/.* s wall, \([0-9.]*\) s CPU.*/\1/p' "$tmp/prog.out")
		put "decoders http2" "gRPC 20,000 calls x 10" "$s" "$v" "s CPU"
	done
	for s in $order2; do
		prog "$s" "decoders redis" bench_dec_redis 64 || continue
		sed -n 's/^\(.\{22\}\) .* MB in *\([0-9.]*\) CPU s.*/\1\t\2/p' "$tmp/prog.out" |
			sed 's/ *	/	/' |
			while IFS='	' read -r f v; do put "decoders redis" "$f" "$s" "$v" "s CPU"; done
	done
	for s in $order2; do
		prog "$s" "decoders sql" bench_dec_sql || continue
		sed -n 's/^\([a-z]*\) *on \([a-z]*\) .* bytes, \([0-9.]*\) s;.*/\1 on \2\t\3/p' \
			"$tmp/prog.out" |
			while IFS='	' read -r f v; do put "decoders sql" "$f" "$s" "$v" "s wall"; done
		put "decoders sql" "whole process" "$s" "$pc" "s CPU"
	done
	for s in $order2; do
		prog "$s" bbconv bench_conv || continue
		# label (34 columns), mu, messages, quanta, CPU (whole child), run
		awk '/^Multi|^Email|^Synth/ { l = substr($0, 1, 34); sub(/ +$/, "", l);
			split(substr($0, 35), x, " "); print l " mu " x[1] "\t" x[4] }' "$tmp/prog.out" |
			while IFS='	' read -r f v; do put bbconv "$f" "$s" "$v" "s CPU"; done
	done
}
# clis: the commands, timed here on the shared inputs
clis() {
	cmd maketrace "table1-long -> /dev/null" 2 maketrace -q "$cfg/table1-long.json" -o /dev/null
	cmd maketrace "table1-par-high" 2 maketrace -q "$cfg/table1-par-high.json" -o /dev/null
	cmd maketrace "table1-long --skew --capture-rate" 2 maketrace -q --skew WS2=0.03 \
		--capture-rate 500 "$cfg/table1-long.json" -o /dev/null
	cmd maketrace "table1-par-high -I" 2 maketrace -q -I "$cfg/table1-par-high.json" -o /dev/null
	cmd bbskew "copy table1-long" 1 bbskew "$in/long.tr" -o /dev/null
	cmd bbskew "--skew WS2=0.030 table1-long" 1 bbskew --skew WS2=0.030 "$in/long.tr" -o /dev/null
	for t in short normal long par-low par-medium par-high delay; do
		n=1
		case $t in short) n=10 ;; normal | delay) n=3 ;; par-low) n=2 ;; esac
		cmd "bbnest Table 1" "$t" "$n" bbnest -q --stats --json --no-bins --top 1 "$in/$t.tr"
		[ "$quick" = 1 ] && continue
		cmd "bbnest Table 1" "$t --greedy" $((n * 3)) bbnest -q --stats --json --no-bins \
			--top 1 --greedy "$in/$t.tr"
	done
	if [ "$quick" != 1 ]; then
		for t in m42 p; do
			cmd "bbnest --global" "$t defaults" 1 bbnest -q "$in/$t.tr"
			cmd "bbnest --global" "$t --return-score --reassign" 1 bbnest -q --return-score \
				--reassign "$in/$t.tr"
			cmd "bbnest --global" "$t --global" 1 bbnest -q --global "$in/$t.tr"
			cmd "bbnest --global" "$t --return-score --global" 1 bbnest -q --return-score \
				--global "$in/$t.tr"
		done
	fi
	# bench_instances' rows (its point is memory: at 10^6 only the cheaper two here)
	t=$in/mt100000.tr
	cmd "bbnest instances" "10^5 none" 2 bbnest -q --stats -o /dev/null "$t"
	cmd "bbnest instances" "10^5 --instances" 2 bbnest -q --stats --instances /dev/null \
		-o /dev/null "$t"
	cmd "bbnest instances" "10^5 --otlp" 1 bbnest -q --stats --otlp /dev/null -o /dev/null "$t"
	cmd "bbnest instances" "10^5 --memory 0 --instances" 1 bbnest -q --stats --memory 0 \
		--instances /dev/null -o /dev/null "$t"
	if [ "$quick" != 1 ]; then
		t=$in/mt1000000.tr
		cmd "bbnest instances" "10^6 none" 1 bbnest -q --stats -o /dev/null "$t"
		cmd "bbnest instances" "10^6 --instances" 1 bbnest -q --stats --instances /dev/null \
			-o /dev/null "$t"
	fi
	cmd bbreport "2,000,000 messages" 1 bbreport -o /dev/null "$in/big.tr"
	[ "$quick" = 1 ] ||
		cmd bbreport "bbnest --top 30 on it" 1 bbnest -q --json --top 30 -o /dev/null "$in/big.tr"
	if [ "$have_cap" = 1 ]; then
		c=$in/big.pcap
		cmd bbcap "100 copies: bbcap" 5 bbcap -q -r "$c" -w /dev/null
		cmd bbcap "100 copies: --no-tokens" 5 bbcap -q --no-tokens -r "$c" -w /dev/null
		cmd bbcap "100 copies: --reassembly=libnids" 5 bbcap -q --reassembly=libnids -r "$c" \
			-w /dev/null
		for c in wrk long; do
			cmd "bbcap watermark" "$c: bbcap -r FILE" 5 bbcap -q -r "$in/$c.pcap" -w /dev/null
			cmd "bbcap watermark" "$c: --fixed-hold" 5 bbcap -q --fixed-hold -r "$in/$c.pcap" \
				-w /dev/null
			IN=$in/$c.pcap cmd "bbcap watermark" "$c: -r - < FILE" 5 bbcap -q -r - -w /dev/null
		done
	fi
}
# the read floor, the same program for both sides: what the machine's noise alone gives
control() {
	[ "$have_cap" = 1 ] && want control || return 0
	if v=$($helper cpu 3 /dev/null /dev/null tcpdump -r "$in/big.pcap" -w /dev/null); then
		put "control (same binary)" "tcpdump -r big.pcap -w /dev/null" "$1" "$v" "s CPU"
	fi
}

say "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
i=1
while [ "$i" -le "$runs" ]; do
	say "round $i of $runs"
	# flip the order every round, so that neither side always runs second
	if [ $((i % 2)) = 1 ]; then order2="a b b a"; else order2="b a a b"; fi
	[ "$quick" = 1 ] && order2=${order2% ? ?}
	progs
	clis
	for s in $order2; do control "$s"; done
	i=$((i + 1))
done
say "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

echo "base $name_a = $rev_a; new $name_b = $rev_b; median of $runs rounds (n = runs measured per side);"
echo "change = (new - base) / base; WORSE = more than $limit% worse; $(nproc) cores, load" \
	"average $(cut -d' ' -f1-3 /proc/loadavg) at the end; $(($(date +%s) - start)) s in all"
[ -n "$skips" ] && printf '%s' "$skips"
$helper table "$rec" "$limit" >"$tmp/table" || exit 1
cat "$tmp/table"
[ "$fail" = 0 ] || { echo "$me: error: some benchmarks failed (see above)" >&2; exit 1; }
grep -q '^0 figure' "$tmp/table" && exit 0
exit 1

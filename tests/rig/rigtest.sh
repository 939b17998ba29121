# rigtest.sh - sourced by the rig tests (rig_test.sh, rig2_test.sh): what they
# share. Scores a run with several bbnest option sets, one table row each, and
# enforces the targets on one of them.
#
#   rig_prelude TOOL...          skips (77) unless root and the tools are
#                                there; sets T (scratch, $BB_TMP, absolute)
#   run_all LABEL                every level of $LEVELS, then the normal/delay
#                                pair at $DELAY_RUN ($DELAY_SPEC, TYPE:BACKEND:MS,
#                                on the delayed one): run_level SPEC DELAY NAME
#                                (the test's) then nest_rows; after_run NAME,
#                                when the test has it, after each of the pair
#   nest_rows NAME TRUTH...      bbnest on $T/NAME.tr with every option set
#                                (and --no-content when bbnest has it and the
#                                trace has tok= or ctx=), a row each
#                                (score.py nest --brief TRUTH...)
#   delay_rows TRUTH... ARGS     score.py delay of normal against delay for
#                                every option set
#   enforce WHAT                 fails the test (fail=1) unless RIG_LAX is set
#   rig_keep                     copies the run to $RIG_KEEP when set
#
# The option sets: RIG_NEST_OPTS (empty or unset: bbnest's defaults; the only
# one enforced), the defaults, "--greedy --penalty 0,2,2 --smooth 2", "--return-score
# --global", and BBNEST_OPTS when set; duplicates are dropped. Targets
# (issue 14): RIG_MAX_WRONG (0.02), RIG_TOP_TOL (0.05), RIG_DELAY_TOL (0.10),
# RIG_OTHER_MS (2). Needs $BB_BIN, $BB_SRC, $BB_TMP, and $logs (the services'
# logs) for run_all.

rig_prelude() {
	[ "$(id -u)" = 0 ] || { echo "skipped: needs root (network namespaces)" >&2; exit 77; }
	PATH=$PATH:/usr/sbin:/sbin
	for t in ip ethtool runuser bash /usr/bin/python3 redis-server memcached "$@"; do
		command -v "$t" >/dev/null 2>&1 || { echo "skipped: $t not installed" >&2; exit 77; }
	done
	ls -d /usr/lib/postgresql/*/bin >/dev/null 2>&1 ||
		{ echo "skipped: PostgreSQL not installed" >&2; exit 77; }
	[ -x "$BB_BIN/bbapp" ] || { echo "FAIL: $BB_BIN/bbapp not built"; exit 1; }
	mkdir -p "$BB_TMP"
	T=$(cd "$BB_TMP" && pwd)
	rm -f "$T"/*.log "$T"/*.tr "$T"/*.json "$T"/*.err "$T"/*.pcap "$T"/*.load "$T"/*.rc
}

score() { /usr/bin/python3 "$BB_SRC/tests/rig/score.py" "$@"; }
fail=0

NEST_OPTS=${RIG_NEST_OPTS:-}
LAX=${RIG_LAX:-}
MAX_WRONG=${RIG_MAX_WRONG:-0.02}
TOP_TOL=${RIG_TOP_TOL:-0.05}
DELAY_TOL=${RIG_DELAY_TOL:-0.10}
OTHER_MS=${RIG_OTHER_MS:-2}
nopts=0
add_opts() {
	_k=0
	while [ $_k -lt $nopts ]; do
		eval "[ \"\$opts_$_k\" = \"\$1\" ]" && return
		_k=$((_k + 1))
	done
	eval "opts_$nopts=\$1"
	nopts=$((nopts + 1))
}
add_opts "$NEST_OPTS"
add_opts ""
add_opts "--greedy --penalty 0,2,2 --smooth 2"
add_opts "--return-score --global"
[ -n "${BBNEST_OPTS:-}" ] && add_opts "$BBNEST_OPTS"
# content tokens and context headers ignored: only when bbnest can
NOCONTENT=""
"$BB_BIN/bbnest" --help 2>&1 | grep -q -- '--no-content' && NOCONTENT=1
rows_header=""

enforce() {
	if [ -n "$LAX" ]; then
		echo "NOT MET: $1 (RIG_LAX: not enforced)"
	else
		echo "FAIL: $1"
		fail=1
	fi
}

# one_row NAME K SUFFIX EXTRA: bbnest with option set K and EXTRA options on
# $T/NAME.tr into $T/NAME.oK$SUFFIX.json, its scored cells on stdout; the
# score's status (score.py nest --brief; 3: bbnest failed) in
# $T/NAME.oK$SUFFIX.rc
one_row() {
	eval "_o=\$opts_$2"
	_b=$T/$1.o$2$3
	# shellcheck disable=SC2086
	if ! "$BB_BIN/bbnest" -q --json --no-bins $_o $4 "$T/$1.tr" >"$_b.json" 2>"$_b.err"; then
		echo 3 >"$_b.rc"
		echo "bbnest failed: $(head -c 200 "$_b.err" | tr '\n' ' ') | | NOT MET"
		return
	fi
	# shellcheck disable=SC2086
	score nest "$truth_first" "$_b.json" $truth_rest --brief --top 5 --tol "$TOP_TOL" \
		--max-wrong "$MAX_WRONG"
	echo $? >"$_b.rc"
}

nest_rows() { # NAME TRUTH_FIRST TRUTH_REST...
	_name=$1
	truth_first=$2
	shift 2
	truth_rest="$*"
	if [ -z "$rows_header" ]; then
		rows_header=1
		echo "| run | bbnest options | wrong | top-5 worst, missed, invented | checks |${NOCONTENT:+ --no-content: wrong | top-5 | checks |}"
		echo "|---|---|---|---|---|${NOCONTENT:+---|---|---|}"
	fi
	# content tokens or context headers to ignore: else --no-content changes nothing
	_tokens=$(grep -m 1 -E '	(tok|ctx)=' "$T/$_name.tr")
	_k=0
	while [ $_k -lt $nopts ]; do
		eval "_o=\$opts_$_k"
		_cells=$(one_row "$_name" $_k "" "")
		_rc=$(cat "$T/$_name.o$_k.rc")
		_nc=""
		if [ -n "$NOCONTENT" ] && [ -z "$_tokens" ]; then
			_nc=" the same: no tok= or ctx= in the trace | | |"
		elif [ -n "$NOCONTENT" ]; then
			_nc=$(one_row "$_name" $_k .nc --no-content)
			_nc=" $_nc |"
		fi
		echo "| $_name | ${_o:-(defaults)} | $_cells |$_nc"
		if [ $_k = 0 ]; then
			case $_rc in
			0) ;;
			2) echo "FAIL: $_name: requests failed or not all captured"; fail=1 ;;
			3) echo "FAIL: $_name: bbnest ${_o:-(defaults)} failed"; fail=1 ;;
			*) enforce "$_name: bbnest ${_o:-(defaults)}: <= $MAX_WRONG of the instances wrong, the top-5 patterns within $TOP_TOL" ;;
			esac
		fi
		_k=$((_k + 1))
	done
}

delay_rows() { # TRUTH_FIRST TRUTH_REST... score.py delay options
	# with the joined traces (the second app), a first-tier node is measured
	# beyond its true change: the system's own delays move between two runs
	_paths=""
	[ -s "$T/normal.path.tr" ] && [ -s "$T/delay.path.tr" ] &&
		_paths="--paths $T/normal.path.tr,$T/delay.path.tr,$T/normal.client.log"
	_k=0
	while [ $_k -lt $nopts ]; do
		eval "_o=\$opts_$_k"
		for _s in "" .nc; do
			[ "$_s" = .nc ] && [ -z "$NOCONTENT" ] && continue
			[ -s "$T/normal.o$_k$_s.json" ] && [ -s "$T/delay.o$_k$_s.json" ] || continue
			# shellcheck disable=SC2086 # _paths is two words or none
			_out=$(score delay "$T/normal.o$_k$_s.json" "$T/delay.o$_k$_s.json" "$@" \
				--tol "$DELAY_TOL" --other "$OTHER_MS" $_paths)
			_rc=$?
			echo "$_out" | sed "s|^|+50 ms, bbnest ${_o:-(defaults)}${_s:+ --no-content}: |"
			[ $_k = 0 ] && [ -z "$_s" ] && [ $_rc != 0 ] &&
				enforce "bbnest ${_o:-(defaults)}: the added 50 ms within $DELAY_TOL, no other node moved by more than $OTHER_MS ms"
		done
		_k=$((_k + 1))
	done
}

run_all() { # LABEL
	_paced="not paced"
	[ "${RIG_GAP_MS:-0}" != 0 ] && _paced="at least $RIG_GAP_MS ms apart"
	echo "$1: requests $_paced; servers ${rig_rt:-at normal priority};" \
		"enforced: bbnest ${NEST_OPTS:-(defaults)}"
	for _lv in $LEVELS; do
		run_level "$_lv" "" "${_lv%%:*}"
		# shellcheck disable=SC2086
		nest_rows "${_lv%%:*}" "$T/${_lv%%:*}.client.log" $logs
	done
	# the added delay: the normal run and the delayed one at the same level
	for _run in normal delay; do
		_d=""
		[ $_run = delay ] && _d=$DELAY_SPEC
		run_level "$DELAY_RUN" "$_d" "$_run"
		# shellcheck disable=SC2086
		nest_rows "$_run" "$T/$_run.client.log" $logs
		if command -v after_run >/dev/null 2>&1; then
			after_run "$_run"
		fi
	done
}

rig_keep() {
	[ -n "${RIG_KEEP:-}" ] || return 0
	mkdir -p "$RIG_KEEP"
	cp "$T"/*.tr "$T"/*.json "$T"/*.log "$T"/*.load "$T/hosts" "$RIG_KEEP"/
	if [ -n "${RIG_PCAP:-}" ]; then
		cp "$T"/*.pcap "$RIG_KEEP"/
	fi
}

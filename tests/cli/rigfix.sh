# rigfix.sh - sourced by the tests on kept rig captures (tests/fixtures/rig*: a level's
# trace, its client log and the first app's true-path logs, gzipped): unpacks one into
# $BB_TMP (the current directory after), runs bbnest's defaults on it (out.json) and
# scores the result with tests/rig/score.py.
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: needs python3"; exit 77; }
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
fail=0
no() { echo "FAIL: $*"; fail=1; }

# rig_unpack FIXTURE LEVEL [LOG...]: LEVEL.tr, LEVEL.client.log and the app's logs (the
# first app's app1.log, app2.log and auth.log unless named), here
rig_unpack() {
	fx=$1 lv=$2
	shift 2
	[ $# -gt 0 ] || set -- app1.log app2.log auth.log
	for f in "$lv.tr" "$lv.client.log" "$@"; do
		gzip -dc "$BB_SRC/tests/fixtures/$fx/$f.gz" >"$f" || exit 1
	done
}

# rig_cut TRACE start|end SHARE OUT: TRACE without the lines before (start) or after (end)
# SHARE of its span, as a capture begun or stopped while requests are in flight
# (tests/rig/cut.sh)
rig_cut() {
	sh "$BB_SRC/tests/rig/cut.sh" "$1" "$2" "$3" >"$4" || exit 1
}

# rig_fixture FIXTURE LEVEL MAX_WRONG: at most MAX_WRONG of the instances wrong and the
# top-5 true patterns' counts within 5%, else a failure
rig_fixture() {
	rig_unpack "$1" "$2"
	"$BB_BIN/bbnest" -q --json --no-bins "$2.tr" >out.json || exit 1
	line=$(python3 "$BB_SRC/tests/rig/score.py" nest "$2.client.log" out.json app1.log \
		app2.log auth.log --brief --top 5 --tol 0.05 --max-wrong "$3")
	echo "$line"
	case $line in *"| met") ;; *) no "wrong share or top-5 counts over the limits: $line" ;; esac
}

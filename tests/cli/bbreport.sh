#!/bin/sh
# bbreport.sh - bbreport writes one self-contained page for the rig's slow capture against
# its normal one, that headless Chromium loads with no console errors and no network
# request, every pattern graph an SVG, the tables sorting on a click
# (tests/report/chromium_check.py, through the DevTools protocol); errors and usage.
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
# Graphviz's and fontconfig's own leaks (tests/lsan.supp), under LeakSanitizer
LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$BB_SRC/tests/lsan.supp:print_suppressions=0"
export LSAN_OPTIONS
rep=$BB_BIN/bbreport
fail=0
no() { echo "FAIL: $*"; fail=1; }

for run in normal delay; do
	"$BB_BIN/bbcap" -q -r "$BB_SRC/examples/rig/$run.pcap" --names "$BB_SRC/examples/rig/hosts" \
		-w $run.tr 2>/dev/null || no "bbcap $run failed"
done
"$rep" --penalty 0,2,2 --smooth 2 -o report.html --baseline normal.tr delay.tr 2>err ||
	no "bbreport failed: $(cat err)"
[ -s err ] && no "bbreport wrote to stderr: $(cat err)"
# self-contained: no script, style, image or link from elsewhere
grep -Eiq '<(script|img|link|iframe)[^>]* (src|href)=' report.html && no "the page loads resources"
grep -q 'app2 -&gt; pg +50.1 ms (p &lt; 1e-6), nothing else changed' report.html ||
	no "the page lacks bbdiff's verdict"
grep -q '<td class="l">dropped_kernel</td>' report.html || no "the page lacks the capture's health"
# without a baseline, on a maketrace trace (no #capture line)
"$BB_BIN/maketrace" -q -d 60 -o mt.tr "$BB_SRC/maketrace/configs/multitier.json"
"$rep" -o mt.html --top 5 mt.tr 2>err || no "bbreport on maketrace failed: $(cat err)"
grep -q 'no <code>#capture</code> line' mt.html || no "no note about the missing #capture line"
[ "$(grep -c '<div class="graph" id="g' mt.html)" -eq 5 ] || no "--top 5: not 5 graphs"
# the capacities the nesting assumed (bbnest's stats.assumed_capacities) are named:
# the multitier web servers' exact 2 calls each; none on the rig's capture
grep -q 'id="assumed"' report.html && no "the rig's report names an assumed capacity"
if command -v jq >/dev/null 2>&1; then
	"$BB_BIN/bbnest" -q --json mt.tr | jq -r '.stats.assumed_capacities[] |
		"every call into <code>\(.node)</code> makes \(.children) calls (\(.calls) calls, "' \
		>assumed.txt
	[ -s assumed.txt ] || no "bbnest assumed no capacity on the multitier trace"
	while IFS= read -r l; do
		grep -qF "$l" mt.html || no "the page does not name: $l"
	done <assumed.txt
fi
# errors and usage
"$rep" delay.tr >/dev/null 2>err; [ $? -eq 2 ] || no "no -o: not exit 2"
[ "$(cat err)" = "bbreport: error: -o FILE is required
Try 'bbreport --help' for more information." ] || no "no -o: $(cat err)"
"$rep" -o x.html delay.tr --top >/dev/null 2>err; [ $? -eq 2 ] || no "--top: not exit 2"
[ "$(head -n 1 err)" = "bbreport: error: --top needs a value" ] || no "--top: $(cat err)"
"$rep" -o x.html no-such.tr 2>err; rc=$?
[ $rc -eq 1 ] && grep -q '^bbreport: error: no-such.tr: ' err || no "missing trace: $rc $(cat err)"
"$rep" -o no/such/dir/x.html delay.tr 2>err; rc=$?
[ $rc -eq 1 ] && grep -q '^bbreport: error: no/such/dir/x.html: ' err || no "bad -o: $rc $(cat err)"

chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
	echo "SKIP (browser part): chromium is not installed (scripts/install-deps.sh installs it)"
	[ $fail -eq 0 ] && exit 77
	exit $fail
fi
if ! /usr/bin/python3 -c 'import websocket' 2>/dev/null; then
	echo "SKIP (browser part): python3-websocket is not installed (scripts/install-deps.sh)"
	[ $fail -eq 0 ] && exit 77
	exit $fail
fi
/usr/bin/python3 "$BB_SRC/tests/report/chromium_check.py" "$chromium" report.html 5 ||
	no "the rig report in Chromium"
/usr/bin/python3 "$BB_SRC/tests/report/chromium_check.py" "$chromium" mt.html 5 ||
	no "the maketrace report in Chromium"
exit $fail

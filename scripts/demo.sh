#!/bin/sh
# demo.sh - the main job on a bundled example: packets captured on the real
# multi-tier rig (examples/rig/, tests/rig/), decoded by bbcap, causal paths
# inferred by bbnest and bbconv, the slow node found. Needs no root.
# Usage: sh scripts/demo.sh BUILD_DIR
set -eu
build=${1:-build/release}
bin=$build/bin
ex=examples/rig
out=out/demo
# bbnest's defaults (docs/tutorial.md): no option to know
nest_opts=""
mkdir -p "$out"

echo "== the capture: nginx, two app servers, auth, redis, memcached, PostgreSQL, dnsmasq"
echo "   ($ex/README.md); app2 was given +50 ms before its PostgreSQL call for 'item'"
echo
echo "== bbcap -r $ex/delay.pcap --names $ex/hosts"
"$bin/bbcap" -r "$ex/delay.pcap" --names "$ex/hosts" -w "$out/delay.tr" 2>"$out/bbcap.txt"
sed 's/^/   /' "$out/bbcap.txt"
echo "   trace written to $out/delay.tr"

if [ -x "$bin/bbnest" ]; then
	echo
	echo "== bbnest: causal path patterns, the 6 most frequent"
	"$bin/bbnest" -q $nest_opts --text --rank count --top 6 "$out/delay.tr" | tee "$out/delay-nest.txt"
	"$bin/bbnest" -q $nest_opts --rank count --top 6 -o "$out/delay-nest.dot" "$out/delay.tr"
	"$bin/bbnest" -q $nest_opts --json --no-bins "$out/delay.tr" >"$out/delay-nest.json"
	if command -v dot >/dev/null 2>&1; then
		dot -Tsvg "$out/delay-nest.dot" -o "$out/delay-nest.svg"
		echo "   graph: $out/delay-nest.svg"
	fi
	if [ -x /usr/bin/python3 ]; then
		echo
		echo "== against the ground truth the services logged ($ex/*.log)"
		/usr/bin/python3 tests/rig/score.py nest "$ex/delay.client.log" "$out/delay-nest.json" \
			"$ex/app1.log" "$ex/app2.log" "$ex/auth.log" || true
	fi
fi
if [ -x "$bin/bbconv" ]; then
	echo
	echo "== bbconv: delay graph at quantum 1 ms, the edges into pg"
	"$bin/bbconv" -Q 0.001 --max-delay 1 --text -o "$out/delay-conv.txt" "$out/delay.tr"
	grep -B1 ' pg  ' "$out/delay-conv.txt" | head -n 20 || true
	echo "   ... (whole graph: $out/delay-conv.txt)"
	"$bin/bbconv" -Q 0.001 --max-delay 1 -o "$out/delay-conv.dot" "$out/delay.tr"
	if command -v dot >/dev/null 2>&1; then
		dot -Tsvg "$out/delay-conv.dot" -o "$out/delay-conv.svg"
		echo "   graph: $out/delay-conv.svg"
	fi
fi

if [ -x "$bin/bbdiff" ] && [ -x "$bin/bbreport" ]; then
	echo
	echo "== bbdiff: the normal run against the slow one"
	"$bin/bbcap" -r "$ex/normal.pcap" --names "$ex/hosts" -w "$out/normal.tr" 2>/dev/null
	"$bin/bbdiff" $nest_opts "$out/normal.tr" "$out/delay.tr" | tee "$out/diff.txt" || true
	echo
	echo "== bbreport: one page with all of it"
	"$bin/bbreport" $nest_opts -o "$out/report.html" --baseline "$out/normal.tr" "$out/delay.tr"
	echo "   report: $out/report.html"
fi

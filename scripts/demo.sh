#!/bin/sh
# demo.sh - the main job on a bundled example: synthesise the paper's multi-tier
# system (figure 10), summarise it, and infer its causal paths with whichever
# algorithms are built. Usage: sh scripts/demo.sh BUILD_DIR
set -eu
build=${1:-build/release}
bin=$build/bin
out=out/demo
mkdir -p "$out"

echo "== maketrace: the multi-tier system of the paper's figure 10 (maketrace/configs/multitier.json)"
"$bin/maketrace" -q --summary -o "$out/multitier.tr" maketrace/configs/multitier.json
echo "   trace written to $out/multitier.tr"

if [ -x "$bin/bbnest" ]; then
	echo
	echo "== bbnest: causal path patterns, ranked by total latency (top 5)"
	"$bin/bbnest" -q --text --top 5 "$out/multitier.tr"
	"$bin/bbnest" -q --top 5 -o "$out/multitier-nest.dot" "$out/multitier.tr"
	if command -v dot >/dev/null 2>&1; then
		dot -Tsvg "$out/multitier-nest.dot" -o "$out/multitier-nest.svg"
		echo "   graph: $out/multitier-nest.svg"
	fi
fi
if [ -x "$bin/bbconv" ]; then
	echo
	echo "== bbconv: delay graph at quantum 0.01 s"
	"$bin/bbconv" -q 0.01 --text -o "$out/multitier-conv.txt" "$out/multitier.tr"
	head -n 24 "$out/multitier-conv.txt"
	echo "   ... (whole graph: $out/multitier-conv.txt)"
	"$bin/bbconv" -q 0.01 -o "$out/multitier-conv.dot" "$out/multitier.tr"
	if command -v dot >/dev/null 2>&1; then
		dot -Tsvg "$out/multitier-conv.dot" -o "$out/multitier-conv.svg"
		echo "   graph: $out/multitier-conv.svg"
	fi
fi

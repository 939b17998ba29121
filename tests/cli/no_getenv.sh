#!/bin/sh
# no_getenv.sh - the programs and libraries take their settings from flags, not from the
# environment: no getenv() in the sources of the modules (tests and benchmarks may read
# BB_SRC, TMPDIR and the like). Experiment switches read from the environment were once
# left in the nesting code; this keeps them out.
# usage: sh no_getenv.sh SOURCE_DIR
set -eu
src=${1:?usage: no_getenv.sh SOURCE_DIR}
dirs="capture convolution decoders maketrace nesting report trace traceio viz"
found=0
for d in $dirs; do
	[ -d "$src/$d" ] || { echo "no_getenv: error: $src/$d: no such folder" >&2; exit 1; }
	if grep -rnE '\b(secure_)?getenv[[:space:]]*\(' --include='*.c' --include='*.h' "$src/$d"; then
		found=1
	fi
done
if [ "$found" = 1 ]; then
	echo "no_getenv: FAIL: the lines above read the environment; make it a flag" >&2
	exit 1
fi
# the check itself finds a call
t=$(mktemp)
trap 'rm -f "$t"' EXIT
printf 'int f(void) { return getenv ("X") != 0; }\n' >"$t"
grep -qE '\b(secure_)?getenv[[:space:]]*\(' "$t" || { echo "no_getenv: self-test failed" >&2; exit 1; }
echo "no_getenv: none in $dirs"

#!/bin/sh
# robust_noshell.sh - no bb library or command runs a shell or another program:
# no system(), popen(), exec*(), posix_spawn*() or fork() in the C sources of
# trace, decoders, capture, convolution, nesting, viz and maketrace. So no
# packet byte can reach a shell.
set -u
: "${BB_SRC:?}"
cd "$BB_SRC" || exit 1
dirs=""
for d in trace decoders capture convolution nesting viz maketrace; do
	[ -d "$d" ] && dirs="$dirs $d"
done
[ -n "$dirs" ] || { echo "FAIL: no source folders under $BB_SRC"; exit 1; }
n=$(find $dirs -name '*.[ch]' | wc -l)
[ "$n" -gt 0 ] || { echo "FAIL: no C sources found in$dirs"; exit 1; }
hits=$(find $dirs -name '*.[ch]' -exec grep -HnE \
	'(^|[^_a-zA-Z0-9])(system|popen|execl|execlp|execle|execv|execvp|execvpe|fexecve|posix_spawnp?|fork|vfork)[[:space:]]*\(' {} + |
	grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/?\*|//)')
if [ -n "$hits" ]; then
	echo "FAIL: expected no process creation in$dirs; got:"
	echo "$hits"
	exit 1
fi
echo "ok: $n C files in$dirs, no system/popen/exec*/posix_spawn/fork"

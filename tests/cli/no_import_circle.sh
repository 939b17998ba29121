#!/bin/sh
# no_import_circle.sh - no circle of calls between the files of one module folder
# From the built object files of each module (nm: the global symbols each file defines
# and the ones it uses), builds the file-level call graph inside the folder and fails
# when it has a cycle, printing the cycle and the symbols of each step.
# Modules in BB_CIRCLE_STRICT (space-separated folder names, or "all"; default
# "nesting") fail the test; the others print their cycles as warnings.
# usage: sh no_import_circle.sh [BUILD_DIR]   (default: BB_BIN/..)
set -eu
build=${1:-${BB_BIN:?}/..}
strict=${BB_CIRCLE_STRICT:-nesting}
modules="trace decoders capture nesting convolution viz report traceio maketrace"
command -v nm >/dev/null 2>&1 || { echo "SKIP: needs nm (binutils)"; exit 77; }
[ -d "$build" ] || { echo "$0: error: $build: no build directory" >&2; exit 1; }

is_strict() {
	case " $strict " in *" all "* | *" $1 "*) return 0 ;; esac
	return 1
}

fail=0
checked=0
for m in $modules; do
	objs=$(find "$build/$m" -path '*/CMakeFiles/*' -name '*.c.o' 2>/dev/null | sort)
	if [ -z "$objs" ]; then
		is_strict "$m" && { echo "$m: error: no object files under $build/$m" >&2; fail=1; }
		continue
	fi
	checked=$((checked + 1))
	# one line per symbol: FILE TYPE NAME (FILE: the source file, e.g. nest_run.c)
	# shellcheck disable=SC2086
	out=$(nm -A -P $objs | awk '{
		f = $1; sub(/:$/, "", f); sub(/.*\//, "", f); sub(/\.o$/, "", f)
		if (NF >= 3) print f, $3, $2 }' | awk -v mod="$m" '
	# Global definitions (functions, data) and undefined references; an edge A -> B
	# when A uses a symbol B defines. Files are the sources, so one file compiled
	# into two targets is one node.
	$2 ~ /^[TDBRCVWG]$/ { def[$3] = $1; next }
	$2 == "U" { nref++; rf[nref] = $1; rs[nref] = $3 }
	END {
		for (i = 1; i <= nref; i++) {
			a = rf[i]; b = def[rs[i]]
			if (b == "" || b == a)
				continue
			if (!((a, b) in sym)) {
				sym[a, b] = rs[i]
				nadj[a]++; adj[a, nadj[a]] = b
				node[a] = 1; node[b] = 1
			}
		}
		# depth-first search; a grey target is a cycle: the stack from it
		for (v in node)
			if (!color[v])
				dfs(v)
		exit ncyc > 0
	}
	function dfs(v,    i, w, j, to, line) {
		color[v] = 1; depth++; stk[depth] = v
		for (i = 1; i <= nadj[v]; i++) {
			w = adj[v, i]
			if (color[w] == 1) {
				for (j = depth; stk[j] != w; j--)
					;
				line = ""
				for (; j <= depth; j++) {
					to = j < depth ? stk[j + 1] : w
					line = line (line == "" ? "" : ", ") stk[j] " -> " to \
					    " (" sym[stk[j], to] ")"
				}
				print mod ": cycle: " line
				ncyc++
			} else if (!color[w]) {
				dfs(w)
			}
		}
		depth--; color[v] = 2
	}') && continue
	if is_strict "$m"; then
		echo "$out" | sed 's/^/error: /'
		fail=1
	else
		echo "$out" | sed 's/^/warning: /'
	fi
done
[ "$checked" -gt 0 ] || { echo "SKIP: no object files under $build"; exit 77; }
[ "$fail" -eq 0 ] || { echo "FAIL: a module folder has a call circle (strict: $strict)"; exit 1; }
echo "ok: no call circle in: $strict (of $checked modules checked)"

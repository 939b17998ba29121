#!/usr/bin/env python3
# func_length.py - no C function over 120 lines in capture/, decoders/, nesting/,
# convolution/ (issue 18), except those listed in func_length_exceptions.txt.
#
#   func_length.py [--root DIR] [--max N] [--exceptions FILE] [--list]
#
# A function is a top-level '{' whose previous token is ')': its length runs
# from the line of its name to the line of its closing '}', both counted
# (what `sed -n START,ENDp | wc -l` gives). The scan matches braces and
# parentheses, skipping comments, string and character literals and
# preprocessor lines (an unbalanced brace under #if 0 would mislead it).
# Exceptions are lines "FILE:FUNCTION REASON" (FILE relative to the root;
# '#' starts a comment). Exits 1 listing every function
# over the limit that is not an exception and every exception that no longer
# applies (so the list only shrinks), 0 otherwise; --list prints every
# function with its length. Before the scan, a self-test checks the scanner on
# tricky C (braces in comments, strings, character literals and macros).
import argparse
import os
import re
import sys

DIRS = ("capture", "decoders", "nesting", "convolution")
IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def strip(src):
    """src with comments, string and char literals and preprocessor lines
    replaced by spaces (newlines kept, so line numbers stay)."""
    out = []
    i, n = 0, len(src)
    line_start = True
    while i < n:
        c = src[i]
        if line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if line_start and c == "#":
            # a directive, with its backslash continuations
            while i < n and src[i] != "\n":
                if src[i] == "\\" and i + 1 < n and src[i + 1] == "\n":
                    out.append("  \n")
                    i += 2
                    continue
                # a comment inside a directive may run past the line
                if src.startswith("/*", i):
                    j = src.find("*/", i + 2)
                    j = n if j < 0 else j + 2
                    out.append(re.sub(r"[^\n]", " ", src[i:j]))
                    i = j
                    continue
                out.append(" ")
                i += 1
            continue
        line_start = False
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        else:
            out.append(c)
            if c == "\n":
                line_start = True
            i += 1
    return "".join(out)


def functions(src):
    """[(name, first_line, last_line)] of the function definitions in src."""
    s = strip(src)
    found = []
    depth = 0
    last_tok = ""       # the last non-space character at depth 0
    close_paren = -1    # offset of the ')' that last_tok is
    open_of = {}        # offset of a depth-0 ')' -> offset of its '('
    stack = []
    start = None
    for i, c in enumerate(s):
        if c == "(":
            stack.append(i)
        elif c == ")":
            if stack:
                o = stack.pop()
                if depth == 0 and not stack:
                    open_of[i] = o
        if c == "{":
            if depth == 0 and last_tok == ")" and close_paren in open_of:
                o = open_of[close_paren]
                # the name: the identifier just before the parameter list
                j = o - 1
                while j >= 0 and s[j].isspace():
                    j -= 1
                k = j
                while k >= 0 and (s[k].isalnum() or s[k] == "_"):
                    k -= 1
                name = s[k + 1:j + 1]
                if IDENT.fullmatch(name or "") and name not in ("if", "while", "for", "switch"):
                    start = (name, s.count("\n", 0, k + 1) + 1)
                else:
                    start = None
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0 and start:
                found.append((start[0], start[1], s.count("\n", 0, i) + 1))
                start = None
            if depth < 0:
                depth = 0
        if depth == 0 and not c.isspace():
            last_tok = c
            if c == ")":
                close_paren = i
    return found


SELF_TEST = r'''/* x.c - a { in a comment */
#define BLOCK(x) do { if (x) { } } while (0)
#define LONG(x) { \
	x; }
static const char *s = "}{ \" {";
static const char c = '{', d = '\'', e = '}';
static int table[] = {1, 2, 3};
struct pt { int x, y; };
static int
two(int a,
    int b)
{
	/* } */
	// {
	if (a) {
		return '}';
	}
	return b + (int)sizeof(struct pt){0};
}

int main(void) { return two(1, 2); }
static void (*fp)(void) = 0;
static void three(void (*cb)(int))
{
#if 0
	cb(0);
#endif
	cb(1);
}
'''


def self_test():
    got = functions(SELF_TEST)
    want = [("two", 10, 19), ("main", 21, 21), ("three", 23, 29)]
    if got != want:
        print("func_length.py: self-test failed: got %r, want %r" % (got, want))
        return False
    return True


def main():
    ap = argparse.ArgumentParser(description="No C function over N lines, but the listed exceptions.")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    ap.add_argument("--max", type=int, default=120)
    ap.add_argument("--exceptions", default=None)
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if not self_test():
        return 1
    exc_path = a.exceptions or os.path.join(a.root, "tests", "cli", "func_length_exceptions.txt")
    exceptions = {}
    try:
        with open(exc_path, encoding="utf-8") as f:
            for ln, line in enumerate(f, 1):
                line = line.split("#", 1)[0].strip()
                if not line:
                    continue
                key, _, reason = line.partition(" ")
                if ":" not in key or not reason.strip():
                    print("%s:%d: error: expected FILE:FUNCTION REASON" % (exc_path, ln))
                    return 1
                exceptions[key] = reason.strip()
    except FileNotFoundError:
        pass
    long_ones = {}
    nfunc = 0
    for d in DIRS:
        top = os.path.join(a.root, d)
        for name in sorted(os.listdir(top)):
            if not name.endswith(".c"):
                continue
            rel = d + "/" + name
            with open(os.path.join(top, name), encoding="utf-8", errors="replace") as f:
                src = f.read()
            for fn, first, last in functions(src):
                nfunc += 1
                length = last - first + 1
                if a.list:
                    print("%5d %s:%s" % (length, rel, fn))
                if length > a.max:
                    long_ones[rel + ":" + fn] = (length, first)
    status = 0
    for key, (length, first) in sorted(long_ones.items()):
        if key in exceptions:
            print("excepted: %s (line %d) is %d lines: %s" % (key, first, length, exceptions[key]))
        else:
            f, fn = key.split(":")
            print("FAIL %s:%d: %s is %d lines (more than %d)" % (f, first, fn, length, a.max))
            status = 1
    for key in sorted(exceptions):
        if key not in long_ones:
            print("FAIL %s: listed in %s but not over %d lines (any more): remove the line"
                  % (key, os.path.basename(exc_path), a.max))
            status = 1
    print("%d functions in %s: %d over %d lines, %d of them excepted"
          % (nfunc, ", ".join(DIRS), len(long_ones), a.max,
             sum(1 for k in long_ones if k in exceptions)))
    return status


if __name__ == "__main__":
    sys.exit(main())

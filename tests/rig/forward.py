#!/usr/bin/python3
# forward.py - how long nginx took to forward each request to the app tier in
# a rig run: per request id (the id= of the HTTP request line), the time from
# the client -> nginx call to the nginx -> app call, as the capture saw it.
# A diagnostic for docs/accuracy.md: usage: forward.py TRACE...
import sys


def ns(s):
    a, b = s.split(".")
    return int(a) * 10**9 + int(b)


for path in sys.argv[1:]:
    start, fwd = {}, {}
    for line in open(path):
        if line.startswith("#"):
            continue
        f = line.rstrip("\n").split("\t")
        if f[1] != "CALL":
            continue
        rid = [a.split("id=")[1] for a in f[5:] if a.startswith("req=") and "id=" in a]
        if not rid:
            continue
        if f[2] == "client":
            start[rid[0]] = ns(f[0])
        elif f[2] == "nginx":
            fwd[rid[0]] = ns(f[0])
    d = sorted((fwd[r] - start[r]) / 1e6 for r in fwd if r in start)
    if not d:
        print("%s: no forwarded request" % path)
        continue
    print("%s: %d requests forwarded; ms: median %.3f, 99th percentile %.3f, max %.3f"
          % (path, len(d), d[len(d) // 2], d[int(0.99 * (len(d) - 1))], d[-1]))

#!/usr/bin/python3
"""instances_check.py - checks bbnest --instances output against bbnest --json of the same run.

usage: instances_check.py INSTANCES.jsonl PATTERNS.json
Checks: one line per instance of stats.instances; each call's fields and tree (parent
before child, delay = start - parent's start, inside the parent's span for a nested
call); the instance count and the slowest instance's latency of each pattern equal
the pattern's count and root latency max (p100) in the JSON. Prints a summary; exit 1
on the first failure."""
import json
import sys


def shape(node):
    """The pattern text bbnest uses: name(child child ...)."""
    kids = node.get("children") or []
    if not kids:
        return node["name"]
    return node["name"] + "(" + " ".join(shape(k) for k in kids) + ")"


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main():
    inst_path, json_path = sys.argv[1], sys.argv[2]
    doc = json.load(open(json_path))
    want = doc["stats"]["instances"]
    pats = {}
    for p in doc["patterns"]:
        pats[shape(p["root"])] = p
    lines = 0
    count, slowest = {}, {}
    seqs = set()
    for raw in open(inst_path, encoding="utf-8"):
        lines += 1
        i = json.loads(raw)
        for k in ("seq", "start_ns", "latency_ns", "pattern", "shape", "trace_id", "calls"):
            if k not in i:
                fail("line %d: no %s" % (lines, k))
        if i["seq"] in seqs:
            fail("line %d: seq %d twice" % (lines, i["seq"]))
        seqs.add(i["seq"])
        calls = i["calls"]
        root = calls[0]
        if root["parent"] != -1 or root["delay_ns"] != 0:
            fail("line %d: the first call is not the root" % lines)
        if root["start_ns"] != i["start_ns"] or root["end_ns"] - root["start_ns"] != i["latency_ns"]:
            fail("line %d: start/latency are not the root call's" % lines)
        for k, c in enumerate(calls):
            for f in ("caller", "callee", "start_ns", "end_ns", "delay_ns", "proto", "req",
                      "parent", "ambiguous"):
                if f not in c:
                    fail("line %d call %d: no %s" % (lines, k, f))
            if not isinstance(c["ambiguous"], bool):
                fail("line %d call %d: ambiguous is not a boolean" % (lines, k))
            if k == 0:
                continue
            p = c["parent"]
            if not 0 <= p < k:
                fail("line %d call %d: parent %d not before it" % (lines, k, p))
            par = calls[p]
            if par["callee"] != c["caller"]:
                fail("line %d call %d: caller %s is not its parent's callee %s"
                     % (lines, k, c["caller"], par["callee"]))
            if c["delay_ns"] != c["start_ns"] - par["start_ns"]:
                fail("line %d call %d: delay_ns is not start - parent's start" % (lines, k))
        s = i["shape"]
        count[s] = count.get(s, 0) + 1
        if s not in slowest or i["latency_ns"] > slowest[s]["latency_ns"]:
            slowest[s] = i
    if lines != want:
        fail("%d lines, stats.instances %d" % (lines, want))
    if sorted(seqs) != list(range(lines)):
        fail("seq is not 0..%d" % (lines - 1))
    checked = 0
    for s, p in pats.items():
        if count.get(s) != p["count"]:
            fail("pattern %s: %s instances, JSON count %d" % (s, count.get(s), p["count"]))
        mx = p["root"]["latency_ns"]["max"]
        if slowest[s]["latency_ns"] != mx:
            fail("pattern %s: slowest instance %d ns, p100 %d ns"
                 % (s, slowest[s]["latency_ns"], mx))
        checked += 1
    top = max(slowest.values(), key=lambda i: i["latency_ns"])
    print("instances_check: %d instances = stats.instances; %d patterns: counts and slowest "
          "= p100 match; slowest of all %.3f ms (%s)"
          % (lines, checked, top["latency_ns"] / 1e6, top["shape"]))


main()

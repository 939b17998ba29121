#!/usr/bin/python3
# bbconv_spurious.py - bbconv's delays against a maketrace trace's truth.
# usage: bbconv_spurious.py TRACE CONV.json [--bound SECONDS]
# True edges are the triples (i, j, k) of consecutive messages i->j, j->k of
# one path= instance, with the largest true delay seen on each. An inferred
# edge x_j -> x_k under x_i -> x_j is the triple (i, j, k). Prints, on one
# line: the inferred triples, those absent from the truth, the delays (every
# delay of every edge) absent from the truth above the bound (default: the
# largest true delay of the whole trace), the delays on true triples later
# than that triple's largest true delay (plus one quantum), the longest
# delay inferred, the roots and how they were chosen. Exit 0.
import json, sys, collections

def ns(s):
    a, _, b = s.partition(".")
    return int(a) * 10**9 + int((b + "000000000")[:9])

def main():
    tr, cj = sys.argv[1], sys.argv[2]
    bound = None
    if "--bound" in sys.argv:
        bound = int(float(sys.argv[sys.argv.index("--bound") + 1]) * 1e9)
    inst = collections.defaultdict(list)
    for line in open(tr):
        if line.startswith("#"):
            continue
        f = line.rstrip("\n").split("\t")
        path = [a[5:] for a in f[5:] if a.startswith("path=")]
        if path:
            inst[path[0]].append((ns(f[0]), f[2], f[3]))
    true = {}
    for msgs in inst.values():
        msgs.sort()
        for a, b in zip(msgs, msgs[1:]):
            if a[2] == b[1]:
                t = (a[1], a[2], b[2])
                true[t] = max(true.get(t, 0), b[0] - a[0])
    top = max(true.values()) if true else 0
    if bound is None:
        bound = top
    d = json.load(open(cj))
    mu = d["params"]["quantum_ns"]
    node = {v["id"]: v["node"] for v in d["vertices"]}
    parent = {e["to"]: e["from"] for e in d["edges"]}
    triples = absent = long_absent = late = 0
    longest = 0
    for e in d["edges"]:
        if e["from"] not in parent:
            continue  # a root's own edge has no delay
        t = (node[parent[e["from"]]], node[e["from"]], node[e["to"]])
        triples += 1
        absent += t not in true
        for x in e["delays"]:
            longest = max(longest, x["delay_ns"])
            if t not in true:
                long_absent += x["delay_ns"] > bound
            else:
                late += x["delay_ns"] > true[t] + mu
    print("triples %d absent %d; delays above %.3f s absent from the truth %d; "
          "delays past their triple's longest true delay %d; longest delay %.3f s "
          "(true %.3f s); roots %s (%s)" % (
              triples, absent, bound / 1e9, long_absent, late, longest / 1e9, top / 1e9,
              ",".join(d["params"]["roots"]), d["params"].get("root_rule", "-")))

main()

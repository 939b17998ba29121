#!/usr/bin/python3
# score.py - the rig's ground truth, built from the services' own logs, and the
# scores of bbnest and bbconv against it.
#
#   score.py truth CLIENT_LOG SERVICE_LOG...          true patterns, as text
#   score.py nest CLIENT_LOG BBNEST_JSON SERVICE_LOG... [--top 5] [--tol 0.05]
#   score.py delay NORMAL_JSON DELAY_JSON CLIENT_LOG SERVICE_LOG... --type T
#                  --via NODE --node NODE --ms MS [--tol 0.10] [--other MS]
#                  [--paths NORMAL_PATH_TR,DELAY_PATH_TR,NORMAL_CLIENT_LOG]
#                  (--paths, --conn-log logs: a first-tier node's change is
#                  measured beyond the true one, from the joined traces)
#   score.py conv NORMAL_CONV_JSON DELAY_CONV_JSON --from NODE --to NODE --ms MS
#   score.py join TRACE HOSTS CLIENT_LOG SERVICE_LOG...   the trace with path=
#                  on every record whose call the logs hold (--conn-log logs)
#
# The logs are bbapp's, of either form (bbapp.c): per request id (the first
# app), or --conn-log (the second app: no id on the wire). The form is told by
# the client log's first line.
#
# A log line (bbapp) is: ID NODE TYPE T0_NS T1_NS CALLS, CALLS being
# "NAME@T0@T1" items in the order they were sent, or "-", or "ERR". The true
# tree of request ID is client -> nginx -> (the app that logged ID) -> its
# calls, a call to "auth" having the calls auth logged for ID as children;
# requests no app logged (type static) end at nginx. Trees are compared with
# bbnest's patterns by their canonical text: NAME(CHILD,CHILD,...), children
# in call order, as bbnest orders them.
#
# The measures are those of bbnest --truth (docs/nesting.md, "Ground truth"):
# pattern false positives/negatives, and instance false positives
# sum(max(0, inferred - true)) and negatives sum(max(0, true - inferred)) over
# all patterns. Exit status: 0 when the checks named hold, 1 otherwise.
import json
import sys
from collections import Counter


def log_lines(paths, nfields, what):
    """The tab-separated fields of every line of bbapp logs, the last one
    (CALLS) parsed: None for ERR, [] for "-", else the "@"-separated items,
    their names kept and the rest made integers (ip:port ends stay text)."""
    for path in paths:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                parts = line.rstrip("\n").split("\t")
                if len(parts) != nfields:
                    sys.exit("score.py: error: %s:%d: not a %s line" % (path, n, what))
                calls = parts[-1]
                items = None if calls == "ERR" else []
                if calls not in ("ERR", "-"):
                    for c in calls.split(" "):
                        f_ = c.split("@")
                        items.append(tuple(v if ":" in v or i == 0 else int(v)
                                           for i, v in enumerate(f_)))
                yield parts[:-1] + [items]


def read_logs(paths):
    """{id: {node: (type, t0, t1, [(name, t0, t1), ...] or None)}}"""
    by_id = {}
    for rid, node, typ, t0, t1, items in log_lines(paths, 6, "bbapp log"):
        by_id.setdefault(rid, {})[node] = (typ, int(t0), int(t1), items)
    return by_id


def true_trees(client_log, service_logs):
    """Counter of canonical trees, the number of failed requests, and per
    tree the requests' (type, app)."""
    clients = read_logs([client_log])
    services = read_logs(service_logs)
    trees = Counter()
    failed = 0
    kinds = {}
    for rid, rec in clients.items():
        typ, t0, t1, items = rec["client"]
        if items is None:
            failed += 1
            continue
        logged = services.get(rid, {})
        apps = [n for n in logged if n != "auth"]
        if not apps:
            tree = "client(nginx)"
            app = None
        else:
            app = apps[0]
            _, _, _, calls = logged[app]
            if calls is None:
                failed += 1
                continue
            kids = []
            for name, _, _ in calls:
                if name == "auth":
                    sub = logged.get("auth")
                    if sub is None or sub[3] is None:
                        failed += 1
                        break
                    kids.append("auth" + paren([c[0] for c in sub[3]]))
                else:
                    kids.append(name)
            else:
                tree = "client(nginx(%s%s))" % (app, paren(kids))
                trees[tree] += 1
                kinds[tree] = (typ, app)
                continue
            continue
        trees[tree] += 1
        kinds[tree] = (typ, app)
    return trees, failed, kinds


def truth_of(first, rest):
    """The true trees of a run: from bbapp's per-request logs (CLIENT_LOG
    SERVICE_LOG...), or from its --conn-log logs."""
    with open(first) as f:
        line = f.readline()
    if line.startswith("client\t"):
        return conn_truth(first, rest)
    return true_trees(first, rest)


def read_conn_logs(paths):
    """--conn-log lines: [(node, local, peer, order, type, t0, t1, calls)],
    calls None (ERR) or [(backend, local, remote, order, t0, t1), ...]."""
    return [(node, local, peer, int(order), typ, int(t0), int(t1), items)
            for node, local, peer, order, typ, t0, t1, items
            in log_lines(paths, 8, "bbapp --conn-log")]


def conn_requests(client_log, service_logs):
    """The client's requests [(client line, served or None)] and the
    services' requests by (client end, server end, order on the connection):
    a call and the request it made are the same key seen from both ends."""
    clients = read_conn_logs([client_log])
    # only the services' requests of this run (logs may hold several runs,
    # whose connections could reuse a port)
    lo = min((r[5] for r in clients), default=0) - 10**9
    hi = max((r[6] for r in clients), default=0) + 10**9
    served = {}
    for r in read_conn_logs(service_logs):
        if lo <= r[5] <= hi:
            served[(r[2], r[1], r[3])] = r
    return [(r, served.get((r[1], r[2], r[3]))) for r in clients], served


def conn_subtree(req, served):
    """NAME(CHILD,...) of a served request, None when a call failed."""
    if req[7] is None:
        return None
    kids = []
    for b, cl, cr, co, _, _ in req[7]:
        sub = served.get((cl, cr, co))
        if sub is None:
            kids.append(b)
            continue
        k = conn_subtree(sub, served)
        if k is None:
            return None
        kids.append(k)
    return req[0] + paren(kids)


def conn_truth(client_log, service_logs):
    reqs, served = conn_requests(client_log, service_logs)
    trees = Counter()
    kinds = {}
    failed = 0
    for c, srv in reqs:
        if c[7] is None or srv is None:
            failed += 1
            continue
        sub = conn_subtree(srv, served)
        if sub is None:
            failed += 1
            continue
        tree = "client(%s)" % sub
        trees[tree] += 1
        kinds[tree] = (c[4], srv[0])
    return trees, failed, kinds


def paren(kids):
    return "(" + ",".join(kids) + ")" if kids else ""


def canon(node):
    return node["name"] + paren([canon(c) for c in node["children"]])


def inferred(json_path):
    with open(json_path) as f:
        d = json.load(f)
    pats = Counter()
    nodes = {}
    ivals = {}
    for p in d["patterns"]:
        key = canon(p["root"])
        pats[key] += p["count"]
        nodes[key] = p["root"]
        lo, hi = p.get("count_interval", [p["count"], p["count"]])
        plo, phi = ivals.get(key, (0, 0))
        ivals[key] = (plo + lo, phi + hi)
    d["_intervals"] = ivals
    return pats, nodes, d


def top(counter, n):
    return [k for k, _ in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]


def opt(args, name, default=None, conv=str):
    if name in args:
        i = args.index(name)
        v = args[i + 1]
        del args[i:i + 2]
        return conv(v)
    return default


def cmd_truth(args):
    trees, failed, kinds = truth_of(args[0], args[1:])
    total = sum(trees.values())
    print("%d requests, %d failed, %d true patterns" % (total, failed, len(trees)))
    for k in top(trees, len(trees)):
        print("%6d  %-7s %-5s %s" % (trees[k], kinds[k][0], kinds[k][1] or "-", k))
    return 0


def cmd_nest(args):
    n = opt(args, "--top", 5, int)
    tol = opt(args, "--tol", 0.05, float)
    label = opt(args, "--label", "")
    max_wrong = opt(args, "--max-wrong", None, float)
    brief = "--brief" in args
    if brief:
        args.remove("--brief")
    trees, failed, kinds = truth_of(args[0], args[2:])
    pats, _, d = inferred(args[1])
    keys = set(trees) | set(pats)
    ifp = sum(max(0, pats[k] - trees[k]) for k in keys)
    ifn = sum(max(0, trees[k] - pats[k]) for k in keys)
    pfp = sum(1 for k in pats if k not in trees)
    pfn = sum(1 for k in trees if k not in pats)
    total = sum(trees.values())
    ok = True
    if brief:
        return nest_brief(label, trees, pats, failed, ifn, total, n, tol, max_wrong)
    print("%s%d true instances (%d requests failed), %d inferred; patterns: %d true, %d inferred,"
          " %d false positive, %d false negative; instances: %d false positive (%.2f%%),"
          " %d false negative (%.2f%%)"
          % (label, total, failed, sum(pats.values()), len(trees), len(pats), pfp, pfn,
             ifp, 100.0 * ifp / max(total, 1), ifn, 100.0 * ifn / max(total, 1)))
    tt, ti = top(trees, n), top(pats, n)
    for i, k in enumerate(tt):
        dev = (pats[k] - trees[k]) / trees[k]
        mark = "ok"
        if abs(dev) > tol:
            mark = "FAIL: count off by more than %.0f%%" % (100 * tol)
            ok = False
        if k not in ti:
            mark = "FAIL: not in the inferred top %d" % n
            ok = False
        lo, hi = d["_intervals"].get(k, (0, 0))
        inside = "inside" if lo <= trees[k] <= hi else "OUTSIDE"
        print("  true #%d %-7s %-5s true %5d inferred %5d (%+.1f%%) [%d-%d] %s %s  %s"
              % (i + 1, kinds[k][0], kinds[k][1] or "-", trees[k], pats[k], 100 * dev, lo, hi,
                 inside, mark, k))
    for k in ti:
        if k in tt:
            continue
        if k in trees or invented_fails(trees, tt, pats[k], tol):
            print("  FAIL: inferred top-%d pattern not in the true top %d: %d %s"
                  % (n, n, pats[k], k))
            ok = False
        else:
            print("  invented, under %.0f%% of true #%d's count: %d %s"
                  % (100 * tol, len(tt), pats[k], k))
    if failed:
        print("  FAIL: %d requests failed" % failed)
        ok = False
    return 0 if ok else 1


def invented(trees, pats, tt, ti, tol):
    """The inferred top-n patterns that are no true pattern: how many, the
    largest count, and how many of them count against the check: those with
    at least tol times the count of the least of the true top n (a pattern
    that would stand beside a true one). With fewer true patterns than n
    (the second app has 3), the inferred top n also holds the largest of the
    invented ones, often of one or two instances: the paper's metric (the
    true top-n patterns found, section 7.1) does not count those, and they
    are shown here rather than hidden."""
    inv = [pats[k] for k in ti if k not in trees]
    bad = [c for c in inv if invented_fails(trees, tt, c, tol)]
    return len(inv), max(inv, default=0), len(bad)


def invented_fails(trees, tt, count, tol):
    """Whether an invented pattern of count instances in the inferred top n
    counts against the check (invented())."""
    return count >= tol * min((trees[k] for k in tt), default=0)


def nest_brief(label, trees, pats, failed, ifn, total, n, tol, max_wrong):
    """One line: the share of true instances not inferred (bbnest --truth's
    instance false negatives / true instances), the worst top-n count error,
    and whether the checks hold (the top-n patterns each within tol, and the
    share at most max_wrong when given). Exit status 1 when they do not, 2
    when the run itself is bad (requests failed, or fewer or more instances
    inferred than requests made: not all captured)."""
    tt, ti = top(trees, n), top(pats, n)
    worst = 0.0
    misses = 0
    for k in tt:
        dev = (pats[k] - trees[k]) / trees[k]
        if abs(dev) > abs(worst):
            worst = dev
        if k not in ti:
            misses += 1
    inv, inv_max, inv_bad = invented(trees, pats, tt, ti, tol)
    wrong = ifn / max(total, 1)
    ok = misses == 0 and abs(worst) <= tol and not inv_bad
    if max_wrong is not None and wrong > max_wrong:
        ok = False
    rig = ""
    if failed or sum(pats.values()) != total:
        rig = " (%d requests failed, %d instances inferred)" % (failed, sum(pats.values()))
    print("%s%5.1f%% (%d/%d) | %+.1f%%, %d missed, %d invented (largest %d) | %s%s"
          % (label, 100 * wrong, ifn, total, 100 * worst, misses, inv, inv_max,
             "met" if ok else "NOT MET", rig))
    return 2 if rig else 0 if ok else 1


def walk(node, path=None):
    """(path of names from the root, node) for every node of a pattern; a
    child is named NAME#K, K its rank among its same-name siblings."""
    if path is None:
        path = (node["name"],)
    yield path, node
    seen = Counter()
    for c in node["children"]:
        seen[c["name"]] += 1
        yield from walk(c, path + ("%s#%d" % (c["name"], seen[c["name"]]),))


def true_delays(path_tr, client_log, service_logs):
    """The true call delays (ms) of the first tier's calls, from a trace with
    path= (score.py join) and the --conn-log logs: {(true pattern, node path
    as walk() names it): [delay, ...]}, a delay being the time from the
    client's call to the call the first tier made, both as the trace saw
    them (what bbnest measures). Deeper calls are left out: two parallel
    calls of one request to the same tier cannot be told apart by path=."""
    reqs, served = conn_requests(client_log, service_logs)
    key_of = {}
    for i, (c, srv) in enumerate(reqs):
        sub = conn_subtree(srv, served) if c[7] is not None and srv is not None else None
        if sub is not None:
            key_of[i + 1] = "client(%s)" % sub
    root, kids = {}, {}
    with open(path_tr) as f:
        for line in f:
            if line.startswith("#"):
                continue
            p = line.rstrip("\n").split("\t")
            if len(p) < 5 or p[1] != "CALL":
                continue
            pid = next((int(a[5:]) for a in p[5:] if a.startswith("path=")), None)
            if pid not in key_of:
                continue
            a, b = p[0].split(".")
            t = int(a) * 10**9 + int(b.ljust(9, "0"))
            if p[2] == "client":
                root[pid] = (t, p[3])
            else:
                kids.setdefault(pid, []).append((t, p[2], p[3]))
    out = {}
    for pid, (t0, tier) in root.items():
        seen = Counter()
        for t, caller, callee in sorted(kids.get(pid, [])):
            if caller != tier:
                continue
            seen[callee] += 1
            path = ("client", "%s#1" % tier, "%s#%d" % (callee, seen[callee]))
            out.setdefault((key_of[pid], path), []).append((t - t0) / 1e6)
    return out


def median(v):
    v = sorted(v)
    n = len(v)
    return (v[n // 2] + v[(n - 1) // 2]) / 2


def cmd_delay(args):
    paths = opt(args, "--paths")  # NORMAL_PATH_TR,DELAY_PATH_TR,NORMAL_CLIENT_LOG
    typ = opt(args, "--type")
    via = opt(args, "--via")
    target = opt(args, "--node")
    ms = opt(args, "--ms", 50.0, float)
    tol = opt(args, "--tol", 0.10, float)
    floor_ms = opt(args, "--other", 0.10 * ms, float)
    min_count = opt(args, "--min-count", 20, int)
    p0, nodes0, _ = inferred(args[0])
    p1, nodes1, _ = inferred(args[1])
    trees, _, kinds = truth_of(args[2], args[3:])
    # the system's own change of a first-tier call's delay, where the truth
    # gives it: a node whose true median moved (a bimodal delay, a call made
    # after parallel calls whose latency moved with the load) may move as much
    # in bbnest's answer
    moved = {}
    if paths:
        p0tr, p1tr, log0 = paths.split(",")
        d0 = true_delays(p0tr, log0, args[3:])
        d1 = true_delays(p1tr, args[2], args[3:])
        for k in set(d0) & set(d1):
            if len(d0[k]) >= min_count and len(d1[k]) >= min_count:
                moved[k] = median(d1[k]) - median(d0[k])
    # the pattern of the delayed requests, by the truth
    want = [k for k in trees if kinds[k] == (typ, via)]
    if len(want) != 1:
        print("FAIL: %d true patterns for %s via %s" % (len(want), typ, via))
        return 1
    want = want[0]
    ok = True
    hits = []
    worst = (0.0, None)
    # the nodes of the true patterns inferred at least min_count times in both
    # runs (the mean of a handful of instances is that of a few pairings)
    for key in sorted(set(nodes0) & set(nodes1) & set(trees)):
        if key != want and (p0[key] < min_count or p1[key] < min_count):
            continue
        a = dict(walk(nodes0[key]))
        b = dict(walk(nodes1[key]))
        for path in sorted(set(a) & set(b)):
            na, nb = a[path], b[path]
            if na["call_delay_ns"]["n"] == 0 or nb["call_delay_ns"]["n"] == 0:
                continue
            dd = (nb["call_delay_ns"]["mean"] - na["call_delay_ns"]["mean"]) / 1e6
            name = path[-1].split("#")[0]
            if key == want and name == target:
                hits.append((dd, path, na["call_delay_ns"]["mean"] / 1e6,
                             nb["call_delay_ns"]["mean"] / 1e6, na["call_delay_ns"]["n"],
                             nb["call_delay_ns"]["n"]))
            else:
                # medians: a few misassigned calls (ms or s away) move a mean
                # of 20-odd instances by ms, not its median
                dm = (nb["call_delay_ns"]["p50"] - na["call_delay_ns"]["p50"]) / 1e6
                tm = moved.get((key, path))
                if tm is not None:
                    dm -= tm
                if abs(dm) > abs(worst[0]):
                    worst = (dm, "%s in %s, mean %+.2f ms%s" % (
                        "/".join(path), key, dd,
                        "" if tm is None else ", true median %+.2f ms" % tm))
    if len(hits) != 1:
        print("FAIL: node %s of the pattern %s found %d times in both runs" % (target, want,
                                                                               len(hits)))
        return 1
    dd, path, m0, m1, n0, n1 = hits[0]
    good = abs(dd - ms) <= tol * ms
    tm = moved.get((want, path))
    print("call delay of %s in %s: %.2f ms (%d instances) -> %.2f ms (%d): %+.2f ms%s, want %+.0f"
          " within %.0f%%: %s" % (target, want, m0, n0, m1, n1, dd,
                                   "" if tm is None else " (true median %+.2f ms)" % tm, ms,
                                   100 * tol, "ok" if good else "FAIL"))
    ok = ok and good
    small = abs(worst[0]) < floor_ms
    print("largest change of any other node's median call delay%s, in every true pattern"
          " inferred %d+ times in both runs: %+.2f ms (%s), limit %.1f ms: %s"
          % (" beyond the true median's (%d first-tier nodes)" % len(moved) if paths else "",
             min_count, worst[0], worst[1], floor_ms, "ok" if small else "FAIL"))
    return 0 if ok and small else 1


def cmd_conv(args):
    src = opt(args, "--from")
    dst = opt(args, "--to")
    ms = opt(args, "--ms", 50.0, float)
    tol = opt(args, "--tol", 0.10, float)
    res = []
    for path in args[:2]:
        with open(path) as f:
            d = json.load(f)
        names = {v["id"]: v["node"] for v in d["vertices"]}
        found = []
        for e in d["edges"]:
            for dl in e["delays"]:
                if abs(dl["delay_ns"] / 1e6 - ms) <= tol * ms:
                    found.append((names[e["from"]], names[e["to"]], dl["delay_ns"] / 1e6,
                                  dl["count"]))
        res.append(found)
    normal, delayed = res
    right = [f for f in delayed if f[0] == src and f[1] == dst]
    wrong = [f for f in delayed if not (f[0] == src and f[1] == dst)]
    print("bbconv, edges with a delay of %.0f ms +-%.0f%%: normal run %d, added-delay run %d"
          " (%s)" % (ms, 100 * tol, len(normal), len(delayed),
                     ", ".join("%s->%s %.1f ms x%d" % f for f in delayed) or "none"))
    ok = bool(right) and not wrong and not normal
    print("bbconv puts it on %s -> %s: %s" % (src, dst, "ok" if ok else "FAIL"))
    return 0 if ok else 1


def cmd_join(args):
    """Every CALL and RET of the trace gets path=N, N the client request it
    belongs to by the logs (the N-th line of the client log). The calls seen
    on a trace connection (its id's cN) are consecutive calls of one logged
    connection between the same two nodes (the capture loses none): the
    j-th is the logged call of order K + j. The connection and K are those
    whose logged send and receive times (t0, t1) are nearest the times the
    calls and their returns were seen (each seen within [-1, +200] ms of
    them, the sum of the distances the least), each logged connection
    joined to one trace connection at most. A call whose sender was
    descheduled between taking its time and sending (tens of ms on a loaded
    machine) still gets its path. A call left without one, or a path whose
    calls in the trace (caller, callee pairs) are not those of its logged
    tree, makes the exit status 1."""
    import bisect
    trace, hosts, client_log, service_logs = args[0], args[1], args[2], args[3:]
    name_of = {}
    with open(hosts) as f:
        for line in f:
            p = line.split()
            if len(p) >= 2:
                name_of[p[0]] = p[1]
    reqs, served = conn_requests(client_log, service_logs)
    # every logged call: (caller end, callee end) -> {order: (t0, t1, path)}
    calls = {}
    want = {}  # path -> Counter of its (caller, callee) calls, by the logs

    def walk_calls(req, pid):
        for b, cl, cr, co, c0, c1 in req[7] or []:
            calls.setdefault((cl, cr), {})[co] = (c0, c1, pid)
            want[pid][(req[0], b)] += 1
            sub = served.get((cl, cr, co))
            if sub is not None:
                walk_calls(sub, pid)

    for i, (c, srv) in enumerate(reqs):
        calls.setdefault((c[1], c[2]), {})[c[3]] = (c[5], c[6], i + 1)
        want[i + 1] = Counter()
        if srv is not None:
            want[i + 1][("client", srv[0])] += 1
            walk_calls(srv, i + 1)
    by_pair, starts = {}, {}
    for (cl, cr), v in calls.items():
        starts[(cl, cr)] = sorted((x[0], o) for o, x in v.items())
        pair = (name_of.get(cl.rsplit(":", 1)[0]), name_of.get(cr.rsplit(":", 1)[0]))
        by_pair.setdefault(pair, []).append((cl, cr))
    lines = []
    conns = {}  # (src, dst, cN) -> [[call time, return time, line index]]
    ret_of = {}  # (src, dst, id) of the call -> its return time
    with open(trace) as f:
        for line in f:
            line = line.rstrip("\n")
            lines.append(line)
            if line.startswith("#") or not line.strip():
                continue
            p = line.split("\t")
            a, b = p[0].split(".")
            t = int(a) * 10**9 + int(b.ljust(9, "0"))
            if p[1] == "CALL":
                conns.setdefault((p[2], p[3], p[4].split(".")[0]), []).append(
                    [t, None, len(lines) - 1])
            elif p[1] == "RET":
                ret_of[(p[3], p[2], p[4])] = t
    for key, tcalls in conns.items():
        for c in tcalls:
            c[1] = ret_of.get((key[0], key[1], lines[c[2]].split("\t")[4]))
    lo, hi = -10**6, 200 * 10**6

    def fit(tcalls, tup, k):
        """(calls placed, sum of time distances) with call j = order k + j"""
        v = calls[tup]
        n = err = 0
        for j, (t, r, _) in enumerate(tcalls):
            x = v.get(k + j)
            if x is None or not lo <= t - x[0] <= hi or \
                    (r is not None and not lo <= x[1] - r <= hi):
                continue
            n += 1
            err += abs(t - x[0]) + (abs(x[1] - r) if r is not None else 0)
        return n, err

    scored = []
    for key, tcalls in conns.items():
        for tup in by_pair.get((key[0], key[1]), []):
            st = starts[tup]
            ks = set()
            for j, (t, _, _) in enumerate(tcalls[:3]):
                i = bisect.bisect_left(st, (t - hi, -1))
                while i < len(st) and st[i][0] <= t - lo:
                    ks.add(st[i][1] - j)
                    i += 1
            for k in ks:
                n, err = fit(tcalls, tup, k)
                if n:
                    scored.append((-n, err, key, tup, k))
    scored.sort()
    taken, mapped = set(), {}
    for _, _, key, tup, k in scored:
        if key in mapped or tup in taken:
            continue
        mapped[key] = (tup, k)
        taken.add(tup)
    path_of_id = {}
    have = {}
    n_calls = n_path = 0
    for key, tcalls in conns.items():
        n_calls += len(tcalls)
        if key not in mapped:
            continue
        tup, k = mapped[key]
        for j, (t, r, li) in enumerate(tcalls):
            x = calls[tup].get(k + j)
            if x is not None and lo <= t - x[0] <= hi:
                n_path += 1
                path_of_id[(key[0], key[1], lines[li].split("\t")[4])] = x[2]
                have.setdefault(x[2], Counter())[(key[0], key[1])] += 1
    out = sys.stdout
    for line in lines:
        if line.startswith("#") or not line.strip():
            out.write(line + "\n")
            continue
        p = line.split("\t")
        k = (p[2], p[3], p[4]) if p[1] == "CALL" else (p[3], p[2], p[4])
        pid = path_of_id.get(k)
        out.write(line + ("\tpath=%d" % pid if pid is not None else "") + "\n")
    logged = sum(len(v) for v in calls.values())
    bad = sum(1 for k in want if want[k] != have.get(k, Counter()))
    sys.stderr.write("join: %d of %d calls in the trace have a true path (%d logged calls, %d"
                     " client requests, %d connections joined); %d paths whose calls in the"
                     " trace are not their logged tree's\n"
                     % (n_path, n_calls, logged, len(reqs), len(mapped), bad))
    return 0 if n_path == n_calls and bad == 0 else 1


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__ if __doc__ else "usage: score.py truth|nest|delay|conv ...")
    cmd, args = sys.argv[1], sys.argv[2:]
    f = {"truth": cmd_truth, "nest": cmd_nest, "delay": cmd_delay, "conv": cmd_conv,
         "join": cmd_join}.get(cmd)
    if f is None:
        sys.exit("score.py: error: unknown command %s" % cmd)
    sys.exit(f(args))


if __name__ == "__main__":
    main()

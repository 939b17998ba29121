#!/usr/bin/python3
"""compare.py - the helper of compare.sh: CPU time of commands, and the final table.

  compare.py cpu REPS IN OUT CMD...   run CMD REPS times (stdin from IN, stdout to OUT,
                                      stderr to OUT.err when OUT is a file, else dropped);
                                      print the user + system seconds of all the runs
                                      (wait4, microseconds: finer than time(1)'s 0.01 s)
  compare.py ab K IN OUT BIN_A BIN_B PROG ARGS...
                                      run BIN_A/PROG and BIN_B/PROG alternately, K times
                                      each (A B B A A B ...: neither always second); print
                                      "a SECONDS" or "b SECONDS" for every run
  compare.py table RECORDS [LIMIT]    RECORDS: lines "bench<TAB>figure<TAB>a|b<TAB>value
                                      <TAB>unit"; print one row per figure: the medians
                                      of both sides and the change, flagged "WORSE" when
                                      NEW is worse than BASE by more than LIMIT % (5),
                                      and the change of the best (least) values
Exit 1 when a command fails (its stderr is shown).
"""
import os
import statistics
import subprocess
import sys


def run1(inp, out, cmd):
    """Runs cmd once; returns its user + system seconds, or None when it fails."""
    err = out + ".err" if out != "/dev/null" else "/dev/null"
    with open(inp, "rb") as i, open(out, "wb") as o, open(err, "wb") as e:
        p = subprocess.Popen(cmd, stdin=i, stdout=o, stderr=e)
        _, status, ru = os.wait4(p.pid, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        sys.stderr.write("compare.py: error: %s: failed (status %d)\n" % (" ".join(cmd), status))
        if err != "/dev/null":
            with open(err, "rb") as e:
                sys.stderr.write(e.read().decode(errors="replace")[-2000:])
        return None
    return ru.ru_utime + ru.ru_stime


def cpu(reps, inp, out, cmd):
    total = 0.0
    for _ in range(reps):
        t = run1(inp, out, cmd)
        if t is None:
            return 1
        total += t
    print("%.6f" % total)
    return 0


def ab(k, inp, out, bin_a, bin_b, cmd):
    for i in range(2 * k):
        side = "ab"[(i + i // 2) % 2]  # a b b a a b b a ...
        t = run1(inp, out, [os.path.join(bin_a if side == "a" else bin_b, cmd[0])] + cmd[1:])
        if t is None:
            return 1
        print("%s %.6f" % (side, t))
        sys.stdout.flush()
    return 0


def table(path, limit):
    vals = {}
    order = []
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) != 5:
            continue
        key = (f[0], f[1], f[4])
        if key not in vals:
            vals[key] = {"a": [], "b": []}
            order.append(key)
        vals[key][f[2]].append(float(f[3]))
    rows = [("benchmark", "figure", "base", "new", "change", "", "best", "n")]
    worse = 0
    for key in order:
        a, b = vals[key]["a"], vals[key]["b"]
        if not a or not b:
            continue
        ma, mb = statistics.median(a), statistics.median(b)
        unit = key[2]
        chg = (mb - ma) / ma * 100 if ma else 0.0
        best = (min(b) - min(a)) / min(a) * 100 if min(a) else 0.0
        # every unit is a time (lower is better) except rates, marked "/s"
        bad = -chg if unit.endswith("/s") else chg
        flag = "WORSE" if bad > limit else ""
        worse += flag != ""
        fmt = "%.0f" if ma >= 1000 else "%.3f"
        rows.append((key[0], "%s (%s)" % (key[1], unit), fmt % ma, fmt % mb, "%+.1f%%" % chg, flag,
                     "%+.1f%%" % best, "%d/%d" % (len(a), len(b))))
    w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for i, r in enumerate(rows):
        print("%-*s  %-*s  %*s  %*s  %*s  %-5s  %*s  %s" % (w[0], r[0], w[1], r[1], w[2], r[2], w[3],
                                                          r[3], w[4], r[4], r[5], w[6], r[6], r[7]))
        if i == 0:
            print("-" * (sum(w) + 18))
    print("%d figure(s) worse by more than %g%%" % (worse, limit))
    return 0


def main(argv):
    if len(argv) >= 6 and argv[1] == "cpu":
        return cpu(int(argv[2]), argv[3], argv[4], argv[5:])
    if len(argv) >= 8 and argv[1] == "ab":
        return ab(int(argv[2]), argv[3], argv[4], argv[5], argv[6], argv[7:])
    if len(argv) in (3, 4) and argv[1] == "table":
        return table(argv[2], float(argv[3]) if len(argv) == 4 else 5.0)
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

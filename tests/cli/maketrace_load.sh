#!/bin/sh
# maketrace_load.sh - maketrace's production-like load features do what docs/maketrace.md
# says, checked on the traces with fixed seeds: Poisson arrivals (exponential gaps: mean
# 1/rate, variance mean^2), bursts (3-5 instances at one instant, each its own path),
# log-normal delays (mean, sd, median), repeat steps, worker pools (never more handlers
# than workers, handler starts lag behind arrivals, the summary counts the waits), and
# the same bytes on every run.
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
mt=$BB_BIN/maketrace
fail=0
no() { echo "FAIL: $*"; fail=1; }
# within FROM TO VALUE: FROM <= VALUE <= TO
within() { awk -v a="$1" -v b="$2" -v v="$3" 'BEGIN { exit !(v >= a && v <= b) }'; }

# Poisson arrivals: 5 a second for 2000 s; the call leaves at the arrival (delay 0)
cat >poisson.json <<'J'
{"seed": 3, "duration": 2000, "nodes": ["c", "s"],
 "tracelets": [{"name": "r", "node": "c", "rate": 5,
   "steps": [{"call": "s", "delay": [0, 0], "return": [0.001, 0]}]}]}
J
"$mt" -q poisson.json >poisson.tr || no "poisson: maketrace failed"
awk '$2 == "CALL" { if (n++) { d = $1 - p; s += d; q += d * d } p = $1 }
	END { m = s / (n - 1); printf "%d %.6f %.6f\n", n, m, q / (n - 1) - m * m }' poisson.tr >p.stat
read -r n mean var <p.stat
within 9500 10500 "$n" || no "poisson: $n arrivals in 2000 s at 5/s"
within 0.19 0.21 "$mean" || no "poisson: mean gap $mean, not 0.2 s"
# exponential: variance = mean^2 (a uniform or a fixed gap would be far from it)
cv2=$(awk -v m="$mean" -v v="$var" 'BEGIN { print v / (m * m) }')
within 0.9 1.1 "$cv2" || no "poisson: variance / mean^2 = $cv2, not 1"

# bursts of 3-5 instances at one instant, 2 bursts a second
cat >burst.json <<'J'
{"seed": 4, "duration": 1000, "nodes": ["c", "s"],
 "tracelets": [{"name": "page", "node": "c", "rate": 2, "burst": [3, 5],
   "steps": [{"call": "s", "delay": [0, 0], "return": [0.002, 0.0005]}]}]}
J
"$mt" -q burst.json >burst.tr || no "burst: maketrace failed"
awk '$2 == "CALL" { if ($1 != p && k) { print k; k = 0 } k++; p = $1 } END { print k }' \
	burst.tr | sort -n | uniq -c >b.sizes
awk '{ if ($2 < 3 || $2 > 5) bad = 1; n += $1; s += $1 * $2 } END { exit bad }' b.sizes ||
	no "burst: sizes outside 3-5: $(cat b.sizes)"
[ "$(wc -l <b.sizes)" -eq 3 ] || no "burst: not every size of 3-5 occurs: $(cat b.sizes)"
bm=$(awk '{ n += $1; s += $1 * $2 } END { print s / n }' b.sizes)
within 3.9 4.1 "$bm" || no "burst: mean size $bm, not 4"
# each instance of a burst is its own path
[ "$(awk '$2 == "CALL"' burst.tr | wc -l)" -eq "$(awk '$2 == "CALL" { print $6 }' burst.tr |
	sort -u | wc -l)" ] || no "burst: instances of a burst share a path"

# log-normal delays: the return comes a log-normal delay (mean 10 ms, sd 5 ms) after
# the call; its median is mean / sqrt(1 + cv^2) = 8.94 ms, where a Gaussian's is 10 ms
cat >logn.json <<'J'
{"seed": 5, "duration": 2000, "nodes": ["c", "s"],
 "tracelets": [{"name": "r", "node": "c", "think": {"exp": 0.1},
   "steps": [{"call": "s", "delay": [0, 0], "return": {"lognormal": [0.010, 0.005]}}]}]}
J
"$mt" -q logn.json >logn.tr || no "lognormal: maketrace failed"
awk '$2 == "CALL" { t[$5] = $1 } $2 == "RET" { print $1 - t[$5] }' logn.tr | sort -g >l.d
ln=$(wc -l <l.d)
awk '{ s += $1; q += $1 * $1; n++ } END { m = s / n; printf "%.6f %.6f\n", m, sqrt(q / n - m * m) }' \
	l.d >l.stat
read -r lmean lsd <l.stat
lmed=$(sed -n "$((ln / 2))p" l.d)
within 0.0097 0.0103 "$lmean" || no "lognormal: mean $lmean, not 0.010"
within 0.0047 0.0053 "$lsd" || no "lognormal: sd $lsd, not 0.005"
within 0.0087 0.0092 "$lmed" || no "lognormal: median $lmed, not 0.00894"

# a repeat step: s calls t 1 to 3 times in series, each count a third of the time
cat >repeat.json <<'J'
{"seed": 6, "duration": 300, "nodes": ["c", "s", "t"],
 "defaults": {"delay": [0.001, 0.0002], "return": [0.001, 0.0002]},
 "tracelets": [{"name": "r", "node": "c", "think": [0.05, 0.1],
   "steps": [{"call": "s", "steps": [{"repeat": [1, 3], "steps": [{"call": "t"}]}]}]}]}
J
"$mt" -q repeat.json >repeat.tr || no "repeat: maketrace failed"
awk '$2 == "CALL" && $4 == "t" { k[$6]++ } END { for (p in k) print k[p] }' repeat.tr |
	sort -n | uniq -c >r.counts
[ "$(awk '{ print $2 }' r.counts | tr '\n' ' ')" = "1 2 3 " ] || no "repeat: counts $(cat r.counts)"

# a worker pool: s has one worker; requests arrive at 40 a second in bursts of 2-3 and
# s's handler calls t after 1 ms, so calls into s queue
cat >pool.json <<'J'
{"seed": 7, "duration": 100, "nodes": ["c", "s", "t"], "workers": {"s": 1},
 "tracelets": [{"name": "r", "node": "c", "rate": 5, "burst": [2, 3],
   "steps": [{"call": "s", "delay": [0, 0], "return": [0.001, 0],
     "steps": [{"call": "t", "delay": [0.001, 0], "return": [0.002, 0]}]}]}]}
J
"$mt" -q -I pool.json >pool.tr 2>pool.sum || no "pool: maketrace failed"
grep -q '^maketrace: worker pools: [1-9][0-9]* of [0-9]* calls waited, mean wait [0-9.]* ms, longest [0-9.]* ms$' \
	pool.sum || no "pool: summary: $(cat pool.sum)"
# one worker: s's handlers never overlap, so its calls into t never do
mx=$(awk '$3 == "s" && $4 == "t" { o += ($2 == "CALL") ? 1 : 0 } $3 == "t" && $4 == "s" && $2 == "RET" { o-- }
	{ if (o > m) m = o } END { print m + 0 }' pool.tr)
[ "$mx" = 1 ] || no "pool: $mx calls s->t open at once with one worker"
# ... while the calls into s do overlap (they wait), and the handler starts lag
mc=$(awk '$3 == "c" && $4 == "s" { o += ($2 == "CALL") ? 1 : 0 } $3 == "s" && $4 == "c" && $2 == "RET" { o-- }
	{ if (o > m) m = o } END { print m + 0 }' pool.tr)
[ "$mc" -ge 2 ] || no "pool: calls into s never overlap ($mc)"
lag=$(awk '$2 == "CALL" && $3 == "c" { t[$6] = $1 } $2 == "CALL" && $3 == "s" { d = $1 - t[$6] - 0.001;
	if (d > 0.0005) n++ } END { print n + 0 }' pool.tr)
[ "$lag" -gt 0 ] || no "pool: no handler started later than its call's arrival"

# the same bytes on every run, and a prefix under a message limit
"$mt" -q pool.json | cmp -s - pool.tr || no "pool: a second run differs"
"$mt" -q -N 100 pool.json >pre.tr
grep -v '^#' pool.tr | head -n 100 >a
grep -v '^#' pre.tr | cmp -s - a || no "pool: a message limit is not a prefix"

# a load config of the repository runs and reports its mean open calls
"$mt" -q -I -d 2 "$BB_SRC/maketrace/configs/load/social-r260.json" >/dev/null 2>sum ||
	no "social-r260: maketrace failed"
grep -q '^maketrace: mean open calls [0-9.]* per internal node (8 nodes)$' sum ||
	no "social-r260: $(cat sum)"

# errors name the value
printf '{"nodes": ["a", "b"], "duration": 1, "tracelets": [{"name": "x", "node": "a",\n "burst": [3, 2], "steps": [{"call": "b", "delay": [0, 0], "return": [0, 0.1]}]}]}\n' >bad.json
"$mt" bad.json >/dev/null 2>err
[ "$(cat err)" = "maketrace: error: bad.json:2:15: tracelets[0].burst[1]: max 2 is below min 3" ] ||
	no "burst error: $(cat err)"
printf '{"nodes": ["a", "b"], "duration": 1, "workers": {"c": 2},\n "tracelets": [{"name": "x", "node": "a", "steps": [{"call": "b", "delay": [0.1, 0], "return": [0, 0]}]}]}\n' >bad.json
"$mt" bad.json >/dev/null 2>err
[ "$(cat err)" = 'maketrace: error: bad.json:1:55: workers.c: unknown node "c" (not in "nodes")' ] ||
	no "workers error: $(cat err)"
# an arrival rate far beyond what the instances' length allows stops, and says why
printf '{"nodes": ["a", "b"], "duration": 10, "tracelets": [{"name": "x", "node": "a",
 "rate": 1e9, "steps": [{"call": "b", "delay": [1, 0], "return": [0, 0]}]}]}
' >fast.json
"$mt" -N 200 fast.json >/dev/null 2>err
rc=$?
[ $rc -eq 1 ] || no "fast: exit $rc, not 1"
[ "$(cat err)" = 'maketrace: error: fast.json: tracelet "x" has more than 100000 instances in flight: its rate outruns its instances' ] ||
	no "fast: $(cat err)"
exit $fail

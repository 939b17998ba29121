#!/bin/sh
# bbnest_budget.sh - the refinement's budget on a real capture (tests/fixtures/rigcap2: the
# rig's second app at bursts, about 64 in flight, 22,430 messages) read with times alone
# (--no-content). There the flow's first assignment leaves nearly every parent's callee
# sequence rare, the search's bounds cut nothing, and the sequences it hashed took 15 s
# of the run. The sweeps now stop at NEST_REFINE_BUDGET sequences a child and say so:
# the JSON's global_refine_stopped and a note on standard error (about 5 s). With its
# content the same capture stays within the budget (docs/performance.md, "The
# refinement's budget").
. "$BB_SRC/tests/cli/rigfix.sh"
command -v jq >/dev/null 2>&1 || { echo "SKIP: needs jq"; exit 77; }
gzip -dc "$BB_SRC/tests/fixtures/rigcap2/burst-64.tr.gz" >burst-64.tr || exit 1
"$BB_BIN/bbnest" --json --no-bins --no-content burst-64.tr >nc.json 2>nc.err ||
	{ echo "FAIL: bbnest --no-content failed"; cat nc.err; exit 1; }
stopped=$(jq '.stats.global_refine_stopped' nc.json)
rounds=$(jq '.stats.global_rounds' nc.json)
echo "times alone: the refinement stopped at its budget in $stopped of $rounds rounds"
[ "${stopped:-0}" -ge 1 ] 2>/dev/null || no "no refinement stopped at its budget ($stopped)"
grep -q "stopped at its budget in $stopped of $rounds rounds" nc.err ||
	no "no note on standard error: $(cat nc.err)"
inst=$(jq '.stats.instances' nc.json)
[ "$inst" = 1600 ] || no "$inst instances, not the run's 1,600 requests"
"$BB_BIN/bbnest" -q --json --no-bins burst-64.tr >c.json || { echo "FAIL: bbnest failed"; exit 1; }
cs=$(jq '.stats.global_refine_stopped' c.json)
echo "with its content: stopped in $cs rounds"
[ "$cs" = 0 ] || no "the refinement stopped at its budget with the content ($cs rounds)"
exit $fail

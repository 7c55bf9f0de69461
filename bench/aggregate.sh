#!/usr/bin/env bash
# What an aggregate run costs git-mas beside a best-of-N run of the same team.
#
#   bench/aggregate.sh            # builds the release binary, prints hyperfine's table
#   RUNS=10 bench/aggregate.sh
#
# Eight built-in reference agents on the fixture (`builtin:reference`: they do their hop with real
# `git mas` commands, so their time is git-mas's own), the team's check `true` (the check's own
# time excluded), one round: `coordinate` (best-of-N: every agent proposes, every agent endorses
# the others, the leader lands) against `coordinate --aggregate` (the plan of 8 slices from the
# frame, the same proposals and endorsements, the barrier, the 8 slices merged and checked, one
# landing). Every run starts from the same repository (--prepare resets it). Target: the
# aggregate run <= 2 x the best-of-N run.
# Needs: hyperfine, git, cargo.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SRC/bench/common.sh"
need hyperfine "apt-get install hyperfine"
cd "$SRC"
[ -n "${BIN:-}" ] || { cargo build --release --quiet; BIN=$SRC/target/release/git-mas; }
bench_scratch
fixture_repo lead a1 a2 a3 a4 a5 a6 a7 a8
AGENTS=a1=builtin:reference
for a in a2 a3 a4 a5 a6 a7 a8; do AGENTS="$AGENTS,$a=builtin:reference"; done
git config mas.task "fix the tax rounding and the reorder point"
cp -a "$REPO" "$PRISTINE"
run() { echo "cd $REPO && $BIN --agent lead coordinate --goal 'fix the bugs' --agents $AGENTS --wait 5s --check true --json --max-rounds 1 $1 >/dev/null"; }
# The runs delete and recreate the repository: stand outside it.
cd "$WORK"
# Both must land: a run that halts early would be cheaper and mean nothing.
for flags in "" "--aggregate"; do
  sh -c "$RESET && $(run "$flags") 2>/dev/null" || { echo "bench/aggregate.sh: coordinate $flags did not land" >&2; exit 1; }
done
hyperfine --warmup 1 --runs "${RUNS:-10}" --prepare "$RESET" --export-json "$SRC/bench/aggregate.json" \
  -n "best-of-N, 8 agents" "$(run "")" \
  -n "aggregate, 8 agents, 8 slices" "$(run --aggregate)"
python3 - "$SRC/bench/aggregate.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
best, agg = r["best-of-N, 8 agents"]["median"], r["aggregate, 8 agents, 8 slices"]["median"]
print(f"aggregate / best-of-N (medians): {agg / best:.2f} (target <= 2)")
PY

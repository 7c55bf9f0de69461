#!/usr/bin/env bash
# An aggregate run on a real project against the same checks run alone.
#
#   bench/aggregate-real.sh                 # toolz, heck and fastify-busboy; builds the release binary
#   RUNS=5 bench/aggregate-real.sh heck     # one project, five timed runs
#   BIN=… bench/aggregate-real.sh           # a git-mas binary already built
#
# For each project of tests/projects/projects.json (fetched, pinned, by tests/projects/fetch.sh):
# the project with its three injected bugs committed as main, the roster (lead, alice, bob, carol)
# and the project's own check as `mas.check`, nothing else; the scripted agents of the
# real-project tests (tests/projects/agent.sh: each reverts the injected bugs in its slice and
# proposes, or abstains when its slice holds none; endorses whom it is asked to); one
# `coordinate --aggregate --goal "make the test suite pass"`, the default quorum, no --partial.
# Every run starts from the same repository (--prepare resets it).
#
# Against it, "the same checks run alone": the check, run in a fresh copy of the injected tree
# (for cargo a cold build, as in the scratch checkout git-mas runs each check in), times the number
# of checks the run ran. That number is counted, not assumed: `mas.check` is prefixed with an
# `echo` into a counter file (a shell builtin in the check's own `sh -c`), so the preflight's run
# on main, every endorsement's run on a proposal and on the base (a differential endorsement runs
# both) and the merged tree's run are all counted. The ratio is
#
#   run median / (checks per run × check-alone median)         goal: <= 1.5
#
# What the ratio leaves out is what git-mas and the agents add: the hops, the scratch checkouts,
# the records, the merge, the landing. The table also says whether the run landed: a run that did
# not land ran the checks of every round it held, and its ratio still compares like with like.
# Needs: hyperfine, python3, git, cargo, node (for fastify-busboy).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SRC/bench/common.sh"
need hyperfine "apt-get install hyperfine"
need python3 "apt-get install python3"
cd "$SRC"
TARGET=${CARGO_TARGET_DIR:-$SRC/target}
[ -n "${BIN:-}" ] || { cargo build --release --quiet; BIN=$TARGET/release/git-mas; }
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
PROJECTS_DIR=${GIT_MAS_PROJECTS_DIR:-$TARGET/projects}
[ -d "$PROJECTS_DIR/toolz/src" ] || GIT_MAS_PROJECTS_DIR=$PROJECTS_DIR bash tests/projects/fetch.sh
TABLE=$SRC/tests/projects/projects.json
# The checks' cargo builds in its checkout (never in a shared target directory), with the
# toolchain the caller has: bench_scratch moves HOME.
export RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup} CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}
unset CARGO_TARGET_DIR
bench_scratch
# git-mas's build slots (a cargo check's shared target directory) live under TMPDIR: a scratch
# one, emptied before every timed run, so that each run's first cargo build is as cold as the
# check alone's.
export TMPDIR=$WORK/tmp
mkdir -p "$TMPDIR"
# `git mas` in the agents' scripts is this binary.
mkdir -p "$WORK/bin" && ln -s "$BIN" "$WORK/bin/git-mas"
export PATH=$WORK/bin:$PATH
RUNS=${RUNS:-3}
GOAL="make the test suite pass"

# field PROJECT KEY: a field of the project's row (a list joined by spaces).
field() {
  python3 - "$TABLE" "$1" "$2" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))[sys.argv[2]][sys.argv[3]]
print(" ".join(v) if isinstance(v, list) else v)
PY
}

NAMES=("$@")
[ ${#NAMES[@]} -gt 0 ] || NAMES=(toolz heck fastify-busboy)
ROWS=()
for name in "${NAMES[@]}"; do
  P=$WORK/$name
  mkdir -p "$P"
  check=$(field "$name" check)
  # The injected tree, a plain copy (no .git).
  python3 - "$TABLE" "$name" "$PROJECTS_DIR/$name/src" "$P/tree" <<'PY'
import json, shutil, sys
table, name, src, tree = sys.argv[1:]
shutil.copytree(src, tree)
for bug in json.load(open(table))[name]["bugs"]:
  path = f"{tree}/{bug['file']}"
  text = open(path).read()
  assert text.count(bug["original"]) == 1, (name, bug["id"])
  open(path, "w").write(text.replace(bug["original"], bug["buggy"], 1))
PY
  REPO=$P/repo
  cp -a "$P/tree" "$REPO"
  (
    cd "$REPO"
    git init -q -b main && git add . && git commit -qm "$(field "$name" pinned)"
    # The keys of an earlier project's agents are reused (one key directory for the scratch).
    for a in lead alice bob carol; do
      "$BIN" agent new "$a" >/dev/null 2>&1 || "$BIN" agent new --reuse-key "$a" >/dev/null
    done
    git add .mas/roster && git commit -qm roster
    git config mas.check "echo >>$P/checks; $check"
  )
  AGENTS=""
  for a in alice bob carol; do
    printf "LOG='%s'\nPROJECTS='%s'\nPROJECT='%s'\nFIXER='%s'\nSKILL=''\n. '%s'\n" "$P/log" "$TABLE" "$name" \
      "$SRC/tests/projects/fixer.py" "$SRC/tests/projects/agent.sh" >"$P/$a.sh"
    AGENTS="${AGENTS:+$AGENTS,}$a=cmd:sh $P/$a.sh"
  done
  cp -a "$REPO" "$P/pristine"
  RESET="rm -rf $REPO $REPO-mas $TMPDIR/git-mas-* && cp -a $P/pristine $REPO"
  RUN="cd $REPO && $BIN --agent lead coordinate --json --aggregate --goal '$GOAL' --agents '$AGENTS' >$P/last.json 2>$P/last.err"
  # The runs delete and recreate the repository: stand outside it.
  cd "$WORK"
  # One run first: did it land, and how many checks did it run?
  : >"$P/checks"
  if sh -c "$RESET && $RUN"; then landed=yes; else landed="no (exit $?)"; fi
  per_run=$(wc -l <"$P/checks")
  : >"$P/checks"
  hyperfine -i --runs "$RUNS" --prepare "$RESET" --export-json "$P/run.json" -n "$name: coordinate --aggregate" "$RUN"
  timed_checks=$(wc -l <"$P/checks")
  hyperfine -i --warmup 1 --runs "$((RUNS * 2))" --prepare "rm -rf $P/alone && cp -a $P/tree $P/alone" \
    --export-json "$P/alone.json" -n "$name: $check alone" "cd $P/alone && $check >/dev/null 2>&1"
  ROWS+=("$(python3 - "$P" "$name" "$check" "$per_run" "$timed_checks" "$RUNS" "$landed" <<'PY'
import json, sys
p, name, check, per_run, timed, runs, landed = sys.argv[1:]
run = json.load(open(f"{p}/run.json"))["results"][0]["median"]
alone = json.load(open(f"{p}/alone.json"))["results"][0]["median"]
n = int(per_run)
print(f"| {name} | `{check}` | {landed} | {n} ({int(timed) / int(runs):.1f} in the timed runs) | {run:.2f} | {alone:.2f} | {n * alone:.2f} | **{run / (n * alone):.2f} ×** |")
PY
)")
  cd "$SRC"
done
echo
echo "| project | check | landed | checks per run | run median (s) | check alone median (s) | checks × alone (s) | ratio |"
echo "|---|---|---|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"

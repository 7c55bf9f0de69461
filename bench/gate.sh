#!/usr/bin/env bash
# Gate benchmark: the pre-commit gate on a 20,000-file repository with 64 agents, a published frame,
# 64 live foci on distinct targets and 5 staged files that no focus holds, beside
# `git diff --cached --name-only -z` (what the gate must at least learn: the staged paths), measured
# in the same hyperfine run (medians); then a full `git commit` of those 5 files with the git-mas
# hooks installed (mas.gate=enforce) and without hooks. Both are measured with loose refs and
# objects, then again after `git gc` (packed).
#
#   bench/gate.sh             # prints tables, writes bench/gate-loose.json and bench/gate-packed.json
#   RUNS=300 bench/gate.sh
#   PERF=1 bench/gate.sh      # also records a perf profile of 300 gate runs (packed) and prints its top
#
# Targets (issue 4): gate <= 2.5 x `git diff --cached --name-only -z`; the hooks add <= 5 ms to a
# commit.
#
# Needs: cargo, git, hyperfine, python3 (generation and the tables), and perf for PERF=1. Scratch
# space: target/bench/ (or $BENCH_DIR).
set -euo pipefail
FILES=20000 AGENTS=64

need() { command -v "$1" >/dev/null 2>&1 || { echo "bench/gate.sh: '$1' is required but not installed ($2)" >&2; exit 1; }; }
need cargo "https://rustup.rs"
need git "your package manager"
need hyperfine "apt-get install hyperfine, or cargo install hyperfine"
need python3 "apt-get install python3"
[ -z "${PERF:-}" ] || need perf "apt-get install linux-perf"

cd "$(dirname "$0")/.."
SRC=$PWD
cargo build --release --quiet --bin git-mas
BIN=$SRC/target/release/git-mas
# Scratch space under target/ by default: on this machine, file creation in /tmp measured ~13x
# slower than elsewhere on the same disk, which swamps both sides.
ROOT=${BENCH_DIR:-$SRC/target/bench}
mkdir -p "$ROOT"
ROOT=$(cd "$ROOT" && pwd)
WORK=$(mktemp -d -p "$ROOT")
# KEEP=1 keeps the scratch repositories (for profiling by hand).
[ -n "${KEEP:-}" ] && echo "scratch: $WORK" || trap 'rm -rf "$WORK"' EXIT
export HOME=$WORK/home GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_MAS_KEY_DIR=$WORK/keys NO_COLOR=1
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid
# The hooks run `git mas hook …`: git finds git-mas on PATH.
export PATH=$SRC/target/release:$PATH
mkdir -p "$HOME"

# --- the repository, 64 agents, a frame, 64 foci ------------------------------------------------
REPO=$WORK/repo
python3 "$SRC/bench/genrepo.py" "$REPO" --files $FILES
cd "$REPO"
git init -q -b main && git add . && git commit -qm "generated repository"
AG=()
for i in $(seq 0 $((AGENTS - 1))); do AG+=("$(printf 'a%02d' "$i")"); done
for a in "${AG[@]}"; do "$BIN" agent new "$a" >/dev/null 2>&1; done
git add .mas/roster && git commit -qm "roster: $AGENTS agents"

# Two targets per agent, and five more files that nobody holds: the change to commit. Diagnostics
# (one warning each) lift the 128 targets above the 4,096-target bound of the snapshot, where the
# other 19,872 files, all equally recent, compete by name.
mapfile -t PICK < <(git ls-files -- docs services config | awk 'NR % 61 == 0' | head -$((2 * AGENTS + 5)))
[ "${#PICK[@]}" -eq $((2 * AGENTS + 5)) ] || { echo "bench/gate.sh: not enough files to pick from" >&2; exit 1; }
for p in "${PICK[@]:0:$((2 * AGENTS))}"; do printf '{"path": "%s", "line": 1, "severity": "warning"}\n' "$p"; done >"$WORK/diagnostics.jsonl"
STAGE=("${PICK[@]:$((2 * AGENTS)):5}")
"$BIN" --agent a00 snapshot --diagnostics "$WORK/diagnostics.jsonl" --publish >/dev/null
for i in "${!AG[@]}"; do
  "$BIN" --agent "${AG[$i]}" focus publish --ttl 24h --targets "${PICK[$((2 * i))]}" "${PICK[$((2 * i + 1))]}" >/dev/null 2>"$WORK/err" ||
    { cat "$WORK/err" >&2; exit 1; }
done
[ "$("$BIN" focus list --json | python3 -c 'import json,sys; print(sum(e["liveness"] == "live" for e in json.load(sys.stdin)["board"]["entries"]))')" -eq $AGENTS ] ||
  { echo "bench/gate.sh: expected $AGENTS live foci" >&2; "$BIN" focus list >&2; exit 1; }

# The change: five files nobody holds, staged.
for p in "${STAGE[@]}"; do echo "bench change" >>"$p"; done
git add -- "${STAGE[@]}"
[ "$(git diff --cached --name-only | wc -l)" -eq 5 ] || { echo "bench/gate.sh: expected 5 staged files" >&2; exit 1; }
"$BIN" --agent a00 gate --staged || { echo "bench/gate.sh: the gate does not allow the staged change" >&2; exit 1; }

# Two repositories for the commit: this one with the hooks, a copy without. The commit's tree is
# the same every run: --prepare moves HEAD back with `git reset --soft`, which leaves the five
# changed files staged, so every commit has the same non-empty change.
BASE=$(git rev-parse HEAD)
PLAIN=$WORK/plain
cp -a "$REPO" "$PLAIN"
git config mas.agent a00
"$BIN" hooks install >/dev/null
[ "$(git config mas.gate)" = enforce ] || { echo "bench/gate.sh: hooks install did not set mas.gate=enforce" >&2; exit 1; }
git commit -qm "trial commit"
git log -1 --format=%B | grep -q '^Mas-Agent: a00$' || { echo "bench/gate.sh: the hooked commit carries no receipt" >&2; exit 1; }
git reset -q --soft "$BASE"
[ ! -e "$PLAIN/.git/hooks/pre-commit" ] || { echo "bench/gate.sh: the plain copy has a pre-commit hook" >&2; exit 1; }

run() { # $1: loose|packed
  hyperfine -N --warmup 10 --runs "${RUNS:-200}" --export-json "$SRC/bench/gate-$1.json" \
    -n "git-mas gate --staged" "$BIN --agent a00 gate --staged" \
    -n "git mas gate --staged" "git mas --agent a00 gate --staged" \
    -n "git diff --cached --name-only -z" "git diff --cached --name-only -z"
  hyperfine -N --warmup 5 --runs "${COMMIT_RUNS:-100}" --export-json "$SRC/bench/commit-$1.json" \
    -n "git commit, hooks" --prepare "git -C $REPO reset -q --soft $BASE" "git -C $REPO commit -q -m change" \
    -n "git commit, no hooks" --prepare "git -C $PLAIN reset -q --soft $BASE" "git -C $PLAIN commit -q -m change"
}
run loose
git gc -q && git -C "$PLAIN" gc -q
git reset -q --soft "$BASE" && git -C "$PLAIN" reset -q --soft "$BASE"
run packed

if [ -n "${PERF:-}" ]; then
  perf record -q -g -F 5000 -o "$WORK/perf.data" -- \
    sh -c "for i in \$(seq 300); do '$BIN' --agent a00 gate --staged 2>/dev/null; done" >/dev/null 2>&1
  echo; echo "profile: 300 gate runs (packed), by process"
  perf report -i "$WORK/perf.data" --no-children --sort comm --stdio 2>/dev/null | grep '%' | head -8
  echo; echo "profile: git-mas, by function"
  perf report -i "$WORK/perf.data" --no-children --comm git-mas --sort sym --percent-limit 1 --stdio -g none 2>/dev/null | grep '%' | head -30
fi

python3 - "$SRC/bench" <<'PY'
import json, sys
d = sys.argv[1]
def load(name):
    return {x["command"]: x["median"] * 1000 for x in json.load(open(f"{d}/{name}.json"))["results"]}
print("\n| | loose: median (ms) | loose: ratio | packed: median (ms) | packed: ratio |\n|---|---|---|---|---|")
rows = []
for state in ("loose", "packed"):
    g, c = load(f"gate-{state}"), load(f"commit-{state}")
    rows.append((g, c))
(gl, cl), (gp, cp) = rows
diff = "git diff --cached --name-only -z"
for name in ("git-mas gate --staged", "git mas gate --staged"):
    print(f"| {name} | {gl[name]:.2f} | {gl[name]/gl[diff]:.2f}x git diff | {gp[name]:.2f} | {gp[name]/gp[diff]:.2f}x git diff |")
print(f"| {diff} | {gl[diff]:.2f} | 1 | {gp[diff]:.2f} | 1 |")
for name in ("git commit, hooks", "git commit, no hooks"):
    print(f"| {name} | {cl[name]:.2f} | | {cp[name]:.2f} | |")
for state, (g, c) in zip(("loose", "packed"), rows):
    added = c["git commit, hooks"] - c["git commit, no hooks"]
    print(f"\n{state}: gate {g['git-mas gate --staged']/g[diff]:.2f}x git diff (target <= 2.5x: "
          f"{'met' if g['git-mas gate --staged'] <= 2.5 * g[diff] else 'NOT met'}); "
          f"hooks add {added:.2f} ms to a commit (target <= 5 ms: {'met' if added <= 5 else 'NOT met'})")
PY

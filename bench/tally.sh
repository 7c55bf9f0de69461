#!/usr/bin/env bash
# Tally benchmark: a development run of 64 agents x 100 signed events each (proposals and
# endorsements, 6,400 records), tallied cold (first read: every signature verified) and warm
# (repeated), beside `git rev-list --count` over the same refs, in the same hyperfine runs.
#
#   bench/tally.sh            # builds the release binary, prints a table, writes bench/tally*.json
#   BENCH_KEEP=DIR bench/tally.sh   # keeps (or reuses) the generated run in DIR
#
# Needs: hyperfine, git, cargo, python3.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
BIN=$PWD/target/release/git-mas
OUT=$PWD/bench
mkdir -p "${BENCH_DIR:-$PWD/target/bench}"
if [ -n "${BENCH_KEEP:-}" ]; then
  WORK=$BENCH_KEEP
  mkdir -p "$WORK"
else
  WORK=$(mktemp -d -p "${BENCH_DIR:-$PWD/target/bench}")
  trap 'rm -rf "$WORK"' EXIT
fi
export HOME=$WORK/home GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_MAS_KEY_DIR=$WORK/keys NO_COLOR=1
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid
mkdir -p "$HOME"
AGENTS=${AGENTS:-64}
EVENTS=${EVENTS:-100}
REPO=$WORK/repo
if [ -d "$REPO/.git" ] && git -C "$REPO" rev-parse -q --verify refs/mas/runs/bench/meta >/dev/null; then
  echo "reusing the run in $REPO" >&2
  cd "$REPO"
else
rm -rf "$REPO"
cp -r tests/fixtures-repo "$REPO"
cd "$REPO"
git init -q -b main && git add . && git commit -qm fixture
for i in $(seq 0 $((AGENTS - 1))); do "$BIN" agent new "$(printf 'a%02d' "$i")" >/dev/null 2>&1; done
git add .mas/roster && git commit -qm roster
"$BIN" --agent a00 run start --id bench --goal "benchmark the tally" --quorum 3 >/dev/null 2>&1

# Every agent proposes every 25 events (a new tree each time) and otherwise endorses another
# agent's current tree with a passing check. Events are appended in lockstep, so time stamps
# interleave across chains the way a live run's do.
tree() { printf '%08x%032x' "$1" "$2"; }
echo "writing $((AGENTS * EVENTS)) signed events…" >&2
for j in $(seq 0 $((EVENTS - 1))); do
  version=$((j / 25))
  for i in $(seq 0 $((AGENTS - 1))); do
    agent=$(printf 'a%02d' "$i")
    at=$((1000000 + j * AGENTS + i))
    meta="\"metadata\":{\"correlation_id\":\"bench\",\"epoch\":$version,\"event_id\":\"$agent-$j\",\"source\":\"$agent\"},\"pattern\":\"development\""
    if (( j % 25 == 0 )); then
      kind=proposal
      payload="{\"at_ms\":$at,\"commit\":\"$(tree "$i" "$version")\",\"event\":{$meta,\"payload\":{\"digest\":\"$(tree "$i" "$version")\",\"kind\":\"external-bytes\",\"len\":100}}}"
    else
      kind=endorsement
      other=$(( (i + j) % AGENTS )); (( other == i )) && other=$(( (i + 1) % AGENTS ))
      payload="{\"at_ms\":$at,\"commit\":\"$(tree "$other" "$version")\",\"event\":{$meta,\"payload\":{\"command\":\"true\",\"duration_ms\":5,\"exit_status\":0,\"kind\":\"tool-result\",\"output_digest\":\"sha256:00\",\"subject\":\"$(tree "$other" "$version")\"}},\"proposer\":\"$(printf 'a%02d' "$other")\"}"
    fi
    "$BIN" --agent "$agent" record append --kind "$kind" --ref "refs/mas/runs/bench/events/$agent" --payload "$payload" >/dev/null
  done
done
fi
mapfile -t REFS < <(git for-each-ref --format='%(refname)' refs/mas/runs/bench/)
COUNT=$(git rev-list --count "${REFS[@]}")
echo "$COUNT commits under refs/mas/runs/bench/" >&2
"$BIN" tally bench --json | python3 -c 'import json,sys; t=json.load(sys.stdin); print("tally applied", t["counters"]["applied"], "events; leader", t["leader"])' >&2

# Cold: no cache of verified chains (mas-cache/) and no cache of verified signatures
# (mas-verified), so that every signature is checked.
CACHE="$(git rev-parse --git-common-dir)/mas-cache $(git rev-parse --git-common-dir)/mas-verified"
bench() {
  local label=$1
  hyperfine -N --warmup 3 --runs "${RUNS:-30}" --export-json "$OUT/tally-$label.json" \
    --prepare "rm -rf $CACHE" -n "git-mas tally, cold ($label)" "$BIN tally bench --json" \
    -n "git rev-list --count ($label)" "git rev-list --count ${REFS[*]}"
}
# hyperfine applies --prepare to every command of a run; the warm tally must keep its cache, so
# it is measured in a run of its own, again beside rev-list.
bench_warm() {
  local label=$1
  hyperfine -N --warmup 3 --runs "${RUNS:-30}" --export-json "$OUT/tally-$label-warm.json" \
    -n "git-mas tally, warm ($label)" "$BIN tally bench --json" \
    -n "git rev-list --count, same run ($label)" "git rev-list --count ${REFS[*]}"
}
bench loose
bench_warm loose
git gc -q
bench packed
bench_warm packed

python3 - "$OUT" <<'PY'
import json, sys, os
out = sys.argv[1]
def load(name):
    return {r["command"]: r["median"] * 1000 for r in json.load(open(os.path.join(out, name)))["results"]}
print("\n| objects | cold tally (ms) | warm tally (ms) | git rev-list --count (ms) | cold / rev-list | warm / rev-list |")
print("|---|---|---|---|---|---|")
for label in ("loose", "packed"):
    cold = load(f"tally-{label}.json")
    warm = load(f"tally-{label}-warm.json")
    c = cold[f"git-mas tally, cold ({label})"]
    w = warm[f"git-mas tally, warm ({label})"]
    r = warm[f"git rev-list --count, same run ({label})"]
    print(f"| {label} | {c:.1f} | {w:.1f} | {r:.2f} | {c/r:.1f}x | {w/r:.1f}x |")
PY

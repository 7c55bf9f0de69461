#!/usr/bin/env bash
# Store benchmark: one signed append, and one verified read of a 1,000-record chain, each beside
# the git command it is built on, measured in the same run with hyperfine (medians).
#
#   bench/store.sh            # builds the release binary, prints a table, writes bench/store.json
#
# Needs: hyperfine, git, cargo.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
BIN=$PWD/target/release/git-mas
# Scratch space under target/ by default: on this machine, file creation in /tmp measured ~13x
# slower than elsewhere on the same disk (0.34 ms vs 0.026 ms), which swamps both sides.
mkdir -p "${BENCH_DIR:-$PWD/target/bench}"
WORK=$(mktemp -d -p "${BENCH_DIR:-$PWD/target/bench}")
trap 'rm -rf "$WORK"' EXIT
export HOME=$WORK/home GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_MAS_KEY_DIR=$WORK/keys NO_COLOR=1
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid
mkdir -p "$HOME"
REPO=$WORK/repo
cp -r tests/fixtures-repo "$REPO"
cd "$REPO"
git init -q -b main && git add . && git commit -qm fixture
"$BIN" agent new alice >/dev/null 2>&1
git add .mas/roster && git commit -qm roster
git config mas.agent alice

# A 1,000-record chain to read.
for i in $(seq 1 1000); do "$BIN" record append --kind note --ref refs/mas/bench/chain --payload "{\"i\":$i}" >/dev/null; done
HEAD_ID=$(git rev-parse HEAD)
TIP=$(git rev-parse refs/mas/bench/chain)

hyperfine -N --warmup 10 --runs "${RUNS:-200}" --export-json "$OLDPWD/bench/store.json" \
  -n "git-mas signed append" "$BIN record append --kind note --payload 1" \
  -n "git update-ref" "git update-ref refs/bench/x $HEAD_ID" \
  -n "git-mas verified read (1,000 records)" "$BIN log refs/mas/bench/chain --json" \
  -n "git cat-file -p (one commit)" "git cat-file -p $TIP"

# The same read once `git gc` has packed the objects and refs.
git gc -q
hyperfine -N --warmup 5 --runs "${RUNS:-200}" --export-json "$OLDPWD/bench/store-packed.json" \
  -n "git-mas verified read (1,000 records, packed)" "$BIN log refs/mas/bench/chain --json" \
  -n "git cat-file -p (one commit, packed)" "git cat-file -p $TIP"

python3 - "$OLDPWD/bench/store.json" "$OLDPWD/bench/store-packed.json" <<'PY'
import json, sys
r = {x["command"]: x for f in sys.argv[1:] for x in json.load(open(f))["results"]}
med = lambda n: r[n]["median"] * 1000
a, u = med("git-mas signed append"), med("git update-ref")
v, c = med("git-mas verified read (1,000 records)"), med("git cat-file -p (one commit)")
print(f"\n| operation | median (ms) | ratio |\n|---|---|---|")
print(f"| git-mas signed append | {a:.2f} | {a/u:.2f}x git update-ref |")
print(f"| git update-ref | {u:.2f} | 1 |")
print(f"| git-mas verified read, 1,000-record chain | {v:.2f} | {v/c:.1f}x git cat-file -p |")
print(f"| git cat-file -p (one commit) | {c:.2f} | 1 |")
pv, pc = med("git-mas verified read (1,000 records, packed)"), med("git cat-file -p (one commit, packed)")
print(f"| git-mas verified read, 1,000-record chain, after git gc | {pv:.2f} | {pv/pc:.1f}x git cat-file -p |")
print(f"| git cat-file -p (one commit), after git gc | {pc:.2f} | 1 |")
print(f"\nappend target (<= 3x update-ref): {'met' if a <= 3*u else 'NOT met'}")
PY

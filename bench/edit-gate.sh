#!/usr/bin/env bash
# Edit-gate benchmark: `git mas gate --host claude-code` answering a Claude Code `PreToolUse` hook
# for a one-file `Edit`, on the 20,000-file repository with 64 agents, a published frame and 64 live
# foci of bench/gate.sh, beside `git diff --cached --name-only -z` in the same hyperfine run
# (medians), with loose refs and objects, then again after `git gc` (packed).
#
#   bench/edit-gate.sh          # prints a table, writes bench/edit-gate-{loose,packed}.json
#   RUNS=300 bench/edit-gate.sh
#   BASE_BIN=target/git-mas-before bench/edit-gate.sh   # adds that build to the same run
#   PERF=1 bench/edit-gate.sh   # also records a perf profile of 200 allowed edits (packed)
#
# Rows: the edit of a file nobody holds (the gate allows: no output), the same through git's
# dispatcher (`git mas`, as the installed hook runs it), the edit of a file another agent holds
# (denied, naming the holder), and the free edit with the window and roster caches removed before
# each run (`--prepare`): what the first gate after every focus, the frame and the roster moved
# pays (the signature cache stays).
#
# hyperfine 1.15 has no --input, so every command, the baseline included, runs as
# `sh -c 'CMD < payload'` with -N: each row carries one `sh` start and a redirection (the row
# `sh -c true < payload` shows what that costs).
#
# Target: the edit gate <= 1.5 x `git diff --cached --name-only -z`, loose and packed.
# On a shared machine run it as root under `nice -n -19`; BENCHMARKS.md says how each figure was taken.
#
# Needs: cargo, git, hyperfine, python3, and perf for PERF=1. Scratch space: target/bench/ (or
# $BENCH_DIR).
set -euo pipefail
FILES=20000 AGENTS=64

. "$(dirname "$0")/common.sh"
need cargo "https://rustup.rs"
need git "your package manager"
need hyperfine "apt-get install hyperfine, or cargo install hyperfine"
need python3 "apt-get install python3"
[ -z "${PERF:-}" ] || need perf "apt-get install linux-perf"
# BASE_BIN may be relative to the source tree: the runs happen inside the scratch repository.
[ -z "${BASE_BIN:-}" ] || BASE_BIN=$(cd "$(dirname "$0")/.." && realpath "$BASE_BIN")

cd "$(dirname "$0")/.."
SRC=$PWD
cargo build --release --quiet --bin git-mas
BIN=$SRC/target/release/git-mas
bench_scratch
bench_binaries
# `git mas` finds git-mas on PATH.
export PATH=$WORK/bin:$PATH

gate_repo
git config mas.agent a00
git config mas.gate enforce

# The payloads: an Edit of a line that occurs once in a file nobody holds (STAGE[0], already
# modified and staged) and in a file a01 holds (PICK[2]), absolute paths as Claude Code sends them.
payload() { # $1: repository-relative path, $2: output file
  python3 - "$REPO" "$1" "$2" <<'PY'
import collections, json, sys
repo, rel, out = sys.argv[1:]
lines = open(f"{repo}/{rel}").read().splitlines()
count = collections.Counter(lines)
old = next(l for l in lines if l.strip() and count[l] == 1)
json.dump({"session_id": "bench", "transcript_path": "/dev/null", "cwd": repo, "permission_mode": "acceptEdits",
           "hook_event_name": "PreToolUse", "tool_name": "Edit",
           "tool_input": {"file_path": f"{repo}/{rel}", "old_string": old, "new_string": old + " (edited)",
                          "replace_all": False}, "tool_use_id": "toolu_bench"}, open(out, "w"))
PY
}
ALLOW=$WORK/allow.json DENY=$WORK/deny.json
payload "${STAGE[0]}" "$ALLOW"
payload "${PICK[2]}" "$DENY"

# The answers, checked before timing: nothing for the free file, a deny naming a01 for the held one.
check() { # $1: binary, $2: payload, $3: deny|allow
  local out
  out=$("$1" gate --host claude-code <"$2" 2>/dev/null)
  case $3 in
    allow) [ -z "$out" ] || { echo "edit-gate.sh: $1 does not allow the free edit: $out" >&2; exit 1; } ;;
    deny) grep -q '"permissionDecision":"deny"' <<<"$out" && grep -q a01 <<<"$out" ||
      { echo "edit-gate.sh: $1 does not deny the held edit: $out" >&2; exit 1; } ;;
  esac
}
for b in "$BIN" ${BASE_BIN:+"$BASE_BIN"}; do check "$b" "$ALLOW" allow; check "$b" "$DENY" deny; done

COMMON=$(cd "$(git rev-parse --git-common-dir)" && pwd)
CACHES="$COMMON/mas-windows-focus $COMMON/mas-windows-frame $COMMON/mas-roster"
# Every command gets a --prepare (hyperfine takes one for all or one per command): only the
# no-cache row's removes the cache.
CMDS=(
  -n "git-mas gate --host, free file" --prepare true "sh -c '$BIN gate --host claude-code < $ALLOW'"
  -n "git mas gate --host, free file" --prepare true "sh -c 'git mas gate --host claude-code < $ALLOW'"
  -n "git-mas gate --host, held file" --prepare true "sh -c '$BIN gate --host claude-code < $DENY'"
)
[ -z "${BASE_BIN:-}" ] || CMDS+=(
  -n "git-mas gate --host, free file, base build" --prepare true "sh -c '$BASE_BIN gate --host claude-code < $ALLOW'"
  -n "git-mas gate --host, held file, base build" --prepare true "sh -c '$BASE_BIN gate --host claude-code < $DENY'")
CMDS+=(
  -n "git-mas gate --host, free file, caches removed" --prepare "rm -f $CACHES" "sh -c '$BIN gate --host claude-code < $ALLOW'"
  -n "git diff --cached --name-only -z" --prepare true "sh -c 'git diff --cached --name-only -z < $ALLOW'"
  -n "sh -c true < payload" --prepare true "sh -c 'true < $ALLOW'"
)
run() { # $1: loose|packed
  hyperfine -N --warmup 10 --runs "${RUNS:-200}" --export-json "$SRC/bench/edit-gate-$1.json" "${CMDS[@]}"
  # Listing the 64 focus refs alone, for the same state of the refs.
  hyperfine -N --warmup 10 --runs "${RUNS:-200}" --export-json "$SRC/bench/edit-gate-refs-$1.json" \
    -n "git for-each-ref refs/mas/focus/" "git for-each-ref refs/mas/focus/"
}
run loose
git gc -q
[ -z "$(find "$(git rev-parse --git-common-dir)/refs/mas" -type f)" ] || { echo "edit-gate.sh: refs still loose after gc" >&2; exit 1; }
for b in "$BIN" ${BASE_BIN:+"$BASE_BIN"}; do check "$b" "$ALLOW" allow; check "$b" "$DENY" deny; done
run packed

if [ -n "${PERF:-}" ]; then
  # DWARF unwinding: the release build has no frame pointers.
  perf record -q --call-graph dwarf,16384 -F 2000 -o "$WORK/perf.data" -- \
    sh -c "for i in \$(seq 200); do '$BIN' gate --host claude-code < '$ALLOW'; done" >/dev/null 2>&1
  echo; echo "profile: 200 allowed edits (packed), git-mas, inclusive time by function"
  perf report -i "$WORK/perf.data" --comm git-mas --children --sort sym --percent-limit 3 --stdio -g none 2>/dev/null | grep '%' | head -40 || true
fi

python3 - "$SRC/bench" <<'PY'
import json, sys
d = sys.argv[1]
def load(name):
    return {x["command"]: (x["median"] * 1000, (x["user"] + x["system"]) * 1000) for x in json.load(open(f"{d}/{name}.json"))["results"]}
diff = "git diff --cached --name-only -z"
res = {s: {**load(f"edit-gate-{s}"), **load(f"edit-gate-refs-{s}")} for s in ("loose", "packed")}
print("\n| | loose: median ms | ratio | CPU ms | CPU ratio | packed: median ms | ratio | CPU ms | CPU ratio |")
print("|---|---|---|---|---|---|---|---|---|")
for name in res["loose"]:
    cells = []
    for s in ("loose", "packed"):
        (w, c), (dw, dc) = res[s][name], res[s][diff]
        cells += [f"{w:.2f}", f"{w/dw:.2f}x", f"{c:.2f}", f"{c/dc:.2f}x"]
    print(f"| {name} | " + " | ".join(cells) + " |")
for s in ("loose", "packed"):
    r = res[s]
    dw = r[diff][0]
    for name in ("git-mas gate --host, free file", "git mas gate --host, free file", "git-mas gate --host, held file"):
        g = r[name][0]
        print(f"{s}: {name}: {g/dw:.2f}x git diff (target <= 1.5x: {'met' if g <= 1.5 * dw else 'NOT met'})")
PY

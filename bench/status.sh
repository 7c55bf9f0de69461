#!/usr/bin/env bash
# `git mas status` beside `git status` in the same hyperfine run (medians), on a 20,000-file
# repository with 64 live agents (one focus of two files each), a development run of 8 agents in
# progress, and the gate's denial log near its bound (256 KiB) — with loose refs and objects,
# then again after `git gc` (packed).
#
#   bench/status.sh                 # prints a table, writes bench/status-{loose,packed}.json
#   RUNS=50 bench/status.sh
#
# Target (issue 26): git mas status <= 3.0 x git status.
#
# The binary is built with `cargo build --release` into $CARGO_TARGET_DIR (default target/). On a
# shared machine run it as root under `nice -n -19`; BENCHMARKS.md says how each figure was taken.
#
# Needs: cargo, git, hyperfine, python3. Scratch space: target/bench/ (or $BENCH_DIR).
set -euo pipefail
FILES=20000 AGENTS=64 RUN_AGENTS=8

. "$(dirname "$0")/common.sh"
need cargo "https://rustup.rs"
need git "your package manager"
need hyperfine "apt-get install hyperfine, or cargo install hyperfine"
need python3 "apt-get install python3"

cd "$(dirname "$0")/.."
SRC=$PWD
cargo build --release --locked --quiet --bin git-mas
TARGET=$(realpath "${CARGO_TARGET_DIR:-$SRC/target}")
BIN=$TARGET/release/git-mas
bench_scratch
export PATH=$TARGET/release:$PATH
gate_repo

# A run of 8 agents in progress.
ROSTER=$(printf 'a%02d,' $(seq 0 $((RUN_AGENTS - 1))) | sed 's/,$//')
"$BIN" --agent a00 run start --id bench --goal "benchmark run" --roster "$ROSTER" --quorum 3 >/dev/null
# The denial log near its bound: refusals of agents waiting on each other's files.
python3 - "$(git rev-parse --git-common-dir)/mas/denials.log" "${PICK[@]}" <<'PY'
import json, os, sys, time
path, picks = sys.argv[1], sys.argv[2:]
os.makedirs(os.path.dirname(path), exist_ok=True)
now = int(time.time())
with open(path, "w") as f:
    i = 0
    while f.tell() < 250 * 1024:
        a, h = i % 64, (i * 7 + 1) % 64
        f.write(json.dumps({"at": now - (i % 1200), "agent": f"a{a:02d}", "holder": f"a{h:02d}", "file": picks[2 * h]}, separators=(",", ":")) + "\n")
        i += 1
PY

check() { # the view lists every agent, the run and who waits on whom
  local out
  out=$("$BIN" status --json)
  python3 -c '
import json, sys
s = json.load(sys.stdin)
assert len(s["agents"]) == 64, len(s["agents"])
assert [r["id"] for r in s["runs"]] == ["bench"], s["runs"]
assert len(s["waiting"]) > 0
' <<<"$out" || { echo "status.sh: unexpected view" >&2; exit 1; }
}
check

run() { # $1: loose|packed
  hyperfine -N --warmup 5 --runs "${RUNS:-30}" --export-json "$SRC/bench/status-$1.json" \
    -n "git mas status" "$BIN status" \
    -n "git mas status --json" "$BIN status --json" \
    -n "git status" "git status"
}
run loose
git gc -q
check
run packed

python3 - "$SRC/bench" <<'PY'
import json, sys
d = sys.argv[1]
rows = {}
for state in ("loose", "packed"):
    for r in json.load(open(f"{d}/status-{state}.json"))["results"]:
        rows.setdefault(r["command"], {})[state] = r
print("\n| | loose: median ms | ratio | packed: median ms | ratio |")
print("|---|---|---|---|---|")
base = rows["git status"]
for name, by in rows.items():
    cells = []
    for s in ("loose", "packed"):
        m = by[s]["median"] * 1000
        cells += [f"{m:.2f}", f"{m / (base[s]['median'] * 1000):.2f}x"]
    print(f"| {name} | " + " | ".join(cells) + " |")
for s in ("loose", "packed"):
    r = rows["git mas status"][s]["median"] / base[s]["median"]
    print(f"{s}: git mas status {r:.2f}x git status (target <= 3.0x: {'met' if r <= 3.0 else 'NOT met'})")
PY

#!/usr/bin/env bash
# Fresh-install benchmark: the README's first command, `cargo install --locked --path .`, run in a
# fresh clone of this commit and of a base revision (crates already downloaded, `cargo fetch` first,
# untimed; nothing else running), then the staged gate and the Claude Code edit hook of the two
# installed binaries side by side, interleaved (bench/interleave.py: every round runs each command
# once, in a shuffled order), on the 20,000-file repository with 64 live foci of bench/gate.sh,
# with loose refs and objects, then again after `git gc` (packed).
#
#   BASE_REV=2e4a85e bench/install.sh      # prints a table, writes bench/install.json
#   RUNS=500 BASE_REV=… bench/install.sh
#   BASE_BIN=path/to/git-mas BASE_REV=…    # reuse an installed base binary: its install is not timed
#
# Rows: install time (wall, `date` before and after); the staged gate (`git-mas gate --staged`)
# beside `git diff --cached --name-only -z`; the edit hook (`git-mas gate --host claude-code` with a
# PreToolUse payload on stdin) for a file nobody holds (allowed) and for a held one (denied).
#
# Target (issue 28): install <= 5 minutes on a 2-core machine, the gate and the hook within 10 % of
# the base build's, measured in the same run.
#
# Needs: cargo, git, python3, readelf (binutils), a network or a filled cargo registry for `cargo fetch`. Scratch: target/bench/
# (or $BENCH_DIR); the two clones are built there, so each install starts from nothing.
set -euo pipefail
FILES=20000 AGENTS=64

. "$(dirname "$0")/common.sh"
need cargo "https://rustup.rs"
need git "your package manager"
need python3 "apt-get install python3"
need readelf "apt-get install binutils"
[ -n "${BASE_REV:-}" ] || { echo "bench/install.sh: set BASE_REV to the revision to compare with (e.g. the commit before a profile change)" >&2; exit 2; }

cd "$(dirname "$0")/.."
SRC=$PWD
HEAD_REV=$(git rev-parse HEAD)
BASE_REV=$(git rev-parse "$BASE_REV^{commit}")
# The clones and installs use the caller's cargo home (the downloaded crates); bench_scratch
# moves HOME, so pin it first.
export CARGO_HOME=${CARGO_HOME:-$HOME/.cargo} RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup}
unset CARGO_TARGET_DIR CARGO_BUILD_TARGET_DIR RUSTFLAGS CARGO_ENCODED_RUSTFLAGS
bench_scratch

install_rev() { # $1: name, $2: revision; prints the seconds the install took, leaves $WORK/$1/bin/git-mas
  git clone -q "$SRC" "$WORK/$1-src" && git -C "$WORK/$1-src" checkout -q "$2"
  (cd "$WORK/$1-src" && cargo fetch --locked -q)
  local t0 t1
  t0=$(date +%s.%N)
  (cd "$WORK/$1-src" && cargo install --locked --path . --root "$WORK/$1" -q) >&2
  t1=$(date +%s.%N)
  python3 -c "print(round($t1 - $t0, 1))"
}
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
NEW_S=$(install_rev new "$HEAD_REV")
BIN=$WORK/new/bin/git-mas
if [ -n "${BASE_BIN:-}" ]; then
  BASE_S=""
  BASE_BIN=$(realpath "$BASE_BIN")
else
  BASE_S=$(install_rev base "$BASE_REV")
  BASE_BIN=$WORK/base/bin/git-mas
fi
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

# The two binaries are measured from copies made one after the other just before the runs: how
# the kernel caches an executable (written by the linker, by cp, or read back from disk) changed
# the same binary's gate by up to 15 % here, more than the builds differ.
mkdir -p "$WORK/measured"
cp "$BIN" "$WORK/measured/this" && cp "$BASE_BIN" "$WORK/measured/base"
BIN=$WORK/measured/this BASE_BIN=$WORK/measured/base
ELF_THIS=$(readelf -h "$BIN" | awk '/Type:/ {print $2}') ELF_BASE=$(readelf -h "$BASE_BIN" | awk '/Type:/ {print $2}')

gate_repo
git config mas.agent a00
git config mas.gate enforce
# A file nobody holds (staged already) and one a01 holds, as Claude Code sends an Edit of them.
edit_payload bench "${STAGE[0]}" "$WORK/free.json" "$REPO"
edit_payload bench "${PICK[2]}" "$WORK/held.json" "$REPO"
for b in "$BIN" "$BASE_BIN"; do
  "$b" --agent a00 gate --staged >/dev/null 2>&1 || { echo "bench/install.sh: $b does not allow the staged change" >&2; exit 1; }
  [ -z "$("$b" gate --host claude-code <"$WORK/free.json" 2>/dev/null)" ] || { echo "bench/install.sh: $b does not allow the free edit" >&2; exit 1; }
  "$b" gate --host claude-code <"$WORK/held.json" 2>/dev/null | grep -q '"permissionDecision":"deny"' || { echo "bench/install.sh: $b does not deny the held edit" >&2; exit 1; }
done

measure() { # $1: loose|packed
  echo "== $1 (runs: ${RUNS:-300} interleaved rounds)"
  JSON=$WORK/$1.json RUNS=${RUNS:-300} python3 "$SRC/bench/interleave.py" \
    "gate --staged, base=$BASE_BIN --agent a00 gate --staged" \
    "gate --staged=$BIN --agent a00 gate --staged" \
    "git diff --cached --name-only -z=git diff --cached --name-only -z" \
    "edit hook free file, base=$BASE_BIN gate --host claude-code <$WORK/free.json" \
    "edit hook free file=$BIN gate --host claude-code <$WORK/free.json" \
    "edit hook held file, base=$BASE_BIN gate --host claude-code <$WORK/held.json" \
    "edit hook held file=$BIN gate --host claude-code <$WORK/held.json"
}
measure loose
git gc -q
measure packed

python3 - "$WORK" "$SRC/bench/install.json" "$HEAD_REV" "$BASE_REV" "$NEW_S" "$BASE_S" "$LOAD_BEFORE" "$LOAD_AFTER" "$ELF_THIS" "$ELF_BASE" <<'PY'
import json, os, statistics, sys
work, out, head, base, new_s, base_s, load_before, load_after, elf_this, elf_base = sys.argv[1:]
res = {"head": head, "base": base, "install_s": {"new": float(new_s), "base": float(base_s) if base_s else None},
       "load_before_install": load_before, "load_after_install": load_after, "elf_type": {"this": elf_this, "base": elf_base}}
print(f"\nELF type: this build {elf_this} ({'position-dependent' if elf_this == 'EXEC' else 'position-independent'}), base {elf_base}")
print(f"\ninstall (cargo install --locked --path ., fresh clone): this build {float(new_s)/60:.2f} min"
      + (f", base {float(base_s)/60:.2f} min" if base_s else "") + f"; load average before {load_before}, after {load_after}")
print("| | loose: base ms | this ms | ratio | packed: base ms | this ms | ratio |\n|---|---|---|---|---|---|---|")
rows = [("gate --staged", "gate --staged, base"), ("edit hook free file", "edit hook free file, base"),
        ("edit hook held file", "edit hook held file, base")]
data = {l: json.load(open(f"{work}/{l}.json"))["commands"] for l in ("loose", "packed")}
res["latency_ms"] = {}
for new, old in rows:
    cells = []
    for l in ("loose", "packed"):
        a, b = statistics.median(data[l][old]["wall_ms"]), statistics.median(data[l][new]["wall_ms"])
        cells += [f"{a:.2f}", f"{b:.2f}", f"{b / a:.3f}x"]
        res["latency_ms"].setdefault(new, {})[l] = {"base": a, "this": b, "ratio": b / a}
    print(f"| {new} | " + " | ".join(cells) + " |")
for l in ("loose", "packed"):
    g = statistics.median(data[l]["git diff --cached --name-only -z"]["wall_ms"])
    s = statistics.median(data[l]["gate --staged"]["wall_ms"])
    res.setdefault("gate_vs_git_diff", {})[l] = s / g
    print(f"{l}: this build's staged gate = {s / g:.2f}x git diff --cached --name-only -z (same rounds)")
json.dump(res, open(out + ".tmp", "w"), indent=1)
os.replace(out + ".tmp", out)  # whole or not at all
PY

#!/usr/bin/env bash
# Team-mode claims benchmark: `git-mas-hook --host claude-code` (the hook's own binary, which the
# installed entries run) answering Claude Code `PreToolUse` hooks for one-file `Edit`s in team mode (mas.team=true), on a 20,000-file repository whose board
# holds 64 live sessions, beside `git diff --cached --name-only` in the same hyperfine run
# (medians), with loose refs and objects, then again after `git gc` (packed).
#
#   bench/team-claims.sh            # prints a table, writes bench/team-claims-{loose,packed}.json
#   RUNS=300 bench/team-claims.sh
#   PERF=1 bench/team-claims.sh     # also records a perf profile of 200 claims (packed)
#   BASE_BIN=target/git-mas-before bench/team-claims.sh   # adds that build's rows to the same run
#   DEPTH=16 bench/team-claims.sh   # each other session first releases and claims again 16 times
#   STATIC=1 bench/team-claims.sh   # adds a statically linked build's pre-tool rows (see below)
#
# DEPTH models sessions that have worked a while: every claim, renewal and release is a record on
# the session's chain, and the board reads (and caches) each chain's newest 32. By default the
# other sessions' chains hold their two claims only.
#
# The board is made by the hook itself: one principal (alice, mas.agent) on the committed roster;
# the frame is published as `git mas init --team` does; 62 sessions claim two files each, session "hold" one
# file, and session "claim" is the 64th. No focus is published by hand. Rows:
#
#   (a) a claim: session "claim" edits a file nobody holds. Allowed; it takes the claims lock and
#       appends a claim record. Each timed run really claims: hyperfine's --prepare releases the
#       session's claim (`git mas --agent <claim> focus release`) before every run, and the script
#       checks afterwards that the session's chain grew by one claim and one release per run.
#       Target: <= 2.0 x git diff.
#   (b) an edit of a file the session already holds (session "hold", claim fresh): allowed, one
#       read of the board, nothing written (the script checks that no ref moved). Target <= 1.0 x.
#   (c) a denied edit: session "hold" edits a file another session holds. Target <= 1.0 x.
#   (d) the post-tool check of a shell call: session "hold" ran a Bash call (its pre-tool hook,
#       in --prepare, kept the 125 files the other 63 sessions hold); the timed post-tool hook
#       compares each with what was kept (nothing changed: it writes nothing back). Target
#       <= 1.0 x.
#   (e) the pre-tool hook of a shell call: session "hold" runs a Bash call; the hook keeps the 125
#       files the other 63 sessions hold (each a link to the held files' guard's copy where it
#       has one). --prepare runs the previous call's post-tool check. Target <= 1.0 x.
#
# Rows (b) and (c) are also timed as `git-mas gate --host` (the same hook in the whole binary) and
# as `git mas gate --host` (through git's dispatcher: what earlier releases' entries ran).
#
# Then, for the pre-tool rows (b) and (c) and git diff (and the base build's, with BASE_BIN), one
# call at a time in shuffled rounds (bench/interleave.py, INTERLEAVED rounds, default 300):
# hyperfine times its commands one block after another, and on this kind of machine the ratio
# of one build to git moved by 30 % between blocks of the same run; interleaved, drift falls on
# all alike. These ratios (with a bootstrap 95 % interval) are the pre-tool rows' figures.
#
# hyperfine 1.15 has no --input, so every command, the baseline included, runs as
# `sh -c 'CMD < payload'` with -N: each row carries one `sh` start and a redirection (the row
# `sh -c true < payload` shows what that costs). The release before each claim (--prepare) is not
# timed.
#
# STATIC=1 also builds git-mas and git-mas-hook linked statically at a fixed address (glibc's static archives,
# `-C target-feature=+crt-static -C relocation-model=static`, for the host's target given
# explicitly so that build scripts and proc macros stay dynamic) into $STATIC_TARGET_DIR (default
# target/static), and adds git-mas-hook's pre-tool rows (b) and (c) to the interleaved stage. The script
# prints each binary's size; the interleaved stage gives each row's page faults per call (the
# median, from wait4), the measure of what a hook's process start costs the kernel.
#
# The binary is built with `cargo build --release` into $CARGO_TARGET_DIR (default target/).
# On a shared machine run it as root under `nice -n -19`; BENCHMARKS.md says how each figure was
# taken.
#
# Needs: cargo, git, hyperfine, python3, and perf for PERF=1. Scratch space: target/bench/ (or
# $BENCH_DIR).
set -euo pipefail
FILES=20000 OTHERS=62

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
cargo build --release --locked --quiet --bins
TARGET=$(realpath "${CARGO_TARGET_DIR:-$SRC/target}")
BIN=$TARGET/release/git-mas
HOOK_BUILT=$TARGET/release/git-mas-hook
if [ -n "${STATIC:-}" ]; then
  HOST=$(rustc -vV | sed -n 's/^host: //p')
  STATIC_DIR=$(mkdir -p "${STATIC_TARGET_DIR:-$TARGET/static}" && realpath "${STATIC_TARGET_DIR:-$TARGET/static}")
  CARGO_TARGET_DIR=$STATIC_DIR GIT_MAS_PIE=1 cargo build --release --locked --quiet --bins --target "$HOST" \
    --config "target.$HOST.rustflags=[\"-C\",\"target-feature=+crt-static\",\"-C\",\"relocation-model=static\"]"
  STATIC_BIN=$STATIC_DIR/$HOST/release/git-mas
  STATIC_HOOK=$STATIC_DIR/$HOST/release/git-mas-hook
  for b in "$STATIC_BIN" "$STATIC_HOOK"; do
    file "$b" | grep -q "statically linked" || { echo "team-claims.sh: $b is not static" >&2; exit 1; }
  done
fi
bench_scratch
bench_binaries
if [ -n "${STATIC_BIN:-}" ]; then
  mkdir -p "$WORK/static"
  cp "$STATIC_BIN" "$WORK/static/git-mas"
  cp "$STATIC_HOOK" "$WORK/static/git-mas-hook"
  STATIC_BIN=$WORK/static/git-mas STATIC_HOOK=$WORK/static/git-mas-hook
fi
# The hook's own binary, which the installed entries run (`git-mas-hook --host claude-code`).
cp "$HOOK_BUILT" "$WORK/bin/git-mas-hook"
HOOK=$WORK/bin/git-mas-hook
# `git mas` finds git-mas on PATH.
export PATH=$WORK/bin:$PATH

team_repo

# Files: two per other session, one held by "hold", the one "claim" claims, five staged files
# nobody holds (git diff's change).
mapfile -t PICK < <(git ls-files -- docs services config | awk 'NR % 61 == 0' | head -$((2 * OTHERS + 7)))
[ "${#PICK[@]}" -eq $((2 * OTHERS + 7)) ] || { echo "team-claims.sh: not enough files to pick from" >&2; exit 1; }
HELD=${PICK[$((2 * OTHERS))]} FREE=${PICK[$((2 * OTHERS + 1))]}
STAGE=("${PICK[@]:$((2 * OTHERS + 2)):5}")

payload() { edit_payload "$1" "$2" "$3" "$REPO"; } # session, repository-relative path, output file
allow() { # $1: payload; the hook must allow (no output)
  local out
  out=$("$BIN" gate --host claude-code <"$1" 2>/dev/null)
  [ -z "$out" ] || { echo "team-claims.sh: not allowed: $1: $out" >&2; exit 1; }
}

# The board, made by the hook (the frame is there already, as after `git mas init --team`).
for i in $(seq 0 $((OTHERS - 1))); do
  for j in 0 1; do
    payload "other-$i" "${PICK[$((2 * i + j))]}" "$WORK/p.json"
    allow "$WORK/p.json"
  done
done
board() { "$BIN" focus list --json; }
agent_of() { # $1: a file; the live agent holding it
  board | python3 -c 'import json,sys; print(next(e["focus"]["agent"] for e in json.load(sys.stdin)["board"]["entries"] if e["liveness"] == "live" and sys.argv[1] in e["focus"]["targets"]))' "$1"
}
# Older sessions: each releases its second file and claims it again, DEPTH times (two records).
if [ "${DEPTH:-0}" -gt 0 ]; then
  for i in $(seq 0 $((OTHERS - 1))); do
    second=${PICK[$((2 * i + 1))]}
    agent=$(agent_of "$second")
    payload "other-$i" "$second" "$WORK/p.json"
    for _ in $(seq "$DEPTH"); do
      CLAUDE_CODE_SESSION_ID="other-$i" "$BIN" --agent "$agent" focus release --targets "$second" >/dev/null
      allow "$WORK/p.json"
    done
  done
fi
CLAIM_P=$WORK/claim.json HOLD_P=$WORK/hold.json DENY_P=$WORK/deny.json
SHELL_PRE=$WORK/shell-pre.json SHELL_POST=$WORK/shell-post.json
for event in PreToolUse PostToolUse; do
  python3 - "$REPO" "$event" <<'PY' >"$WORK/shell-$( [ "$event" = PreToolUse ] && echo pre || echo post ).json"
import json, sys
repo, event = sys.argv[1:]
print(json.dumps({"session_id": "hold", "cwd": repo, "hook_event_name": event, "tool_name": "Bash",
                  "tool_input": {"command": "make test"}, "tool_use_id": "toolu_shell"}))
PY
done
payload hold "$HELD" "$HOLD_P"
payload claim "$FREE" "$CLAIM_P"
payload hold "${PICK[2]}" "$DENY_P"
allow "$HOLD_P"
HOLD=$(agent_of "$HELD")
# One claim by "claim" to learn its name, then released: every timed run claims anew.
allow "$CLAIM_P"
CLAIM=$(agent_of "$FREE")
OTHER=$(agent_of "${PICK[2]}")
live() { board | python3 -c 'import json,sys; print(sum(e["liveness"] == "live" for e in json.load(sys.stdin)["board"]["entries"]))'; }
live_others() { board | python3 -c 'import json,sys; print(sum(e["liveness"] == "live" and e["focus"]["agent"] not in sys.argv[1:] for e in json.load(sys.stdin)["board"]["entries"]))' "$HOLD" "$CLAIM"; }
[ "$(live)" -eq 64 ] || { echo "team-claims.sh: expected 64 live sessions" >&2; "$BIN" focus list >&2; exit 1; }
# Released as the session itself (its shell's session id): another live session's claims are
# released only with --force, which would leave the session a notice to hear at its next call.
RELEASE="env CLAUDE_CODE_SESSION_ID=claim $BIN --agent $CLAIM focus release"
$RELEASE >/dev/null

# The change git diff lists: five files nobody holds, staged.
for p in "${STAGE[@]}"; do echo "bench change" >>"$p"; done
git add -- "${STAGE[@]}"
[ "$(git diff --cached --name-only | wc -l)" -eq 5 ] || { echo "team-claims.sh: expected 5 staged files" >&2; exit 1; }

# The answers, checked before timing.
check() { # $1: the hook's command up to --host (`git-mas gate`, `git-mas-hook`)
  local refs out
  # (a): allowed, claims the file, then released again.
  out=$($1 --host claude-code <"$CLAIM_P" 2>&1 >/dev/null)
  grep -q "$CLAIM claims $FREE" <<<"$out" || { echo "team-claims.sh: the claim did not claim: $out" >&2; exit 1; }
  $RELEASE >/dev/null
  # (b): allowed, and nothing written (the first call may renew the claim, if it is a minute old).
  allow "$HOLD_P"
  refs=$(git for-each-ref)
  out=$($1 --host claude-code <"$HOLD_P" 2>/dev/null)
  [ -z "$out" ] || { echo "team-claims.sh: $1 does not allow the edit of a held file: $out" >&2; exit 1; }
  [ "$refs" = "$(git for-each-ref)" ] ||
    { echo "team-claims.sh: $1: the edit of a held file wrote a record" >&2; diff <(echo "$refs") <(git for-each-ref) >&2; "$BIN" focus list >&2; exit 1; }
  # (c): denied, naming the holder.
  out=$($1 --host claude-code <"$DENY_P" 2>/dev/null)
  grep -q '"permissionDecision":"deny"' <<<"$out" && grep -q "$OTHER" <<<"$out" ||
    { echo "team-claims.sh: the edit of another's file was not denied naming $OTHER: $out" >&2; exit 1; }
}
check_shell() { # (d): the pre-tool hook keeps every file the others hold; the post-tool check says nothing
  local kept out
  allow "$SHELL_PRE"
  kept=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$(git rev-parse --git-common-dir)/mas/shell/$HOLD/manifest.json")
  [ "$kept" -ge $((2 * OTHERS)) ] || { echo "team-claims.sh: the shell call kept $kept files" >&2; exit 1; }
  out=$("$BIN" gate --host claude-code --post-tool <"$SHELL_POST" 2>&1)
  [ -z "$out" ] || { echo "team-claims.sh: the post-tool check said: $out" >&2; exit 1; }
  [ ! -e "$(git rev-parse --git-common-dir)/mas/shell/$HOLD" ] || { echo "team-claims.sh: the check left its files" >&2; exit 1; }
}
checks() {
  for b in "$HOOK" "$BIN gate" "git mas gate" ${BASE_BIN:+"$BASE_BIN gate"} ${STATIC_BIN:+"$STATIC_HOOK"}; do check "$b"; done
  check_shell
}
checks

records() { git rev-list --count "refs/mas/focus/$CLAIM" --; }
WARMUP=10
# Every command gets a --prepare (hyperfine takes one for all or one per command): only the claim
# rows' releases the claim.
CMDS=(
  -n "(a) claim of a new file" --prepare "$RELEASE" "sh -c '$HOOK --host claude-code < $CLAIM_P'"
  -n "(b) edit of a claimed file" --prepare true "sh -c '$HOOK --host claude-code < $HOLD_P'"
  -n "(b) the same, git-mas gate" --prepare true "sh -c '$BIN gate --host claude-code < $HOLD_P'"
  -n "(b) the same through git mas" --prepare true "sh -c 'git mas gate --host claude-code < $HOLD_P'"
  -n "(c) denied edit" --prepare true "sh -c '$HOOK --host claude-code < $DENY_P'"
  -n "(c) the same through git mas" --prepare true "sh -c 'git mas gate --host claude-code < $DENY_P'"
  -n "(d) post-tool check of a shell call" --prepare "sh -c '$HOOK --host claude-code < $SHELL_PRE'"
  "sh -c '$HOOK --host claude-code --post-tool < $SHELL_POST'"
  -n "(e) pre-tool of a shell call" --prepare "sh -c '$HOOK --host claude-code --post-tool < $SHELL_POST'"
  "sh -c '$HOOK --host claude-code < $SHELL_PRE'"
)
[ -z "${BASE_BIN:-}" ] || CMDS+=(
  -n "(a) claim of a new file, base build" --prepare "$RELEASE" "sh -c '$BASE_BIN gate --host claude-code < $CLAIM_P'"
  -n "(b) edit of a claimed file, base build" --prepare true "sh -c '$BASE_BIN gate --host claude-code < $HOLD_P'"
  -n "(c) denied edit, base build" --prepare true "sh -c '$BASE_BIN gate --host claude-code < $DENY_P'"
  -n "(e) pre-tool of a shell call, base build" --prepare "sh -c '$BASE_BIN gate --host claude-code --post-tool < $SHELL_POST'"
  "sh -c '$BASE_BIN gate --host claude-code < $SHELL_PRE'"
)
CMDS+=(
  -n "git diff --cached --name-only" --prepare true "sh -c 'git diff --cached --name-only < $HOLD_P'"
  -n "sh -c true < payload" --prepare true "sh -c 'true < $HOLD_P'"
)
CLAIM_ROWS=$((${BASE_BIN:+1} + 1))
run() { # $1: loose|packed
  local before after expected
  before=$(records)
  hyperfine -N --warmup $WARMUP --runs "${RUNS:-100}" --export-json "$SRC/bench/team-claims-$1.json" "${CMDS[@]}"
  # The last shell call's check, which the row after it would otherwise run.
  "$BIN" gate --host claude-code --post-tool <"$SHELL_POST" >/dev/null 2>&1
  after=$(records)
  # Every warm-up and timed run of a claim row claimed, and every prepare released: two records each.
  expected=$((2 * CLAIM_ROWS * (WARMUP + ${RUNS:-100})))
  [ $((after - before)) -eq $expected ] ||
    { echo "team-claims.sh: $((after - before)) records on $CLAIM's chain, expected $expected" >&2; exit 1; }
  # The sessions the timed rows call as ("hold", "claim") recorded hyperfine as their host process
  # (the nearest ancestor that is no shell), so their claims end with it; the 62 others' must not.
  [ "$(live_others)" -eq 62 ] || { echo "team-claims.sh: expected 62 other live sessions after the run" >&2; "$BIN" focus list >&2; exit 1; }
}
interleaved() { # $1: loose|packed
  local cmds=("git diff=git diff --cached --name-only<$HOLD_P"
    "(b) edit of a claimed file=$HOOK --host claude-code<$HOLD_P"
    "(c) denied edit=$HOOK --host claude-code<$DENY_P"
    "(b) edit, git-mas gate=$BIN gate --host claude-code<$HOLD_P"
    "(c) denied edit, git-mas gate=$BIN gate --host claude-code<$DENY_P"
    "(b) edit, through git mas=git mas gate --host claude-code<$HOLD_P"
    "(c) denied edit, through git mas=git mas gate --host claude-code<$DENY_P")
  [ -z "${BASE_BIN:-}" ] || cmds+=("(b) edit, base build=$BASE_BIN gate --host claude-code<$HOLD_P"
    "(c) denied edit, base build=$BASE_BIN gate --host claude-code<$DENY_P")
  [ -z "${STATIC_BIN:-}" ] || cmds+=("(b) edit, static git-mas-hook=$STATIC_HOOK --host claude-code<$HOLD_P"
    "(c) denied edit, static git-mas-hook=$STATIC_HOOK --host claude-code<$DENY_P")
  echo "interleaved, $1 refs (ratios to git diff):"
  JSON="$SRC/bench/team-claims-interleaved-$1.json" RUNS="${INTERLEAVED:-300}" WARMUP=10 python3 "$SRC/bench/interleave.py" "${cmds[@]}"
}
sizes() { # each binary's size
  for b in "$HOOK" "$BIN" ${BASE_BIN:+"$BASE_BIN"} ${STATIC_BIN:+"$STATIC_HOOK"}; do echo "size: $(stat -c %s "$b") bytes: $b"; done
}
sizes
run loose
interleaved loose
git gc -q
[ -z "$(find "$(git rev-parse --git-common-dir)/refs/mas" -type f)" ] || { echo "team-claims.sh: refs still loose after gc" >&2; exit 1; }
$RELEASE >/dev/null
checks
run packed
interleaved packed

if [ -n "${PERF:-}" ]; then
  # DWARF unwinding: the release build has no frame pointers.
  perf record -q --call-graph dwarf,16384 -F 2000 -o "$WORK/perf.data" -- \
    sh -c "for i in \$(seq 200); do $RELEASE >/dev/null; '$HOOK' --host claude-code < '$CLAIM_P'; done" >/dev/null 2>&1
  echo; echo "profile: 200 claims (and the releases between them), packed, git-mas, inclusive time by function"
  perf report -i "$WORK/perf.data" --comm git-mas --children --sort sym --percent-limit 3 --stdio -g none 2>/dev/null | grep '%' | head -40 || true
fi

python3 - "$SRC/bench" <<'PY'
import json, sys
d = sys.argv[1]
def load(name):
    return {x["command"]: (x["median"] * 1000, (x["user"] + x["system"]) * 1000) for x in json.load(open(f"{d}/{name}.json"))["results"]}
diff = "git diff --cached --name-only"
res = {s: load(f"team-claims-{s}") for s in ("loose", "packed")}
print("\n| | loose: median ms | ratio | CPU ms | CPU ratio | packed: median ms | ratio | CPU ms | CPU ratio |")
print("|---|---|---|---|---|---|---|---|---|")
for name in res["loose"]:
    cells = []
    for s in ("loose", "packed"):
        (w, c), (dw, dc) = res[s][name], res[s][diff]
        cells += [f"{w:.2f}", f"{w/dw:.2f}x", f"{c:.2f}", f"{c/dc:.2f}x"]
    print(f"| {name} | " + " | ".join(cells) + " |")
targets = {"(a) claim of a new file": 2.0, "(b) edit of a claimed file": 1.0, "(c) denied edit": 1.0}
targets_extra = {"(d) post-tool check of a shell call": 1.0, "(e) pre-tool of a shell call": 1.0}
targets_extra.update({f"{k}, base build": 1.0 for k in ("(e) pre-tool of a shell call",) if f"{k}, base build" in res["loose"]})
targets.update({f"{k}, base build": t for k, t in targets.items() if f"{k}, base build" in res["loose"]})
targets.update(targets_extra)
for s in ("loose", "packed"):
    dw = res[s][diff][0]
    for name, t in targets.items():
        g = res[s][name][0]
        print(f"{s}: {name}: {g/dw:.2f}x git diff (target <= {t}x: {'met' if g <= t * dw else 'NOT met'})")
PY

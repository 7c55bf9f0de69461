# Shared by the benchmark scripts (sourced, not run): tool checks and the hermetic scratch space.
#
#   need TOOL "how to install it"     exit with a message when TOOL is not on PATH
#   bench_scratch                     WORK: a fresh directory under ROOT (BENCH_DIR, default
#                                     target/bench), removed at exit unless KEEP is set; HOME, git
#                                     identity and config, and the key directory point into it
#   gate_repo                         REPO: $FILES generated files, $AGENTS agents a00… in the
#                                     committed roster, a published frame, one live focus per agent on
#                                     two files (PICK[2i], PICK[2i+1]), and five files nobody holds
#                                     changed and staged (STAGE); needs BIN, SRC, WORK; leaves the
#                                     shell in REPO
#   bench_binaries                    BIN (and BASE_BIN) as copies in WORK, made the same way
#   team_repo                         REPO: $FILES generated files in team mode (enforce), alice
#                                     the principal on the committed roster; needs BIN, SRC, WORK;
#                                     leaves the shell in REPO
#   init_generated                    a repository of the current directory's files, committed on
#                                     main, git's automatic maintenance in the foreground
#   edit_payload SESSION PATH OUT DIR  OUT: a Claude Code PreToolUse payload of session SESSION's
#                                     `Edit` of PATH (relative to the repository DIR; it replaces a
#                                     line that occurs once)
#   fixture_repo NAME…                REPO: a copy of tests/fixtures-repo committed on main, the
#                                     agents NAME… in its committed roster, and PRISTINE/RESET: a
#                                     copy of that state and the command that restores it (a
#                                     coordinate run leaves runs and worktrees behind); needs BIN,
#                                     SRC, WORK; leaves the shell in REPO
#
# Scratch space is under target/ by default: on this machine, file creation in /tmp measured ~13x
# slower than elsewhere on the same disk, which swamps both sides of a comparison.

need() {
  command -v "$1" >/dev/null 2>&1 || { echo "$(basename "$0"): '$1' is required but not installed ($2)" >&2; exit 1; }
}

bench_scratch() {
  ROOT=${BENCH_DIR:-$SRC/target/bench}
  mkdir -p "$ROOT"
  ROOT=$(cd "$ROOT" && pwd)
  WORK=$(mktemp -d -p "$ROOT")
  # KEEP=1 keeps the scratch repositories (for profiling by hand).
  if [ -n "${KEEP:-}" ]; then echo "scratch: $WORK"; else trap 'rm -rf "$WORK"' EXIT; fi
  export HOME=$WORK/home GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_MAS_KEY_DIR=$WORK/keys NO_COLOR=1
  export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid
  export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid
  mkdir -p "$HOME"
}

# BIN (and BASE_BIN, when set) copied into WORK/bin (WORK/base), each the same way, and pointed
# at the copies. A binary the linker has just written faults more pages per exec than a copy of
# it (measured: 353 against 317 page faults per gate, 3.64 against 3.19 ms, the same bytes), so
# a fresh build timed against an older copied one would look slower than it is.
bench_binaries() {
  mkdir -p "$WORK/bin"
  cp "$BIN" "$WORK/bin/git-mas"
  BIN=$WORK/bin/git-mas
  if [ -n "${BASE_BIN:-}" ]; then
    mkdir -p "$WORK/base"
    cp "$BASE_BIN" "$WORK/base/git-mas"
    BASE_BIN=$WORK/base/git-mas
  fi
}

# In the current directory: a repository of the files there, committed on main. git's automatic
# maintenance runs in the foreground: a detached `gc --auto` after the commit packs and deletes
# loose objects while a script copies the repository (cp: cannot stat …).
init_generated() {
  git init -q -b main && git config gc.autoDetach false && git config maintenance.autoDetach false
  git add . && git commit -qm "generated repository"
}

team_repo() {
  REPO=$WORK/repo
  python3 "$SRC/bench/genrepo.py" "$REPO" --files $FILES
  cd "$REPO"
  init_generated
  "$BIN" agent new alice >/dev/null 2>&1
  git add .mas/roster && git commit -qm "roster: alice"
  git config mas.agent alice
  git config mas.team true
  git config mas.gate enforce
  # The frame `git mas init --team` publishes: without it the first hook call publishes one.
  "$BIN" snapshot --publish >/dev/null
}

gate_repo() {
  REPO=$WORK/repo
  python3 "$SRC/bench/genrepo.py" "$REPO" --files $FILES
  cd "$REPO"
  init_generated
  AG=()
  for i in $(seq 0 $((AGENTS - 1))); do AG+=("$(printf 'a%02d' "$i")"); done
  for a in "${AG[@]}"; do "$BIN" agent new "$a" >/dev/null 2>&1; done
  git add .mas/roster && git commit -qm "roster: $AGENTS agents"

  # Two targets per agent, and five more files that nobody holds: the change to commit. Diagnostics
  # (one warning each) lift the 128 targets above the 4,096-target bound of the snapshot, where the
  # other 19,872 files, all equally recent, compete by name.
  mapfile -t PICK < <(git ls-files -- docs services config | awk 'NR % 61 == 0' | head -$((2 * AGENTS + 5)))
  [ "${#PICK[@]}" -eq $((2 * AGENTS + 5)) ] || { echo "$(basename "$0"): not enough files to pick from" >&2; exit 1; }
  for p in "${PICK[@]:0:$((2 * AGENTS))}"; do printf '{"path": "%s", "line": 1, "severity": "warning"}\n' "$p"; done >"$WORK/diagnostics.jsonl"
  STAGE=("${PICK[@]:$((2 * AGENTS)):5}")
  "$BIN" --agent a00 snapshot --diagnostics "$WORK/diagnostics.jsonl" --publish >/dev/null
  for i in "${!AG[@]}"; do
    "$BIN" --agent "${AG[$i]}" focus publish --ttl 24h --targets "${PICK[$((2 * i))]}" "${PICK[$((2 * i + 1))]}" >/dev/null 2>"$WORK/err" ||
      { cat "$WORK/err" >&2; exit 1; }
  done
  [ "$("$BIN" focus list --json | python3 -c 'import json,sys; print(sum(e["liveness"] == "live" for e in json.load(sys.stdin)["board"]["entries"]))')" -eq $AGENTS ] ||
    { echo "$(basename "$0"): expected $AGENTS live foci" >&2; "$BIN" focus list >&2; exit 1; }

  # The change: five files nobody holds, staged.
  for p in "${STAGE[@]}"; do echo "bench change" >>"$p"; done
  git add -- "${STAGE[@]}"
  [ "$(git diff --cached --name-only | wc -l)" -eq 5 ] || { echo "$(basename "$0"): expected 5 staged files" >&2; exit 1; }
}

fixture_repo() {
  REPO=$WORK/repo
  cp -r "$SRC/tests/fixtures-repo" "$REPO"
  cd "$REPO"
  git init -q -b main && git add . && git commit -qm fixture
  for a in "$@"; do "$BIN" agent new "$a" >/dev/null 2>&1; done
  git add .mas/roster && git commit -qm roster
  PRISTINE=$WORK/pristine
  RESET="rm -rf $REPO $REPO-mas && cp -a $PRISTINE $REPO"
}

edit_payload() {
  python3 - "$4" "$1" "$2" "$3" <<'PY'
import collections, json, sys
repo, session, rel, out = sys.argv[1:]
lines = open(f"{repo}/{rel}").read().splitlines()
count = collections.Counter(lines)
old = next(l for l in lines if l.strip() and count[l] == 1)
json.dump({"session_id": session, "transcript_path": "/dev/null", "cwd": repo, "permission_mode": "acceptEdits",
           "hook_event_name": "PreToolUse", "tool_name": "Edit",
           "tool_input": {"file_path": f"{repo}/{rel}", "old_string": old, "new_string": old + " (edited)",
                          "replace_all": False}, "tool_use_id": "toolu_bench"}, open(out, "w"))
PY
}

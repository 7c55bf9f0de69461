#!/usr/bin/env bash
# What one coordinate hop costs git-mas itself, with peers that answer at once.
#
#   bench/hop-cost.sh            # builds the release binary, prints hyperfine's table
#
# Three `cmd:` peers that read the prompt and reply DONE (they never propose, so each propose hop
# is asked once more: 6 hops per round). `coordinate` with --max-rounds 1 and with --max-rounds 4
# differ by 18 hops and nothing else (same start, worktrees and report); the peer process alone is
# timed beside them. Driver time per hop = (t4 - t1) / 18 - the peer's own time.
# Needs: hyperfine, git, cargo.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SRC/bench/common.sh"
need hyperfine "apt-get install hyperfine"
cd "$SRC"
[ -n "${BIN:-}" ] || { cargo build --release --quiet; BIN=$SRC/target/release/git-mas; }
bench_scratch
fixture_repo alice bob carol
# Every measured run starts from this state: runs and worktrees would otherwise pile up.
cp -a "$REPO" "$PRISTINE"
PEER="sh -c 'cat >/dev/null; echo DONE'"
AGENTS="alice=cmd:$PEER,bob=cmd:$PEER,carol=cmd:$PEER"
run() { echo "cd $REPO && $BIN --agent alice coordinate --goal g --agents \"$AGENTS\" --wait 0s --check true --json --max-rounds $1"; }
printf 'a prompt of the size a hop sends\n%.0s' $(seq 1 20) >"$WORK/prompt"
hyperfine --warmup 2 --runs "${RUNS:-10}" -i --prepare "$RESET" --export-json "$SRC/bench/hop-cost.json" \
  -n "coordinate, 1 round (6 hops)" "$(run 1)" \
  -n "coordinate, 4 rounds (24 hops)" "$(run 4)" \
  -n "the peer alone" "$PEER < $WORK/prompt"

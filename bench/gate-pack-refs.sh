#!/usr/bin/env bash
# Gate reads beside `git pack-refs`: 8 gate-calling agents make CALLS gate calls in all (10,000 by
# default), `git mas gate --paths src/money.rs` (held by another agent, so each call reads the whole
# board and blocks, exit 6), while a loop runs `git pack-refs --all` and the agents republish their
# foci round-robin (each publication writes its ref back as a loose file for the next pack to
# prune). Prints how many calls did not block, and how many of those failed closed because a ref
# could not be read. Before the fix in src/store/refs.rs (`RefFiles::list`), about 1 call in 320
# failed closed with "the focus board cannot be read: git: reading (unreadable ref)".
#
#   bench/gate-pack-refs.sh                    # release build, 10,000 calls
#   CALLS=2000 EXTRA=64 bench/gate-pack-refs.sh   # fewer calls, 64 more focus refs made loose after each pack
#   BIN=target/debug/git-mas bench/gate-pack-refs.sh  # an existing binary (no build)
#
# Exits 1 when any call failed. Needs: cargo (unless BIN is given), git, python3. Scratch space:
# target/bench/ (or $BENCH_DIR).
set -euo pipefail
CALLS=${CALLS:-10000} CALLERS=8 EXTRA=${EXTRA:-0}

. "$(dirname "$0")/common.sh"
need git "your package manager"
need python3 "apt-get install python3"

cd "$(dirname "$0")/.."
SRC=$PWD
if [ -n "${BIN:-}" ]; then
  BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
else
  need cargo "https://rustup.rs"
  cargo build --release --quiet --bin git-mas
  BIN=${CARGO_TARGET_DIR:-$SRC/target}/release/git-mas
fi
bench_scratch

# --- the repository: 8 agents, a frame, one focus each (a4 holds src/money.rs) --------------------
AG=(a0 a1 a2 a3 a4 a5 a6 a7)
fixture_repo "${AG[@]}"
"$BIN" --agent a0 snapshot --publish >/dev/null 2>&1
TARGETS=(src/config.rs src/error.rs src/lib.rs src/main.rs src/money.rs Cargo.toml src/ledger/mod.rs src/orders/mod.rs)
for i in "${!AG[@]}"; do
  "$BIN" --agent "${AG[$i]}" focus publish --ttl 24h --targets "${TARGETS[$i]}" >/dev/null 2>&1
done
HELD=$(git rev-parse refs/mas/focus/a4)
for i in $(seq 1 "$EXTRA"); do git update-ref "refs/mas/focus/z$i" "$HELD"; done
git for-each-ref --format='%(objectname) %(refname)' 'refs/mas/focus/z*' >"$WORK/extra-refs"

# --- the pack loop and the republishing agents ----------------------------------------------------
STOP=$WORK/stop
(
  while [ ! -e "$STOP" ] && [ -d "$WORK" ]; do  # ends with the scratch space too
    git pack-refs --all
    mkdir -p .git/refs/mas/focus
    while read -r oid ref; do echo "$oid" >.git/loose.tmp && mv .git/loose.tmp ".git/$ref"; done <"$WORK/extra-refs"
  done
) >/dev/null 2>&1 &
PACKER=$!
(
  n=0
  while [ ! -e "$STOP" ] && [ -d "$WORK" ]; do  # ends with the scratch space too
    i=$((n % 8)); n=$((n + 1))
    "$BIN" --agent "${AG[$i]}" focus publish --ttl 24h --targets "${TARGETS[$i]}" >/dev/null 2>&1 || true
  done
) &
PUBLISHER=$!

# --- the gate callers -------------------------------------------------------------------------------
PER=$((CALLS / CALLERS))
START=$(date +%s)
CALLER_PIDS=()
for c in $(seq 0 $((CALLERS - 1))); do
  # Each agent other than a4 touches a4's file; a4 touches a0's (src/config.rs).
  if [ "${AG[$c]}" = a4 ]; then path=src/config.rs; else path=src/money.rs; fi
  (
    for _ in $(seq 1 "$PER"); do
      code=0
      "$BIN" --agent "${AG[$c]}" gate --paths "$path" >/dev/null 2>"$WORK/err-$c" || code=$?
      echo "$code"
      [ "$code" -eq 6 ] || cat "$WORK/err-$c" >>"$WORK/errors"
    done >"$WORK/codes-$c"
  ) &
  CALLER_PIDS+=($!)
done
wait "${CALLER_PIDS[@]}"
touch "$STOP"
wait "$PACKER" "$PUBLISHER"
SECS=$(($(date +%s) - START))

TOTAL=$(cat "$WORK"/codes-* | wc -l)
FAILED=$(cat "$WORK"/codes-* | grep -vcx 6 || true)
UNREADABLE=$(grep -c "cannot be read" "$WORK/errors" 2>/dev/null || true)
echo "gate calls: $TOTAL by $CALLERS agents in ${SECS} s beside git pack-refs --all (extra loose refs: $EXTRA)"
echo "did not block: $FAILED (failed closed on an unreadable board: ${UNREADABLE:-0})"
if [ "$FAILED" -gt 0 ]; then
  sort "$WORK/errors" | uniq -c | sort -rn | head -5 >&2
  exit 1
fi

#!/usr/bin/env bash
# The exchange (`git mas exchange`, issue 43): how fast a claim made in one clone reaches another
# with no `git mas sync` typed, and what a hook costs with the exchanges running beside it.
#
#   bench/exchange.sh                 # prints the figures, writes bench/exchange.json
#   ROUNDS=100 BLOCKS=8 CALLS=100 bench/exchange.sh
#
# Two clones in team mode of a $FILES-file repository (default 20,000), served by `git daemon` on
# 127.0.0.1 (a LAN-like remote: loopback TCP, git's own protocol), each with its own principal.
# bench/exchange.py does the timing:
#
#   propagation   ROUNDS claims (default 60) in clone A, each by a new session on a new file,
#                 each after a random pause of up to 1 s; timed from the hook's answer until clone
#                 B's copy of the session's focus ref holds the claim (polled every 5 ms). The
#                 stated bound is 5 s.
#   hook          clone A's edit hook of a file its session holds (allowed, nothing written),
#                 call by call, in BLOCKS alternating blocks (default 6) of CALLS calls (default
#                 100): exchange off (mas.exchange false in both clones, no exchange process) and
#                 on (both clones' exchanges running, syncing every second). Goal: on no slower
#                 than off. Also each exchange's CPU time (its git children's included) over the
#                 propagation stage, as a share of one core.
#
# Needs: cargo, git (with `git daemon`), python3. Scratch space: target/bench/ (or $BENCH_DIR).
set -euo pipefail
FILES=${FILES:-20000} ROUNDS=${ROUNDS:-60} BLOCKS=${BLOCKS:-6} CALLS=${CALLS:-100}

. "$(dirname "$0")/common.sh"
need cargo "https://rustup.rs"
need git "your package manager"
need python3 "apt-get install python3"

cd "$(dirname "$0")/.."
SRC=$PWD
cargo build --release --locked --quiet --bin git-mas
TARGET=$(realpath "${CARGO_TARGET_DIR:-$SRC/target}")
BIN=$TARGET/release/git-mas
bench_scratch
bench_binaries
export PATH=$WORK/bin:$PATH

SEED=$WORK/seed
python3 "$SRC/bench/genrepo.py" "$SEED" --files "$FILES"
cd "$SEED"
init_generated
"$BIN" agent new alice >/dev/null 2>&1
"$BIN" agent new bob >/dev/null 2>&1
git add .mas/roster && git commit -qm "roster: alice, bob"

mkdir -p "$WORK/served"
git clone -q --bare "$SEED" "$WORK/served/team.git"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
git daemon --export-all --enable=receive-pack --reuseaddr --listen=127.0.0.1 --port="$port" \
  --base-path="$WORK/served" "$WORK/served" >/dev/null 2>&1 &
daemon=$!
cleanup() {
  # The exchanges end with their repositories (the next round finds them gone); end them now.
  for r in "$WORK/a" "$WORK/b"; do
    pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$r/.git/mas/exchange.json" 2>/dev/null || true)
    [ -n "$pid" ] && grep -q exchange "/proc/$pid/cmdline" 2>/dev/null && kill "$pid" 2>/dev/null || true
  done
  kill "$daemon" 2>/dev/null || true
  [ -n "${KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.05; done
url=git://127.0.0.1:$port/team.git
for c in a b; do
  git clone -q "$url" "$WORK/$c"
  git -C "$WORK/$c" config mas.agent "$([ $c = a ] && echo alice || echo bob)"
  git -C "$WORK/$c" config mas.team true
  git -C "$WORK/$c" config mas.gate enforce
  (cd "$WORK/$c" && "$BIN" snapshot --publish >/dev/null)
done

git -C "$WORK/a" ls-files -- docs services config | awk -v n=$((ROUNDS + 3)) 'NR % 37 == 0 && c++ < n' >"$WORK/picks"
[ "$(wc -l <"$WORK/picks")" -eq $((ROUNDS + 3)) ] || { echo "exchange.sh: not enough files to pick from" >&2; exit 1; }

python3 "$SRC/bench/exchange.py" "$BIN" "$WORK/a" "$WORK/b" "$WORK/picks" "$SRC/bench/exchange.json" \
  "$ROUNDS" "$BLOCKS" "$CALLS"

#!/usr/bin/env bash
# Sync at scale: `git mas sync` with REFS (default 10,000) refs under refs/mas/, beside a plain
# `git fetch` + `git push` of the same refs in the same hyperfine run (medians), through a real
# `git daemon` on 127.0.0.1 whose repository also holds BRANCHES branches (default 1,000) and as
# many tags, which a sync must not be sent. Rows, each as git-mas / plain git:
#
#   (a) first push: clone A holds REFS chains (one signed record each) the remote lacks. Before
#       every run (--prepare, not timed) the remote is restored without them and A's staging refs
#       are dropped. Plain: `git fetch origin '+refs/mas/*:refs/plain/*' && git push origin
#       'refs/mas/*:refs/mas/*'`.
#   (b) first fetch: clone B, without any refs/mas/*, takes all REFS from the remote. Before every
#       run B's refs/mas/* and staging refs are dropped. Plain: `git fetch origin
#       '+refs/mas/*:refs/mas/*' && git push origin 'refs/mas/*:refs/mas/*'`.
#   (c) one new record: A and the remote agree on REFS refs; before every run (not timed) A appends
#       one record to one of them. Both push that one and fetch the rest's state.
#   (d) nothing new: A and the remote agree; both ask and find nothing to do.
#
# Target (issue 28, item 4): each row <= 2.0 x plain git. The script also checks, from a packet
# trace of one sync, that the remote advertised refs/mas/* only (protocol v2 `ref-prefix`).
#
#   bench/sync-scale.sh                       # builds the release binary; REFS=10000 RUNS=10
#   GIT_MAS_BIN=target/release/git-mas REFS=2000 RUNS=5 bench/sync-scale.sh
#   BASE_BIN=/path/to/older/git-mas bench/sync-scale.sh   # adds that build's rows to the same run
#
# Needs: git (with `git daemon`), hyperfine, python3, cargo. Scratch: target/bench/ (or $BENCH_DIR).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
cd "$SRC"
. bench/common.sh
need git "apt-get install git"
need hyperfine "apt-get install hyperfine"
need python3 "apt-get install python3"
if [ -z "${GIT_MAS_BIN:-}" ]; then cargo build --release --quiet; fi
BIN=${GIT_MAS_BIN:-$SRC/target/release/git-mas}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
REFS=${REFS:-10000}
BRANCHES=${BRANCHES:-1000}
RUNS=${RUNS:-10}
bench_scratch
OUT=$SRC/bench/sync-scale.json

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The remote: main, BRANCHES branches and tags, no refs/mas/* (kept as TEMPLATE).
SERVED=$WORK/served TEMPLATE=$WORK/template.git
mkdir -p "$SERVED"
A=$WORK/a B=$WORK/b
cp -r tests/fixtures-repo "$A"
(
  cd "$A"
  git init -q -b main && git add . && git commit -qm fixture
  "$BIN" agent new alice >/dev/null 2>&1
  git add .mas/roster && git commit -qm roster
  for i in $(seq 1 "$BRANCHES"); do printf 'create refs/heads/topic-%05d HEAD\ncreate refs/tags/v%05d HEAD\n' "$i" "$i"; done |
    git update-ref --stdin
)
git init -q --bare -b main "$TEMPLATE"
git -C "$A" push -q "$TEMPLATE" 'refs/heads/*:refs/heads/*' 'refs/tags/*:refs/tags/*'
cp -a "$TEMPLATE" "$SERVED/remote.git"

port=$(free_port)
git daemon --export-all --enable=receive-pack --reuseaddr --listen=127.0.0.1 --port="$port" \
  --base-path="$SERVED" "$SERVED" >/dev/null 2>&1 &
DAEMON=$!
# shellcheck disable=SC2064
trap "kill $DAEMON 2>/dev/null; [ -n \"${KEEP:-}\" ] || rm -rf '$WORK'" EXIT
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.05; done
URL=git://127.0.0.1:$port/remote.git
git -C "$A" remote add origin "$URL"
git clone -q "$URL" "$B"

# REFS chains of one signed record each, written by git-mas itself.
echo "writing $REFS chains..." >&2
t0=$SECONDS
(cd "$A" && for i in $(seq -w 1 "$REFS"); do
  "$BIN" --agent alice record append --ref "refs/mas/shared/s$i" --kind note --payload "{\"n\":$((10#$i))}" >/dev/null
done)
echo "  in $((SECONDS - t0)) s" >&2
[ "$(git -C "$A" for-each-ref refs/mas/ | wc -l)" -eq "$REFS" ]

drop() { # drop DIR PREFIX...: delete every ref under the prefixes
  local dir=$1
  shift
  for p in "$@"; do git -C "$dir" for-each-ref --format='delete %(refname)' "$p"; done | git -C "$dir" update-ref --stdin
}
export -f drop
export A B SERVED TEMPLATE

row() { # row NAME PREPARE MAS PLAIN [BASE]
  local name=$1 prepare=$2 mas=$3 plain=$4 base=${5:-}
  local cmds=(-n "git mas sync" "$mas" -n "git fetch + git push" "$plain")
  [ -n "$base" ] && cmds+=(-n "base build's sync" "$base")
  hyperfine -N --style basic --warmup 1 --runs "$RUNS" ${prepare:+--prepare "$prepare"} \
    --export-json "$WORK/$name.json" "${cmds[@]}" >&2
}

MAS="$BIN -C $A sync origin"
BASE=${BASE_BIN:+$BASE_BIN -C $A sync origin}
PLAIN_A="sh -c 'git -C $A fetch -q origin +refs/mas/*:refs/plain/* && git -C $A push -q origin refs/mas/*:refs/mas/*'"

# (a) first push.
row a "bash -c 'rm -rf $SERVED/remote.git && cp -a $TEMPLATE $SERVED/remote.git && drop $A refs/mas-remote/ refs/plain/'" \
  "$MAS" "$PLAIN_A" "$BASE"
# (b) first fetch, by B (the remote now has every chain).
git -C "$A" push -q origin 'refs/mas/*:refs/mas/*'
row b "bash -c 'drop $B refs/mas/ refs/mas-remote/'" "$BIN -C $B sync origin" \
  "sh -c 'git -C $B fetch -q origin +refs/mas/*:refs/mas/* && git -C $B push -q origin refs/mas/*:refs/mas/*'" \
  "${BASE_BIN:+$BASE_BIN -C $B sync origin}"
# (c) one new record in A; (d) nothing new.
"$BIN" -C "$A" sync origin >/dev/null
git -C "$A" fetch -q origin '+refs/mas/*:refs/plain/*'
APPEND="$BIN -C $A --agent alice record append --ref refs/mas/shared/s$(printf "%0${#REFS}d" 1) --kind note --payload {}"
row c "$APPEND" "$MAS" "$PLAIN_A" "$BASE"
row d "" "$MAS" "$PLAIN_A" "$BASE"

# What the remote advertised to one sync's fetch.
drop "$A" refs/mas-remote/
GIT_TRACE_PACKET=$WORK/packets.txt "$BIN" -C "$A" sync origin >/dev/null
python3 - "$WORK" "$OUT" "$REFS" "$BRANCHES" "$RUNS" <<'PY'
import json, sys
work, out, refs, branches, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
adv = [l.split("fetch< ", 1)[1] for l in open(f"{work}/packets.txt") if "fetch< " in l and " refs/" in l]
others = [l for l in adv if " refs/mas/" not in l]
names = {"a": "first push of %d refs" % refs, "b": "first fetch of %d refs" % refs,
         "c": "one new record, %d refs in sync" % refs, "d": "nothing new, %d refs in sync" % refs}
rows = {}
print(f"| row | git mas sync (median s) | git fetch + git push (median s) | ratio |" + (" base build (s) |" if True else ""))
print("|---|---|---|---|---|")
for k, title in names.items():
    res = json.load(open(f"{work}/{k}.json"))["results"]
    med = {r["command"]: r["median"] for r in res}
    mas, plain = med["git mas sync"], med["git fetch + git push"]
    base = med.get("base build's sync")
    rows[k] = {"row": title, "mas": mas, "plain": plain, "ratio": mas / plain, "base": base}
    print(f"| {title} | {mas:.3f} | {plain:.3f} | {mas / plain:.2f} x | {'' if base is None else f'{base:.3f}'} |")
print(f"\nadvertised to sync's fetch: {len(adv)} refs, {len(others)} outside refs/mas/ "
      f"(the remote holds {branches} branches and {branches} tags)")
json.dump({"refs": refs, "branches": branches, "runs": runs, "rows": rows,
           "advertised": len(adv), "advertised_outside": len(others)}, open(out, "w"), indent=1)
bad = [k for k, r in rows.items() if r["ratio"] > 2.0]
if others:
    print("FAIL: refs outside refs/mas/ were advertised", file=sys.stderr); sys.exit(1)
if bad:
    print(f"target missed (> 2.0 x): {bad}", file=sys.stderr); sys.exit(2)
PY

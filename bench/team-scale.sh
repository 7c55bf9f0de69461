#!/usr/bin/env bash
# The team-size curve: what the gate, a claim, `git mas status` and a tally cost with 8, 64, 512
# and 1,000 live agents on the board (and LAPSED = 10,000 session agents whose claims lapsed, not
# yet pruned), on a 20,000-file repository in team mode, all in ONE hyperfine run (medians) beside
# `git diff --cached --name-only`. Rows, per level:
#
#   gate --staged   `git mas gate --staged` of five staged files nobody holds (the pre-commit gate)
#   edit hook       a Claude Code PreToolUse `Edit` of a file the session already holds: allowed,
#                   one read of the board, nothing written
#   claim           the same hook for a file nobody holds: the session claims it (a record
#                   appended under the claims lock); --prepare releases it before every run
#   status          `git mas status`
#   tally           `git mas tally` of a run of 8 agents (one proposal and one endorsement each):
#                   the same run at every level, so the row shows what the team's size adds to it
#
# The live agents are session agents spread over 20 principals (p00…p19, at most 50 each: under
# the per-principal cap of 64), two files claimed each; the lapsed ones are sessions of principal
# `old` whose 15-minute claims were published an hour ago. Their records are written by git-mas
# itself (`record append` of signed focus records: the same bytes a hook's claim writes), so that
# 11,000 chains take a minute, not the hour that 11,000 hook calls with growing boards would.
#
# Target (issue 28, item 3): each row at 1,000 live agents <= 2.0 x the same row at 8.
# Writes bench/team-scale.json and bench/team-scale.svg (the curve).
#
#   bench/team-scale.sh                   # builds the release binary; RUNS=30
#   PACKED=1 bench/team-scale.sh          # the same with every ref packed (git pack-refs --all)
#   LEVELS="8 64" LAPSED=100 FILES=2000 RUNS=3 GIT_MAS_BIN=target/debug/git-mas bench/team-scale.sh
#
# Needs: cargo, git, hyperfine, python3. Scratch: target/bench/ (or $BENCH_DIR).
set -euo pipefail
FILES=${FILES:-20000} LAPSED=${LAPSED:-10000} LEVELS=${LEVELS:-"8 64 512 1000"} RUNS=${RUNS:-30}
PRINCIPALS=20

. "$(dirname "$0")/common.sh"
need cargo "https://rustup.rs"
need git "your package manager"
need hyperfine "apt-get install hyperfine"
need python3 "apt-get install python3"
cd "$(dirname "$0")/.."
SRC=$PWD
if [ -z "${GIT_MAS_BIN:-}" ]; then cargo build --release --locked --quiet --bin git-mas; fi
BIN=$(realpath "${GIT_MAS_BIN:-${CARGO_TARGET_DIR:-$SRC/target}/release/git-mas}")
bench_scratch
export PATH=$(dirname "$BIN"):$PATH

BASE=$WORK/base
python3 "$SRC/bench/genrepo.py" "$BASE" --files "$FILES"
cd "$BASE"
init_generated
for a in alice old $(seq -f 'p%02g' 0 $((PRINCIPALS - 1))); do "$BIN" agent new "$a" >/dev/null 2>&1; done
git add .mas/roster && git commit -qm "roster"
git config mas.agent alice
git config mas.team true
git config mas.gate enforce
git config mas.claimTtl 24h

mapfile -t FILES_ALL < <(git ls-files -- docs services config)
NF=${#FILES_ALL[@]}
HELD=${FILES_ALL[1]} FREE=${FILES_ALL[3]}
STAGE=("${FILES_ALL[@]:5:5}")

payload() { edit_payload "$@"; } # session, repository-relative path, output file, repository
allow() { # $1: payload, $2: repository; the hook must allow (no output)
  local out
  out=$(cd "$2" && "$BIN" gate --host claude-code <"$1" 2>/dev/null)
  [ -z "$out" ] || { echo "team-scale.sh: not allowed: $1: $out" >&2; exit 1; }
}
board() { "$BIN" focus list --json; }
agent_of() { # $1: a file; the live agent holding it
  board | python3 -c 'import json,sys; print(next(e["focus"]["agent"] for e in json.load(sys.stdin)["board"]["entries"] if e["liveness"] == "live" and sys.argv[1] in e["focus"]["targets"]))' "$1"
}

# The frame (a hook would publish the same way on the first edit). The sessions "hold" and "claim"
# are made by the hook in each level's repository (a session seen in two checkouts is warned about).
"$BIN" --agent alice snapshot --publish >/dev/null
FRAME=$("$BIN" frame --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["hash"])')

# A run of 8 agents, one proposal and one endorsement each, for the tally row.
"$BIN" --agent alice run start --id bench --goal "benchmark run" --roster "$(seq -f 'p%02g' -s, 0 7)" --quorum 3 >/dev/null
tree() { printf '%08x%032x' "$1" 0; }
for i in $(seq 0 7); do
  a=$(printf 'p%02d' "$i") o=$(((i + 1) % 8))
  b=$(printf 'p%02d' "$o")
  meta="\"metadata\":{\"correlation_id\":\"bench\",\"epoch\":0,\"event_id\":\"$a-p\",\"source\":\"$a\"},\"pattern\":\"development\""
  "$BIN" --agent "$a" record append --kind proposal --ref "refs/mas/runs/bench/events/$a" \
    --payload "{\"at_ms\":$((1000 + i)),\"commit\":\"$(tree "$i")\",\"event\":{$meta,\"payload\":{\"digest\":\"$(tree "$i")\",\"kind\":\"external-bytes\",\"len\":100}}}" >/dev/null
done
for i in $(seq 0 7); do
  a=$(printf 'p%02d' "$i") o=$(((i + 1) % 8))
  meta="\"metadata\":{\"correlation_id\":\"bench\",\"epoch\":0,\"event_id\":\"$a-e\",\"source\":\"$a\"},\"pattern\":\"development\""
  "$BIN" --agent "$a" record append --kind endorsement --ref "refs/mas/runs/bench/events/$a" \
    --payload "{\"at_ms\":$((2000 + i)),\"commit\":\"$(tree "$o")\",\"event\":{$meta,\"payload\":{\"command\":\"true\",\"duration_ms\":5,\"exit_status\":0,\"kind\":\"tool-result\",\"output_digest\":\"sha256:00\",\"subject\":\"$(tree "$o")\"}},\"proposer\":\"$(printf 'p%02d' "$o")\"}" >/dev/null
done
"$BIN" tally bench --json | python3 -c 'import json,sys; t=json.load(sys.stdin); assert t["counters"]["applied"] == 16, t["counters"]'

# A focus record as a hook's claim writes it.
claim_record() { # $1: agent, $2: published_at, $3: ttl, $4…: targets
  local agent=$1 at=$2 ttl=$3
  shift 3
  local targets
  targets=$(printf '"%s",' "$@")
  "$BIN" --agent "$agent" record append --ref "refs/mas/focus/$agent" --kind focus \
    --payload "{\"frame\":\"$FRAME\",\"targets\":[${targets%,}],\"ttl_secs\":$ttl,\"published_at\":$at,\"claims\":true}" >/dev/null
}
# The reference level: the smallest, without any lapsed session (a fresh repository).
cp -a "$BASE" "$WORK/fresh"
echo "writing $LAPSED lapsed sessions..." >&2
t0=$SECONDS
hour_ago=$(($(date +%s) - 3600))
for i in $(seq 0 $((LAPSED - 1))); do
  claim_record "$(printf 'old.claude-%08x' "$i")" "$hour_ago" 900 "${FILES_ALL[$((50 + i % (NF - 50)))]}"
done
echo "  in $((SECONDS - t0)) s" >&2

# The staged change: five files nobody holds.
for p in "${STAGE[@]}"; do echo "bench change" >>"$p"; done
git add -- "${STAGE[@]}"

# One repository per level: the base plus N live sessions (the hook's "hold" and "claim" among
# them: N - 2 written here; "claim" is live while it claims).
CMDS=()
FIRST=${LEVELS%% *}
for n in $LEVELS fresh; do
  if [ "$n" = fresh ]; then
    R=$WORK/fresh n=$FIRST tag=fresh
  else
    R=$WORK/live-$n tag=$n
    cp -a "$BASE" "$R"
  fi
  now=$(date +%s)
  (cd "$R" && for i in $(seq 0 $((n - 3))); do
    p=$(printf 'p%02d' $((i % PRINCIPALS)))
    claim_record "$(printf '%s.claude-%08x' "$p" "$i")" "$now" 86400 "${FILES_ALL[$((50 + (2 * i) % (NF - 51)))]}" "${FILES_ALL[$((51 + (2 * i) % (NF - 51)))]}"
  done)
  live=$(cd "$R" && board | python3 -c 'import json,sys; b=json.load(sys.stdin)["board"]; print(sum(e["liveness"] == "live" for e in b["entries"]), len(b["entries"]), len(b["rejected"]))')
  echo "level $n: live, entries, rejected = $live" >&2
  [ "${live%% *}" -eq $((n - 2)) ] || { echo "team-scale.sh: expected $((n - 2)) live agents before the hook's sessions" >&2; exit 1; }
  payload hold "$HELD" "$WORK/hold-$tag.json" "$R"
  payload claim "$FREE" "$WORK/claim-$tag.json" "$R"
  allow "$WORK/hold-$tag.json" "$R"
  allow "$WORK/claim-$tag.json" "$R"
  CLAIM=$(cd "$R" && agent_of "$FREE")
  # Released as the session itself (its shell's session id): another live session's claims are
  # released only with --force, which would leave the session a notice to hear at its next call.
  (cd "$R" && CLAUDE_CODE_SESSION_ID=claim "$BIN" --agent "$CLAIM" focus release >/dev/null)
  (cd "$R" && "$BIN" gate --staged >/dev/null) || { echo "team-scale.sh: gate --staged refused at $n" >&2; exit 1; }
  # PACKED=1: the refs packed, as `git gc` leaves them (loose by default: each record's ref is a file).
  [ -z "${PACKED:-}" ] || git -C "$R" pack-refs --all
  CMDS+=(-n "gate --staged @$tag" --prepare true "$BIN -C $R gate --staged")
  CMDS+=(-n "edit hook @$tag" --prepare true "sh -c 'cd $R && $BIN gate --host claude-code < $WORK/hold-$tag.json'")
  CMDS+=(-n "claim @$tag" --prepare "env CLAUDE_CODE_SESSION_ID=claim $BIN -C $R --agent $CLAIM focus release" "sh -c 'cd $R && $BIN gate --host claude-code < $WORK/claim-$tag.json'")
  CMDS+=(-n "status @$tag" --prepare true "$BIN -C $R status")
  CMDS+=(-n "tally @$tag" --prepare true "$BIN -C $R tally bench")
done
CMDS+=(-n "git diff --cached --name-only" --prepare true "git -C $BASE diff --cached --name-only")
echo "load before timing: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
hyperfine -N --style basic --warmup 3 --runs "$RUNS" --export-json "$WORK/scale.json" "${CMDS[@]}" >&2
echo "load after timing: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

SUFFIX=${PACKED:+-packed}
python3 - "$WORK/scale.json" "$SRC/bench/team-scale$SUFFIX.json" "$SRC/bench/team-scale$SUFFIX.svg" "$LAPSED" "$RUNS" <<'PY'
import json, os, sys
src, out, svg, lapsed, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
res = {r["command"]: r["median"] for r in json.load(open(src))["results"]}
git = res["git diff --cached --name-only"]
rows = ["gate --staged", "edit hook", "claim", "status", "tally"]
levels = sorted({int(k.split("@")[1]) for k in res if "@" in k and not k.endswith("@fresh")})
table = {row: {n: res[f"{row} @{n}"] for n in levels} for row in rows}
fresh = {row: res[f"{row} @fresh"] for row in rows}
lo, hi = levels[0], levels[-1]
print(f"| row | {lo} live, no lapsed (ms) | " + " | ".join(f"{n} live (ms)" for n in levels)
      + f" | {hi} / {lo} | {hi} / {lo} without lapsed | {hi} live / git diff |")
print("|---|" + "---|" * (len(levels) + 4))
for row in rows:
    t = table[row]
    print(f"| {row} | {fresh[row] * 1000:.1f} | " + " | ".join(f"{t[n] * 1000:.1f}" for n in levels)
          + f" | {t[hi] / t[lo]:.2f} x | {t[hi] / fresh[row]:.2f} x | {t[hi] / git:.2f} x |")
print(f"\ngit diff --cached --name-only: {git * 1000:.1f} ms; {lapsed} lapsed sessions at every level but the first column; {runs} runs per row")
json.dump({"levels": levels, "lapsed": lapsed, "runs": runs, "git_diff_s": git, "median_s": table,
           "fresh_s": fresh}, open(out, "w"), indent=1)
# The curve: cost at each level over the cost at the first, per row, on a log-x axis.
import math
W, H, L, R, T, B = 640, 360, 60, 150, 30, 50
xmax, ymax = math.log10(hi), max(2.5, max(table[r][n] / table[r][lo] for r in rows for n in levels) * 1.1)
span = (xmax - math.log10(lo)) or 1.0
xs = lambda n: L + (math.log10(n) - math.log10(lo)) / span * (W - L - R)
ys = lambda v: H - B - v / ymax * (H - T - B)
colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]
parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         f'<text x="{L}" y="18" font-size="13">Cost at N live agents / cost at {lo} ({lapsed} lapsed sessions throughout; {"packed" if os.environ.get("PACKED") else "loose"} refs; medians of {runs})</text>']
for v in [0, 0.5, 1, 1.5, 2, 2.5, 3, 4, 5]:
    if v <= ymax:
        parts.append(f'<line x1="{L}" x2="{W - R}" y1="{ys(v):.1f}" y2="{ys(v):.1f}" stroke="{"#c00" if v == 2 else "#ddd"}"' + (' stroke-dasharray="4 3"' if v == 2 else '') + '/>')
        parts.append(f'<text x="{L - 8}" y="{ys(v) + 4:.1f}" text-anchor="end">{v:g}x</text>')
for n in levels:
    parts.append(f'<text x="{xs(n):.1f}" y="{H - B + 18}" text-anchor="middle">{n}</text>')
parts.append(f'<text x="{(L + W - R) / 2}" y="{H - 12}" text-anchor="middle">live agents on the board (log scale)</text>')
parts.append(f'<text x="{L + 4}" y="{ys(2) - 5:.1f}" fill="#c00">target: 2x</text>')
for i, row in enumerate(rows):
    pts = " ".join(f"{xs(n):.1f},{ys(table[row][n] / table[row][lo]):.1f}" for n in levels)
    parts.append(f'<polyline points="{pts}" fill="none" stroke="{colors[i]}" stroke-width="2"/>')
    for n in levels:
        parts.append(f'<circle cx="{xs(n):.1f}" cy="{ys(table[row][n] / table[row][lo]):.1f}" r="3" fill="{colors[i]}"/>')
    parts.append(f'<text x="{W - R + 4}" y="{T + 30 + 18 * i}" fill="{colors[i]}">{row}</text>')
parts.append("</svg>")
open(svg, "w").write("\n".join(parts) + "\n")
bad = [r for r in rows if table[r][hi] / table[r][lo] > 2.0]
if bad:
    print(f"target missed (> 2.0 x at {hi}): {bad}", file=sys.stderr); sys.exit(2)
PY

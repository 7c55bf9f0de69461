#!/usr/bin/env bash
# Snapshot benchmark: `git mas snapshot` over a 20,000-file repository with a real SCIP index
# (scip-typescript over a generated TypeScript project of 1,000 modules) and a SARIF log of 1,000
# results, beside `git status --porcelain` and a decode-only pass over the same index with the
# `scip` crate (examples/scip_decode.rs), measured in the same hyperfine run (medians); then the
# snapshot's peak memory (maximum resident set size, median of several runs).
#
#   bench/snapshot.sh         # prints a table, writes bench/snapshot.json
#   RUNS=30 MEM_RUNS=7 bench/snapshot.sh
#   PERF=1 bench/snapshot.sh  # also records a perf profile of the snapshot and prints its top
#
# Targets: snapshot <= 1.5 x (status + decode-only); peak memory <= 3 x index size + 64 MB.
#
# On a shared machine, run it as root under `nice -n -19 bench/snapshot.sh` so that other work
# (builds) disturbs the measurement less; BENCHMARKS.md says how each figure was taken.
#
# Needs: cargo, git, hyperfine, node and npm (scip-typescript is installed at a pinned version into
# the scratch space, never into the repository), python3 (generation), GNU time at /usr/bin/time
# (peak memory), and perf for PERF=1. Scratch space: target/bench/ (or $BENCH_DIR); the npm tools
# are kept in $BENCH_DIR/tools between runs.
set -euo pipefail
SCIP_TYPESCRIPT_VERSION=0.4.0
FILES=20000 MODULES=1000 SARIF_RESULTS=1000

. "$(dirname "$0")/common.sh"
need cargo "https://rustup.rs"
need git "your package manager"
need hyperfine "apt-get install hyperfine, or cargo install hyperfine"
need node "apt-get install nodejs"
need npm "apt-get install npm"
need python3 "apt-get install python3"
[ -x /usr/bin/time ] || { echo "bench/snapshot.sh: GNU time (/usr/bin/time) is required for peak memory (apt-get install time)" >&2; exit 1; }
[ -z "${PERF:-}" ] || need perf "apt-get install linux-perf"

cd "$(dirname "$0")/.."
SRC=$PWD
cargo build --release --quiet --bin git-mas --example scip_decode --example scip_symbols
BIN=$SRC/target/release/git-mas
DECODE=$SRC/target/release/examples/scip_decode
bench_scratch

# --- scip-typescript, pinned, in the scratch space ------------------------------------------------
TOOLS=$ROOT/tools/npm
SCIP_TS=$TOOLS/node_modules/.bin/scip-typescript
if [ ! -x "$SCIP_TS" ] ||
  [ "$(node -p "require('$TOOLS/node_modules/@sourcegraph/scip-typescript/package.json').version")" != "$SCIP_TYPESCRIPT_VERSION" ]; then
  mkdir -p "$TOOLS"
  [ -f "$TOOLS/package.json" ] || echo '{"private": true}' >"$TOOLS/package.json"
  npm install --prefix "$TOOLS" --no-audit --no-fund --silent "@sourcegraph/scip-typescript@$SCIP_TYPESCRIPT_VERSION"
fi

# --- the repository, its index and its diagnostics --------------------------------------------------
REPO=$WORK/repo
python3 "$SRC/bench/genrepo.py" "$REPO" --files $FILES --ts-modules $MODULES \
  --sarif "$REPO/results.sarif" --sarif-results $SARIF_RESULTS
cd "$REPO"
init_generated
echo "indexing $MODULES TypeScript modules with scip-typescript $SCIP_TYPESCRIPT_VERSION ..."
"$SCIP_TS" index --no-progress-bar --output index.scip >/dev/null
INDEX_BYTES=$(stat -c %s index.scip)
[ "$INDEX_BYTES" -ge 10000000 ] || { echo "bench/snapshot.sh: index.scip is only $INDEX_BYTES bytes (< 10 MB)" >&2; exit 1; }
"$DECODE" index.scip
[ "$(git ls-files | wc -l)" -eq $FILES ] || { echo "bench/snapshot.sh: expected $FILES tracked files" >&2; exit 1; }
[ -z "$(git status --porcelain)" ] || { echo "bench/snapshot.sh: the working tree is not clean" >&2; exit 1; }
SNAPSHOT="$BIN snapshot --scip index.scip --diagnostics results.sarif"
$SNAPSHOT --json | python3 -c '
import json, sys
s = json.load(sys.stdin)["snapshot"]
print("snapshot:", len(s["targets"]), "targets; sources", s["sources"], "; skipped", s["skipped"])'

# --- time -----------------------------------------------------------------------------------------
# BASE_BIN=path/to/an/older/git-mas adds that build's snapshot to the same run (before/after).
EXTRA=()
[ -z "${BASE_BIN:-}" ] || EXTRA=(-n "git mas snapshot, base build" "$BASE_BIN snapshot --scip index.scip --diagnostics results.sarif")
if [ -n "${BASE_BIN:-}" ]; then
  cmp <($SNAPSHOT --json) <("$BASE_BIN" snapshot --scip index.scip --diagnostics results.sarif --json) ||
    { echo "bench/snapshot.sh: this build's snapshot differs from the base build's" >&2; exit 1; }
  echo "snapshot --json: byte-identical to the base build's"
fi
# The target-name parser against the scip crate's, on every symbol of this index.
"$SRC/target/release/examples/scip_symbols" index.scip
hyperfine -N --warmup 3 --runs "${RUNS:-20}" --export-json "$SRC/bench/snapshot.json" \
  -n "git mas snapshot" "$SNAPSHOT" "${EXTRA[@]}" \
  -n "git status --porcelain" "git status --porcelain" \
  -n "scip_decode (decode-only)" "$DECODE index.scip"

# --- peak memory ----------------------------------------------------------------------------------
RSS=() DECODE_RSS=()
for _ in $(seq 1 "${MEM_RUNS:-5}"); do
  /usr/bin/time -f %M -o "$WORK/rss" $SNAPSHOT >/dev/null 2>&1
  RSS+=("$(tail -1 "$WORK/rss")")
  /usr/bin/time -f %M -o "$WORK/rss" "$DECODE" index.scip >/dev/null 2>&1
  DECODE_RSS+=("$(tail -1 "$WORK/rss")")
done
echo "decode-only peak RSS (KiB): ${DECODE_RSS[*]}"

# --- profile (opt-in) -----------------------------------------------------------------------------
if [ -n "${PERF:-}" ]; then
  # DWARF unwinding: the release build has no frame pointers. Inclusive time per function; with
  # LTO much is inlined (a build with CARGO_PROFILE_RELEASE_DEBUG=line-tables-only shows more).
  perf record -q --call-graph dwarf,16384 -F 1000 -o "$WORK/perf.data" -- $SNAPSHOT >/dev/null 2>&1
  perf report -i "$WORK/perf.data" --children --sort sym --percent-limit 3 --stdio -g none 2>/dev/null | grep '%' | head -40 || true
fi

python3 - "$SRC/bench/snapshot.json" "$INDEX_BYTES" "${RSS[@]}" <<'PY'
import json, statistics, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
med = lambda n: r[n]["median"] * 1000
index_mib = int(sys.argv[2]) / 2**20
rss_mb = statistics.median(int(k) for k in sys.argv[3:]) / 1024
# CPU time (user + system, mean): a second view that a busy machine distorts less than wall time.
cpu = lambda n: (r[n]["user"] + r[n]["system"]) * 1000
s, st, d = med("git mas snapshot"), med("git status --porcelain"), med("scip_decode (decode-only)")
cs, cst, cd = cpu("git mas snapshot"), cpu("git status --porcelain"), cpu("scip_decode (decode-only)")
print(f"\n| command | median (ms) | ratio | CPU user+sys (ms) | CPU ratio |\n|---|---|---|---|---|")
print(f"| git mas snapshot --scip index.scip --diagnostics results.sarif | {s:.1f} | {s/(st+d):.2f}x (status + decode-only) | {cs:.1f} | {cs/(cst+cd):.2f}x |")
if "git mas snapshot, base build" in r:
    b, cb = med("git mas snapshot, base build"), cpu("git mas snapshot, base build")
    print(f"| base build's snapshot | {b:.1f} | {b/(st+d):.2f}x | {cb:.1f} | {cb/(cst+cd):.2f}x |")
print(f"| git status --porcelain | {st:.1f} | | {cst:.1f} | |")
print(f"| scip_decode index.scip (decode-only) | {d:.1f} | | {cd:.1f} | |")
print(f"\nindex.scip: {index_mib:.1f} MiB; snapshot peak RSS (median of {len(sys.argv) - 3}): {rss_mb:.1f} MiB "
      f"(runs: {', '.join(f'{int(k)/1024:.1f}' for k in sys.argv[3:])})")
limit = 3 * index_mib + 64
print(f"time target (<= 1.5x status + decode-only): {'met' if s <= 1.5 * (st + d) else 'NOT met'} ({s/(st+d):.2f}x)")
print(f"memory target (<= 3 x index + 64 MiB = {limit:.0f} MiB): {'met' if rss_mb <= limit else 'NOT met'}")
PY

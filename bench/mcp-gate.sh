#!/usr/bin/env bash
# MCP gate benchmark: on the 20,000-file repository with 64 agents, a published frame and 64 live
# foci (common.sh gate_repo), a warm `gate` tool call's round trip over stdio to `git mas mcp`
# (bench/mcp-client.py: request written until the response line is read; the median of CALLS calls
# after WARMUP) beside the `git mas gate --paths P` process (hyperfine, median), in the same run; and
# the server's resident memory (VmRSS) after its first call and after 1,000.
#
#   bench/mcp-gate.sh                 # prints the figures, writes bench/mcp-gate.json
#   RUNS=200 CALLS=900 bench/mcp-gate.sh
#
# Targets (issue 16): the tool call <= 0.3 x the process; VmRSS after 1,000 calls <= 2 x after the
# first. P is a file nobody holds (allowed).
#
# Needs: cargo, git, hyperfine, python3. BIN overrides the binary (default: a release build here).
set -euo pipefail
FILES=20000 AGENTS=64
RUNS=${RUNS:-100} WARMUP=${WARMUP:-99} CALLS=${CALLS:-900}

. "$(dirname "$0")/common.sh"
need cargo "https://rustup.rs"
need git "your package manager"
need hyperfine "apt-get install hyperfine, or cargo install hyperfine"
need python3 "apt-get install python3"

cd "$(dirname "$0")/.."
SRC=$PWD
if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet --bin git-mas
  BIN=$SRC/target/release/git-mas
fi
bench_scratch
gate_repo
cd "$REPO"
P=${STAGE[0]}
"$BIN" --agent a00 gate --paths "$P" >/dev/null 2>"$WORK/err" || { cat "$WORK/err" >&2; echo "bench/mcp-gate.sh: the gate does not allow $P" >&2; exit 1; }

hyperfine -N --warmup 5 --runs "$RUNS" --export-json "$WORK/process.json" \
  -n "git mas gate --paths P" "$BIN --agent a00 gate --paths $P" >&2
python3 "$SRC/bench/mcp-client.py" "$BIN" a00 "$P" "$WARMUP" "$CALLS" >"$WORK/tool.json"

python3 - "$WORK/process.json" "$WORK/tool.json" "$SRC/bench/mcp-gate.json" <<'PY'
import json, os, sys
process = json.load(open(sys.argv[1]))["results"][0]
tool = json.load(open(sys.argv[2]))
load = os.getloadavg()
out = {"process_median_s": process["median"], "process_runs": len(process["times"]),
       "tool": tool, "ratio": tool["median_s"] / process["median"],
       "rss_ratio": tool["rss_last_kib"] / tool["rss_first_kib"], "loadavg": load}
json.dump(out, open(sys.argv[3], "w"), indent=2)
print(f"git mas gate --paths P (process, median of {out['process_runs']}): {process['median'] * 1e3:.2f} ms")
print(f"gate tool call over stdio (median of {tool['calls']} after {tool['warmup']} warm-up): {tool['median_s'] * 1e3:.2f} ms")
print(f"ratio: {out['ratio']:.3f} (target <= 0.3)")
print(f"server VmRSS: {tool['rss_first_kib']} KiB after the first call, {tool['rss_last_kib']} KiB after {tool['total_calls']}: {out['rss_ratio']:.2f}x (target <= 2)")
print(f"load average during the run: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
PY

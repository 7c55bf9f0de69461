#!/usr/bin/env bash
# MCP gate benchmark: on the 20,000-file repository with 64 agents, a published frame and 64 live
# foci (common.sh gate_repo), a warm `gate` tool call's round trip over stdio to `git mas mcp`
# (bench/mcp-client.py: request written until the response line is read; the median of CALLS calls
# after WARMUP) beside the `git mas gate --paths P` process (hyperfine, median), in the same run; and
# the server's resident memory (VmRSS) after its first call and after 1,000.
#
#   bench/mcp-gate.sh                 # prints the figures, writes bench/mcp-gate.json
#   RUNS=200 CALLS=900 bench/mcp-gate.sh
#   BASE_BIN=/path/to/other/git-mas bench/mcp-gate.sh   # also BASE_BIN's, in the same run
#
# With BASE_BIN, a second build is measured beside BIN on the same repository: its process under
# the same hyperfine invocation, and its server in alternating rounds with BIN's (base, bin, bin,
# base: ROUNDS pairs, default 2), each round WARMUP + CALLS calls on a fresh server; the tool
# figure of each build is the mean of its rounds' medians, and the ratio is BIN / BASE_BIN.
#
# Targets: the tool call <= 0.3 x the process; VmRSS after 1,000 calls <= 2 x after the
# first. P is a file nobody holds (allowed).
#
# Needs: cargo, git, hyperfine, python3. BIN overrides the binary (default: a release build here).
set -euo pipefail
FILES=20000 AGENTS=64
RUNS=${RUNS:-100} WARMUP=${WARMUP:-99} CALLS=${CALLS:-900} ROUNDS=${ROUNDS:-2}

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

if [ -z "${BASE_BIN:-}" ]; then
  hyperfine -N --warmup 5 --runs "$RUNS" --export-json "$WORK/process.json" \
    -n "git mas gate --paths P" "$BIN --agent a00 gate --paths $P" >&2
  python3 "$SRC/bench/mcp-client.py" "$BIN" a00 "$P" "$WARMUP" "$CALLS" >"$WORK/tool.json"
else
  "$BASE_BIN" --agent a00 gate --paths "$P" >/dev/null 2>"$WORK/err" || { cat "$WORK/err" >&2; echo "bench/mcp-gate.sh: BASE_BIN's gate does not allow $P" >&2; exit 1; }
  hyperfine -N --warmup 5 --runs "$RUNS" --export-json "$WORK/process.json" \
    -n "git mas gate --paths P" "$BIN --agent a00 gate --paths $P" \
    -n "base: git mas gate --paths P" "$BASE_BIN --agent a00 gate --paths $P" >&2
  : >"$WORK/rounds.jsonl"
  for round in $(seq 1 "$ROUNDS"); do
    if [ $((round % 2)) -eq 1 ]; then order="base bin"; else order="bin base"; fi
    for which in $order; do
      if [ "$which" = base ]; then b=$BASE_BIN; else b=$BIN; fi
      python3 "$SRC/bench/mcp-client.py" "$b" a00 "$P" "$WARMUP" "$CALLS" |
        python3 -c 'import json,sys; t=json.load(sys.stdin); t["build"]=sys.argv[1]; t["round"]=int(sys.argv[2]); print(json.dumps(t))' "$which" "$round" >>"$WORK/rounds.jsonl"
    done
  done
  python3 - "$WORK/rounds.jsonl" "$WORK/tool.json" "$WORK/base-tool.json" <<'PY'
import json, sys
rounds = [json.loads(l) for l in open(sys.argv[1])]
for build, path in (("bin", sys.argv[2]), ("base", sys.argv[3])):
    mine = [r for r in rounds if r["build"] == build]
    out = dict(mine[-1])
    out["median_s"] = sum(r["median_s"] for r in mine) / len(mine)
    out["round_medians_s"] = [r["median_s"] for r in mine]
    json.dump(out, open(path, "w"))
PY
fi

python3 - "$WORK/process.json" "$WORK/tool.json" "$SRC/bench/mcp-gate.json" "$WORK/base-tool.json" <<'PY'
import json, os, sys
results = json.load(open(sys.argv[1]))["results"]
process = results[0]
tool = json.load(open(sys.argv[2]))
load = os.getloadavg()
out = {"process_median_s": process["median"], "process_runs": len(process["times"]),
       "tool": tool, "ratio": tool["median_s"] / process["median"],
       "rss_ratio": tool["rss_last_kib"] / tool["rss_first_kib"], "loadavg": load}
base = None
if len(results) > 1 and os.path.exists(sys.argv[4]):
    base = json.load(open(sys.argv[4]))
    out["base"] = {"process_median_s": results[1]["median"], "tool": base,
                   "ratio": base["median_s"] / results[1]["median"]}
    out["tool_ratio_to_base"] = tool["median_s"] / base["median_s"]
    out["process_ratio_to_base"] = process["median"] / results[1]["median"]
json.dump(out, open(sys.argv[3], "w"), indent=2)
rounds = lambda t: f" (rounds: {', '.join(f'{m * 1e3:.3f}' for m in t['round_medians_s'])} ms)" if "round_medians_s" in t else ""
print(f"git mas gate --paths P (process, median of {out['process_runs']}): {process['median'] * 1e3:.2f} ms")
print(f"gate tool call over stdio (median of {tool['calls']} after {tool['warmup']} warm-up): {tool['median_s'] * 1e3:.3f} ms{rounds(tool)}")
print(f"ratio: {out['ratio']:.3f} (target <= 0.3)")
print(f"server VmRSS: {tool['rss_first_kib']} KiB after the first call, {tool['rss_last_kib']} KiB after {tool['total_calls']}: {out['rss_ratio']:.2f}x (target <= 2)")
if base is not None:
    print(f"base: process {results[1]['median'] * 1e3:.2f} ms, tool call {base['median_s'] * 1e3:.3f} ms{rounds(base)}, VmRSS {base['rss_first_kib']} -> {base['rss_last_kib']} KiB")
    print(f"bin / base: tool call {out['tool_ratio_to_base']:.3f}, process {out['process_ratio_to_base']:.3f}")
print(f"load average during the run: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
PY

#!/usr/bin/env python3
"""A small stdio MCP client for bench/mcp-gate.sh: starts `BIN --agent AGENT mcp` in the current
directory, calls the `gate` tool on PATH WARMUP times, then CALLS times, timing each round trip
(request written to the server's stdin until its response line is read), and reads the server's
VmRSS after the first call and after the last. Prints one JSON object.

    mcp-client.py BIN AGENT PATH WARMUP CALLS
"""
import json
import statistics
import subprocess
import sys
import time

bin_, agent, path, warmup, calls = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
server = subprocess.Popen([bin_, "--agent", agent, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL)
next_id = 0


def request(method, params):
    global next_id
    next_id += 1
    server.stdin.write((json.dumps({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params}) + "\n").encode())
    server.stdin.flush()
    while True:
        line = server.stdout.readline()
        if not line:
            sys.exit("mcp-client.py: the server closed its stdout")
        message = json.loads(line)
        if message.get("id") == next_id:
            return message


def rss_kib():
    with open(f"/proc/{server.pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "mcp-gate-bench", "version": "1"}})
server.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
server.stdin.flush()
gate = {"name": "gate", "arguments": {"paths": [path]}}
first = request("tools/call", gate)
structured = first["result"].get("structuredContent", {})
if first["result"].get("isError") or structured.get("outcome") != "ok":
    sys.exit(f"mcp-client.py: the gate tool did not allow {path}: {json.dumps(first)}")
rss_first = rss_kib()
for _ in range(warmup):
    request("tools/call", gate)
times = []
for _ in range(calls):
    start = time.perf_counter()
    reply = request("tools/call", gate)
    times.append(time.perf_counter() - start)
    if reply["result"].get("isError"):
        sys.exit(f"mcp-client.py: a gate call failed: {json.dumps(reply)}")
rss_last = rss_kib()
server.stdin.close()
server.wait()
print(json.dumps({"calls": calls, "warmup": warmup, "total_calls": 1 + warmup + calls,
                  "median_s": statistics.median(times), "mean_s": statistics.mean(times),
                  "min_s": min(times), "rss_first_kib": rss_first, "rss_last_kib": rss_last}))

#!/usr/bin/env python3
"""The exchange's two figures, for bench/exchange.sh.

1. Propagation: a session of clone A claims a file (its hook answers), and clone B's copy of the
   session's focus ref is polled (`git rev-parse`, every 5 ms) until it holds the claim. ROUNDS
   claims, each by a new session on a new file, with a random pause (0-1 s) before each so that
   claims fall at every phase of the exchanges' one-second rounds. Timed from the hook's answer.
2. The hook beside it: session "hold"'s edit of a file it holds (allowed, nothing written) in
   clone A, timed call by call, in BLOCKS alternating blocks of CALLS calls: exchange off
   (`mas.exchange false` in both clones, no exchange process) and on (both clones' exchanges
   running). Medians and p99 of each; and over stage 1, each exchange's CPU time (with its git
   children's) per second, as a share of one core.

usage: exchange.py BIN A B PICKS_FILE OUT_JSON ROUNDS BLOCKS CALLS
"""
import json, os, random, statistics, subprocess, sys, time

BIN, A, B, PICKS, OUT = sys.argv[1:6]
ROUNDS, BLOCKS, CALLS = (int(x) for x in sys.argv[6:9])
picks = open(PICKS).read().split()


def payload(repo, session, rel):
    lines = open(f"{repo}/{rel}").read().splitlines()
    old = next(l for l in lines if l.strip() and lines.count(l) == 1)
    return json.dumps({"session_id": session, "transcript_path": "/dev/null", "cwd": repo,
                       "hook_event_name": "PreToolUse", "tool_name": "Edit",
                       "tool_input": {"file_path": f"{repo}/{rel}", "old_string": old,
                                      "new_string": old + " (edited)", "replace_all": False}})


def hook(repo, body):
    t = time.perf_counter()
    out = subprocess.run([BIN, "gate", "--host", "claude-code"], input=body.encode(), cwd=repo,
                         capture_output=True)
    took = time.perf_counter() - t
    if out.returncode != 0 or b'"deny"' in out.stdout:
        sys.exit(f"hook refused: {out.stdout!r} {out.stderr!r}")
    return took


def focus_refs(repo):
    out = subprocess.run(["git", "for-each-ref", "--format=%(refname) %(objectname)", "refs/mas/focus/"],
                         cwd=repo, capture_output=True, text=True, check=True).stdout
    return dict(line.split() for line in out.splitlines())


def tip(repo, ref):
    out = subprocess.run(["git", "rev-parse", "-q", "--verify", ref], cwd=repo, capture_output=True, text=True)
    return out.stdout.strip() or None


def state(repo):
    try:
        return json.load(open(f"{repo}/.git/mas/exchange.json"))
    except (OSError, ValueError):
        return None


def alive(pid):
    try:
        cmd = open(f"/proc/{pid}/cmdline", "rb").read()
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return False
    return b"exchange" in cmd and stat[stat.rfind(")") + 2] not in "ZX"


def cpu(pid):
    try:
        f = open(f"/proc/{pid}/stat").read()
    except OSError:
        return 0.0
    fields = f[f.rfind(")") + 2:].split()
    # utime, stime, and its waited-for children's (the git processes of each round).
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / os.sysconf("SC_CLK_TCK")


def exchange(on):
    for repo in (A, B):
        subprocess.run(["git", "config", "mas.exchange", "true" if on else "false"], cwd=repo, check=True)
    for repo in (A, B):
        st = state(repo)
        if not on:
            if st and alive(st["pid"]):
                os.kill(st["pid"], 15)
                while alive(st["pid"]):
                    time.sleep(0.01)
            continue
        if st and alive(st["pid"]) and st.get("ended") is None:
            continue
        before = st["started_at"] if st else 0
        hook(repo, payload(repo, "poke", picks[-1 if repo == A else -2]))
        deadline = time.time() + 10
        while True:
            st = state(repo)
            if st and alive(st["pid"]) and st["rounds"] >= 1 and (st["started_at"] != before or before == 0):
                break
            if time.time() > deadline:
                sys.exit(f"no exchange started in {repo}")
            time.sleep(0.02)
    return [state(r)["pid"] for r in (A, B)] if on else []


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


pids = exchange(True)
c0, t0 = sum(cpu(p) for p in pids), time.perf_counter()
lat = []
for i in range(ROUNDS):
    rel = picks[i]
    time.sleep(random.random())
    before = focus_refs(A)
    hook(A, payload(A, f"prop-{i}", rel))
    answered = time.perf_counter()
    new = {r: v for r, v in focus_refs(A).items() if before.get(r) != v}
    if len(new) != 1:
        sys.exit(f"expected one new claim, got {new}")
    (ref, value), = new.items()
    while tip(B, ref) != value:
        if time.perf_counter() - answered > 30:
            sys.exit(f"{ref} did not reach B in 30 s")
        time.sleep(0.005)
    lat.append(time.perf_counter() - answered)
alive_all = all(alive(p) for p in pids)
cpu_share = (sum(cpu(p) for p in pids) - c0) / (time.perf_counter() - t0) / len(pids) if alive_all else None

hold = picks[ROUNDS]
body = payload(A, "hold", hold)
hook(A, body)  # claims it
times = {"off": [], "on": []}
for b in range(BLOCKS):
    on = b % 2 == 1
    exchange(on)
    for _ in range(CALLS):
        times["on" if on else "off"].append(hook(A, body))
exchange(False)

ms = lambda s: round(s * 1000, 2)
result = {
    "propagation_ms": {"n": len(lat), "median": ms(statistics.median(lat)), "p99": ms(pct(lat, 99)),
                       "max": ms(max(lat)), "min": ms(min(lat))},
    "hook_ms": {k: {"n": len(v), "median": ms(statistics.median(v)), "p99": ms(pct(v, 99))} for k, v in times.items()},
    # Over the propagation stage: each exchange's CPU time (its git children's included) per
    # second of wall time, per clone.
    "exchange_cpu_share_of_one_core_per_clone": round(cpu_share, 4) if cpu_share is not None else None,
}
result["hook_ratio_on_off"] = {
    "median": round(result["hook_ms"]["on"]["median"] / result["hook_ms"]["off"]["median"], 3),
    "p99": round(result["hook_ms"]["on"]["p99"] / result["hook_ms"]["off"]["p99"], 3),
}
json.dump(result, open(OUT, "w"), indent=2)
print(json.dumps(result, indent=2))

#!/usr/bin/env python3
"""Interleaved A/B timing. Each argument is NAME=COMMAND[<FILE] (COMMAND split like a shell
would, no shell run; <FILE feeds FILE on stdin). Every round runs each command once, in a
shuffled order, so drift and neighbours' load fall on all alike. Prints each command's median wall
time (spawn to reap), CPU (user+sys from wait4) and page faults (minor+major, from wait4), and the
wall ratio to the first command with a bootstrap 95% interval. This process is every command's
parent, so a git-mas hook sees one host process throughout, as under a real host."""
import os, sys, time, statistics, json, random, shlex, shutil
runs = int(os.environ.get("RUNS", "300")); warm = int(os.environ.get("WARMUP", "20"))
cmds = []
for a in sys.argv[1:]:
    name, _, cmd = a.partition("=")
    cmd, _, inp = cmd.partition("<")
    argv = shlex.split(cmd); argv[0] = shutil.which(argv[0]) or argv[0]
    cmds.append((name, argv, inp.strip() or "/dev/null"))
def once(argv, inp):
    fd = os.open(inp, os.O_RDONLY); null = os.open("/dev/null", os.O_WRONLY)
    t0 = time.perf_counter_ns()
    pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, fd, 0), (os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)])
    _, status, ru = os.wait4(pid, 0)
    t1 = time.perf_counter_ns()
    os.close(fd); os.close(null)
    return (t1 - t0) / 1e6, (ru.ru_utime + ru.ru_stime) * 1e3, ru.ru_minflt + ru.ru_majflt
for _ in range(warm):
    for _, argv, inp in cmds: once(argv, inp)
wall = {c[0]: [] for c in cmds}; cpu = {c[0]: [] for c in cmds}; faults = {c[0]: [] for c in cmds}
order = list(range(len(cmds)))
for r in range(runs):
    random.Random(r).shuffle(order)
    for i in order:
        w, c, f = once(cmds[i][1], cmds[i][2]); wall[cmds[i][0]].append(w); cpu[cmds[i][0]].append(c); faults[cmds[i][0]].append(f)
ref = cmds[0][0]
def boot(a, b, n=1000):
    rnd = random.Random(1); rs = sorted(statistics.median(rnd.choices(a, k=len(a))) / statistics.median(rnd.choices(b, k=len(b))) for _ in range(n))
    return rs[int(n * 0.025)], rs[int(n * 0.975)]
for n, _, _ in cmds:
    mw, mc = statistics.median(wall[n]), statistics.median(cpu[n])
    lo, hi = boot(wall[n], wall[ref])
    print(f"{n:34s} wall {mw:7.2f} ms  {mw/statistics.median(wall[ref]):.3f}x (95% {lo:.3f}-{hi:.3f})  cpu {mc:6.2f} ms  {mc/statistics.median(cpu[ref]):.3f}x  faults {statistics.median(faults[n]):.0f}", flush=True)
if os.environ.get("JSON"):
    out = os.environ["JSON"]
    json.dump({"runs": runs, "commands": {c[0]: {"argv": c[1], "stdin": c[2], "wall_ms": wall[c[0]], "cpu_ms": cpu[c[0]], "faults": faults[c[0]]} for c in cmds}}, open(out + ".tmp", "w"))
    os.replace(out + ".tmp", out)  # whole or not at all

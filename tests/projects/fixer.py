"""The fix every scripted agent of the real-project tests applies (tests/projects/agent.sh).

    python3 fixer.py PROJECTS.json PROJECT slice FILE,FILE...   the injected bugs in those files
    python3 fixer.py PROJECTS.json PROJECT skill ID,ID...       the injected bugs with those ids

In the current directory (the agent's worktree), reverts every injected bug in scope that is still
there (its buggy text, occurring once, back to the original), and prints how many bugs in scope
are fixed in the worktree now: reverted now, or on an earlier hop.
"""
import json
import sys

table = json.load(open(sys.argv[1]))[sys.argv[2]]["bugs"]
mode, scope = sys.argv[3], [s for s in sys.argv[4].split(",") if s]
fixed = 0
for bug in table:
    if (bug["file"] if mode == "slice" else bug["id"]) not in scope:
        continue
    try:
        text = open(bug["file"]).read()
    except FileNotFoundError:
        continue
    if text.count(bug["buggy"]) == 1:
        open(bug["file"], "w").write(text.replace(bug["buggy"], bug["original"], 1))
        fixed += 1
    elif bug["original"] in text:
        fixed += 1
print(fixed)

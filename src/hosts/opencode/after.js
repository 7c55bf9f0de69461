  // After every tool (the shell's too), `@POST_COMMAND@` is sent the same fields, so
  // that what the tool changed in a file another agent holds is found; what it answers (its
  // reason or message) is added to the tool's output for the model.
  "tool.execute.after": async (input, output) => {
    const cwd = directory || worktree || process.cwd();
    const payload = JSON.stringify({ tool: input.tool, args: input.args || {}, cwd, sessionID: input.sessionID });
    const run = spawnSync("sh", ["-c", "@POST_COMMAND@"], { cwd, input: payload, encoding: "utf8", timeout: 10000 });
    let said = "";
    if (run.error || run.status !== 0) {
      const why = run.error ? run.error.message : `exit ${run.status}: ${(run.stderr || "").trim()}`;
      said = `git mas gate could not check what the tool changed: ${why}`;
    } else {
      const line = (run.stdout || "").trim().split("\n").pop();
      try {
        const answer = line ? JSON.parse(line) : {};
        said = (answer && (answer.reason || answer.message)) || "";
      } catch {
        said = `git mas gate gave no answer after the tool: ${line}`;
      }
    }
    if (said && output && typeof output.output === "string") output.output += `\n\n${said}`;
  },

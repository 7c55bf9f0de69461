// git-mas edit gate for OpenCode: written by `git mas hooks install --host opencode`,
// removed by `git mas hooks uninstall --host opencode`. Before a tool edits a file, runs
// `@COMMAND@` with @PAYLOAD_NOTE@ on stdin and reads its one JSON line:
// {"decision":"allow"} lets the edit through, {"decision":"deny","reason":...} refuses it.
// Anything else (the gate missing, crashed, timed out, or answering nonsense) refuses too.
import { spawnSync } from "node:child_process";

@ROUTING@@SESSION_END@
export const GitMasGate = async ({ directory, worktree } = {}) => ({
  "tool.execute.before": async (input, output) => {
    @GUARD@
    const cwd = directory || worktree || process.cwd();
    @RECORD@@PAYLOAD@
    const run = spawnSync("sh", ["-c", "@COMMAND@"], { cwd, input: payload, encoding: "utf8", timeout: 10000 });
    if (run.error || run.status !== 0) {
      const why = run.error ? run.error.message : `exit ${run.status}: ${(run.stderr || "").trim()}`;
      throw new Error(`git mas gate failed, so the edit is refused: ${why}`);
    }
    const line = (run.stdout || "").trim().split("\n").pop();
    let answer;
    try {
      answer = JSON.parse(line);
    } catch {
      throw new Error(`git mas gate gave no answer, so the edit is refused: ${line}`);
    }
    if (answer && answer.decision === "allow") return;
    if (answer && answer.decision === "deny") throw new Error(answer.reason || "git mas gate refused the edit");
    throw new Error(`git mas gate gave an unexpected answer, so the edit is refused: ${line}`);
  },
@AFTER@});

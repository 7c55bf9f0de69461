
// OpenCode has no session-end event: when this process exits, `@END_COMMAND@` ends each
// session it served (their claims are released), sent {"sessionID","cwd"}.
const SESSIONS = new Map();
process.on("exit", () => {
  for (const [sessionID, cwd] of SESSIONS) {
    const payload = JSON.stringify({ sessionID, cwd });
    spawnSync("sh", ["-c", "@END_COMMAND@"], { cwd, input: payload, encoding: "utf8", timeout: 10000 });
  }
});

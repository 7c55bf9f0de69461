//! The edit gate in the real hosts: each host's pre-tool hook runs `git mas gate --host`, and in
//! one scripted session the host is refused an edit of a file another agent holds (the refusal,
//! naming the holder, reaches the model; the file stays as it was) while a new file and an edit
//! inside an unheld function of a file whose other function is held go through.
//!
//! With `GIT_MAS_HOSTS_CAPTURE=DIR` set, every hook payload is also saved in DIR (the source of
//! `tests/fixtures/hook-payloads/`), the reading tools are hooked too, and so are the host's
//! post-tool and session-end events of its row in `git_mas::hosts::TABLE` (saved as
//! `<host>-<event>-….json`; opencode's plugin saves what `tool.execute.after` is given).

use super::claude::claude_env;
use super::codex::codex_env;
use super::copilot::copilot_env;
use super::gemini::gemini_env;
use super::opencode::opencode_env;
use super::*;
use crate::json::frame::FrameOut;
use git_mas::hosts::Host;
use git_mas::hosts::hooks;
use git_mas::hosts::worktree;
use git_mas::peers::Wiring;

/// A worktree given the edit hook and nothing else.
const GATE: Wiring = Wiring { edit_gate: true, mcp: false };
use serde_json::json;

/// The file bob holds whole.
const HELD: &str = "src/report.rs";
/// The file whose `g` carol holds and whose `f` nobody does.
const PAIR: &str = "src/pair.rs";
const PAIR_TEXT: &str = "pub fn f() -> u32 {\n    1\n}\n\npub fn g() -> u32 {\n    2\n}\n";
/// The new file.
const FRESH: &str = "src/fresh.rs";
/// A second name of the held file (a hard link): the held file too.
const ALIAS: &str = "src/alias.rs";
/// The gate's own ground: the roster.
const ROSTER: &str = ".mas/roster";

/// The command a hook runs: `git-mas-hook --host HOST` (as installed), or under `GIT_MAS_HOSTS_CAPTURE` a
/// script that saves the payload first.
fn gate_command(bench: &Bench, host: &str) -> String {
    match std::env::var_os("GIT_MAS_HOSTS_CAPTURE") {
        None => format!("git-mas-hook --host {host}"),
        Some(dir) => {
            let script = bench.team.env.root().join("capture.sh");
            let text = format!(
                "f={}/{host}-$(date +%s%N)-$$.json\ncat > \"$f\"\nexec git-mas-hook --host {host} < \"$f\"\n",
                Path::new(&dir).display()
            );
            std::fs::write(&script, text).unwrap();
            format!("sh {}", script.display())
        }
    }
}

fn write_json(path: &Path, value: &serde_json::Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(value).unwrap()).unwrap();
}

/// Installs `host`'s edit hook in `worktree` with `git mas hooks install --host` (project scope)
/// and keeps its files out of the proposal through the exclude file. Under
/// `GIT_MAS_HOSTS_CAPTURE` the installed command becomes the capturing script (and opencode's
/// reading tools are hooked too).
pub fn install_edit_gate(bench: &Bench, host: &str, worktree: &Path) {
    let out = bench.team.ok(worktree, "alice", &["hooks", "install", "--host", host]);
    let gate = Host::from_name(host).unwrap();
    let scope = git_mas::hosts::Scope::Project(worktree.to_path_buf());
    let files = hooks::hook_files(gate, &scope, &git_mas::hosts::ProcessEnv).unwrap();
    for file in &files {
        assert!(file.path().exists(), "`hooks install --host {host}` wrote no {}:\n{out}", file.path().display());
        if std::env::var_os("GIT_MAS_HOSTS_CAPTURE").is_some() {
            let text = std::fs::read_to_string(file.path()).unwrap();
            std::fs::write(file.path(), capturing(bench, host, &text)).unwrap();
        }
    }
    let top = files[0].rel.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
    let common = PathBuf::from(bench.team.git(&["rev-parse", "--git-common-dir"]));
    let exclude = bench.team.repo.join(common).join("info/exclude");
    std::fs::create_dir_all(exclude.parent().unwrap()).unwrap();
    let mut text = std::fs::read_to_string(&exclude).unwrap_or_default();
    text.push_str(&format!("/{top}/\n"));
    std::fs::write(&exclude, text).unwrap();
}

/// `text` (a hook file, or a command line) with the gate command replaced by the capturing
/// script (opencode's plugin asking about its reading tools too), and the host's other events
/// hooked to a script that only saves their payload.
fn capturing(bench: &Bench, host: &str, text: &str) -> String {
    let gate = Host::from_name(host).unwrap();
    let command = hooks::gate_command(gate);
    // The pre-tool command only: the post-tool and session-end ones are replaced below.
    let text = text.replace(&format!("\"{command}\""), &format!("\"{}\"", gate_command(bench, host)));
    let text = match host {
        "opencode" => text.replace("if (READ_ONLY.has(input.tool)) return;", ""),
        _ => text,
    };
    let facts = gate.facts().hooks;
    let events: Vec<&str> = [facts.post_tool_event, facts.session_end_event].into_iter().flatten().collect();
    match host {
        // The inline hooks of the session's `-c` layer.
        "codex" if text.contains("hooks.PreToolUse=") => {
            let more: Vec<String> = events
                .iter()
                .map(|e| {
                    let value = hooks::codex_inline_hooks(&save_command(bench, host, e), ".*");
                    format!("-c {}", hooks::shell_word(&format!("hooks.{e}={value}")))
                })
                .collect();
            text.replacen(
                "--dangerously-bypass-hook-trust",
                &format!("--dangerously-bypass-hook-trust {}", more.join(" ")),
                1,
            )
        }
        "opencode" => {
            let save = save_command(bench, host, "tool.execute.after");
            text.replace(
                "\"tool.execute.after\": async (input, output) => {",
                &format!(
                    "\"tool.execute.after\": async (input, output) => {{\n    \
                     spawnSync(\"sh\", [\"-c\", {save:?}], {{ input: JSON.stringify(input) }});\n    return;"
                ),
            )
        }
        // A hook file: the pre-tool entry, copied under each other event with the saving command.
        _ => match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(mut file) if file["hooks"][facts.event].is_array() => {
                let entry = file["hooks"][facts.event][0].clone();
                for e in events {
                    let saving = entry.to_string().replace(&gate_command(bench, host), &save_command(bench, host, e));
                    let mut saving: serde_json::Value = serde_json::from_str(&saving).unwrap();
                    // Every tool after it ran; a session's end whatever its reason (gemini
                    // compares a SessionEnd matcher with the reason as a plain string).
                    if let Some(entry) = saving.as_object_mut().filter(|o| o.contains_key("matcher")) {
                        if Some(e) == facts.post_tool_event {
                            entry.insert("matcher".into(), ".*".into());
                        } else {
                            entry.remove("matcher");
                        }
                    }
                    file["hooks"][e] = json!([saving]);
                }
                serde_json::to_string_pretty(&file).unwrap()
            }
            _ => text,
        },
    }
}

/// Under `GIT_MAS_HOSTS_CAPTURE`, a command that saves its stdin in that folder as
/// `<host>-<event>-….json` and answers nothing.
fn save_command(bench: &Bench, host: &str, event: &str) -> String {
    let dir = std::env::var_os("GIT_MAS_HOSTS_CAPTURE").unwrap();
    let script = bench.team.env.root().join(format!("save-{event}.sh"));
    let text = format!("cat > \"{}/{host}-{event}-$(date +%s%N)-$$.json\"\n", Path::new(&dir).display());
    std::fs::write(&script, text).unwrap();
    format!("sh {}", script.display())
}

/// Marks the `@opencode-ai/plugin` dependency of an opencode config folder (the project's
/// `.opencode`, the user's `~/.config/opencode`) as installed. Otherwise opencode runs `npm install
/// @opencode-ai/plugin@<its version>` in each (writing package.json, package-lock.json and
/// node_modules/) and waits for it before it loads any plugin: that needs the network and took 35 s
/// here. The git-mas plugin imports nothing.
pub(super) fn seed_opencode_dependencies(dir: &Path) {
    let version = "1.18.33";
    let deps = json!({ "@opencode-ai/plugin": version });
    write_json(&dir.join("package.json"), &json!({ "dependencies": deps }));
    write_json(
        &dir.join("package-lock.json"),
        &json!({ "lockfileVersion": 3, "packages": { "": { "dependencies": deps } } }),
    );
    std::fs::create_dir_all(dir.join("node_modules")).unwrap();
}

/// One session: read the two files, edit the held one, write a new one, edit `f`, write the held
/// file through its hard link, edit the roster, run a shell command.
fn edit_scenario(worktree: &Path, _check: &str) -> Scenario {
    let at = |p: &str| worktree.join(p).display().to_string();
    Scenario::single(
        vec![
            Step::Read { path: at(HELD) },
            Step::Read { path: at(PAIR) },
            Step::Edit {
                path: at(HELD),
                old: "use crate::config::Config;".into(),
                new: "use crate::config::Config; // alice".into(),
            },
            Step::Write { path: at(FRESH), content: "pub fn fresh() {}\n".into() },
            Step::Edit { path: at(PAIR), old: "    1\n".into(), new: "    10\n".into() },
            Step::Write { path: at(ALIAS), content: "// through the link\n".into() },
            Step::Edit { path: at(ROSTER), old: "alice ".into(), new: "mallory ".into() },
            Step::Shell("git mas whoami".into()),
        ],
        "Edited what I could.\nDONE",
    )
}

/// Team alice, bob, carol; alice's worktree with src/pair.rs committed and a frame published from
/// it; the gate enforcing; alice focused on `f`, bob holding src/report.rs, carol `g`; no hook yet.
fn gated_bench() -> Bench {
    let bench = Bench::with_agents(&["alice", "bob", "carol"], edit_scenario);
    let (team, wt) = (&bench.team, &bench.worktree);
    std::fs::write(wt.join(PAIR), PAIR_TEXT).unwrap();
    team.env.git_quiet_ok(wt, &["add", PAIR]);
    team.env.git_quiet_ok(wt, &["commit", "--quiet", "-m", "pair"]);
    team.git_quiet_ok(&["config", "mas.gate", "enforce"]);
    team.quiet_ok(wt, "alice", &["snapshot", "--publish"]);
    let frame: FrameOut = team.json_as(wt, "alice", &["frame", "--top", "4096"]);
    for symbol in ["src/pair.rs#f", "src/pair.rs#g"] {
        assert!(frame.top.iter().any(|t| t.id == symbol && t.lines.is_some()), "{symbol} is not in the frame");
    }
    team.quiet_ok(wt, "alice", &["focus", "publish", "--targets", "src/pair.rs#f"]);
    team.quiet_ok(wt, "bob", &["focus", "publish", "--targets", HELD]);
    team.quiet_ok(wt, "carol", &["focus", "publish", "--targets", "src/pair.rs#g"]);
    std::fs::hard_link(wt.join(HELD), wt.join(ALIAS)).unwrap();
    bench
}

/// The session's outcome: the held file refused with its holder named to the model and unchanged;
/// the new file and the edit of `f` on disk.
fn assert_gated(bench: &Bench, run: &HostRun, held_before: &str) {
    let context = || bench.context(run);
    let wt = &bench.worktree;
    let results = bench.tool_results();
    assert!(
        results.contains(&format!("{HELD} is held by bob")) && results.contains("Remedy"),
        "the refusal naming bob did not reach the model:\n{results}\n{}",
        context()
    );
    // Neither under its name nor through its hard link.
    assert_eq!(std::fs::read_to_string(wt.join(HELD)).unwrap(), held_before, "{}", context());
    assert!(
        results.matches(&format!("{HELD} is held by bob")).count() >= 2,
        "the write through the hard link was not refused naming bob:\n{results}\n{}",
        context()
    );
    // The roster is the gate's own ground.
    let roster = bench.team.env.git(wt, &["show", &format!("HEAD:{ROSTER}")]);
    assert_eq!(std::fs::read_to_string(wt.join(ROSTER)).unwrap().trim_end(), roster.trim_end(), "{}", context());
    assert!(results.contains("own ground") && results.contains("git mas agent new"), "{results}\n{}", context());
    assert_eq!(std::fs::read_to_string(wt.join(FRESH)).unwrap_or_default(), "pub fn fresh() {}\n", "{}", context());
    assert_eq!(
        std::fs::read_to_string(wt.join(PAIR)).unwrap(),
        PAIR_TEXT.replace("    1\n", "    10\n"),
        "{}",
        context()
    );
    assert!(!results.contains("pair.rs#g is held"), "the edit of f was refused:\n{results}");
    assert!(run.stdout.contains("DONE"), "{}", context());
}

type HostEnv = fn(&Path, &str) -> Vec<(&'static str, String)>;

/// The hook installed with `git mas hooks install --host` in alice's worktree, and the host run
/// with the preset's gated command line (opencode, which loads the project's plugin folder
/// itself, with its plain one).
fn gated_session(program: &str, name: &str, preset: Host, env: HostEnv) {
    host(program);
    let bench = gated_bench();
    install_edit_gate(&bench, name, &bench.worktree);
    let held_before = std::fs::read_to_string(bench.worktree.join(HELD)).unwrap();
    let extra = env(&bench.home(), &bench.server.url());
    let check = bench.check();
    let mut line = if name == "opencode" {
        preset.command_line(Some(&check))
    } else {
        preset.session_command_line(Some(&check), GATE, "alice")
    };
    if std::env::var_os("GIT_MAS_HOSTS_CAPTURE").is_some() {
        line = capturing(&bench, name, &line);
    }
    let line = enable_project_hooks(&bench, name, line);
    let run = bench.run(&line, &extra, "Edit the files as the scenario says.", Duration::from_secs(90));
    eprintln!("{name}: the gated session took {:?}", run.elapsed);
    assert_gated(&bench, &run, &held_before);
}

/// What a host needs beyond its hook file and its session's command line, which no install may
/// do for it; returns the command line to run.
fn enable_project_hooks(bench: &Bench, name: &str, line: String) -> String {
    if name == "opencode" {
        seed_opencode_dependencies(&bench.worktree.join(".opencode"));
        seed_opencode_dependencies(&bench.home().join(".config/opencode"));
    }
    line
}

#[test]
fn claude_code_is_refused_a_held_file_and_allowed_the_rest() {
    gated_session("claude", "claude-code", Host::ClaudeCode, claude_env);
}

/// The pre-tool hook cannot start (its program is not on PATH, exit 127): the real Claude Code
/// refuses every write of the session, the file nobody holds too, because the installed entry
/// says `onFailure: "block"`. Without it, Claude Code lets a failed hook's tool call through.
#[test]
fn claude_code_refuses_every_write_when_its_hook_cannot_start() {
    host("claude");
    let bench = gated_bench();
    install_edit_gate(&bench, "claude-code", &bench.worktree);
    let settings = bench.worktree.join(".claude/settings.json");
    let text = std::fs::read_to_string(&settings).unwrap();
    let entry = format!("\"{}\"", hooks::gate_command(Host::ClaudeCode));
    assert!(text.contains(&entry) && text.contains("\"onFailure\": \"block\""), "{text}");
    std::fs::write(&settings, text.replace(&entry, "\"no-such-git-mas-hook --host claude-code\"")).unwrap();
    let (held_before, pair_before) = (
        std::fs::read_to_string(bench.worktree.join(HELD)).unwrap(),
        std::fs::read_to_string(bench.worktree.join(PAIR)).unwrap(),
    );
    let line = Host::ClaudeCode.session_command_line(Some(&bench.check()), GATE, "alice");
    let extra = claude_env(&bench.home(), &bench.server.url());
    let run = bench.run(&line, &extra, "Edit the files as the scenario says.", Duration::from_secs(90));
    let context = || bench.context(&run);
    assert!(!bench.worktree.join(FRESH).exists(), "a new file was written past a hook that failed: {}", context());
    assert_eq!(std::fs::read_to_string(bench.worktree.join(PAIR)).unwrap(), pair_before, "{}", context());
    assert_eq!(std::fs::read_to_string(bench.worktree.join(HELD)).unwrap(), held_before, "{}", context());
    let results = bench.tool_results();
    assert!(
        results.contains("127") || results.contains("not found"),
        "the model is told why: {results}\n{}",
        context()
    );
}

#[test]
fn codex_is_refused_a_held_file_and_allowed_the_rest() {
    gated_session("codex", "codex", Host::Codex, codex_env);
}

#[test]
fn copilot_is_refused_a_held_file_and_allowed_the_rest() {
    gated_session("copilot", "copilot", Host::Copilot, copilot_env);
}

#[test]
fn opencode_is_refused_a_held_file_and_allowed_the_rest() {
    gated_session("opencode", "opencode", Host::OpenCode, opencode_env);
}

/// Installs opencode's plugin in alice's worktree as coordinate does (capturing under
/// `GIT_MAS_HOSTS_CAPTURE`), and seeds the user's own config folder, which opencode npm-installs
/// into whatever the project holds.
fn install_as_coordinate_does(bench: &Bench) {
    let wt = &bench.worktree;
    worktree::install_hook(Host::OpenCode, wt).unwrap();
    if std::env::var_os("GIT_MAS_HOSTS_CAPTURE").is_some() {
        let git_dir = bench.team.env.git(wt, &["rev-parse", "--absolute-git-dir"]);
        let plugin = Path::new(git_dir.trim()).join(hooks::OPENCODE_WORKTREE_PLUGIN);
        let text = std::fs::read_to_string(&plugin).unwrap();
        std::fs::write(&plugin, capturing(bench, "opencode", &text)).unwrap();
    }
    seed_opencode_dependencies(&bench.home().join(".config/opencode"));
}

/// As coordinate gates an opencode agent, with a model whose id has `gpt-` in it: opencode then
/// gives it `apply_patch` (`patchText`) in place of `edit` and `write`, and the gate reads the
/// patch.
#[test]
fn opencode_with_a_gpt_model_is_refused_a_patch_of_a_held_file() {
    host("opencode");
    let bench = gated_bench();
    let wt = &bench.worktree;
    install_as_coordinate_does(&bench);
    let held_before = std::fs::read_to_string(wt.join(HELD)).unwrap();
    let extra = opencode_env(&bench.home(), &bench.server.url());
    let config = bench.home().join("opencode.json");
    let text = std::fs::read_to_string(&config).unwrap().replace("mock-model", "gpt-5.5");
    std::fs::write(&config, text).unwrap();
    let line = Host::OpenCode.session_command_line(Some(&bench.check()), GATE, "alice");
    let run = bench.run(&line, &extra, "Edit the files as the scenario says.", Duration::from_secs(90));
    let advertised: Vec<String> = bench
        .server
        .turns()
        .first()
        .map(|b| server::tools(b).into_iter().map(|t| t.name).collect())
        .unwrap_or_default();
    assert!(advertised.iter().any(|t| t == "apply_patch") && !advertised.iter().any(|t| t == "edit"), "{advertised:?}");
    assert_gated(&bench, &run, &held_before);
}

/// As coordinate gates an opencode agent: the plugin in the worktree's git dir, named on the
/// command line, so opencode finds no `.opencode/` to npm-install into and the worktree holds
/// only the session's edits.
#[test]
fn opencode_in_an_agent_worktree_is_gated_with_no_npm_install() {
    host("opencode");
    let bench = gated_bench();
    let wt = &bench.worktree;
    install_as_coordinate_does(&bench);
    let held_before = std::fs::read_to_string(wt.join(HELD)).unwrap();
    let extra = opencode_env(&bench.home(), &bench.server.url());
    let line = Host::OpenCode.session_command_line(Some(&bench.check()), GATE, "alice");
    let run = bench.run(&line, &extra, "Edit the files as the scenario says.", Duration::from_secs(90));
    eprintln!("opencode: the gated session took {:?}", run.elapsed);
    assert_gated(&bench, &run, &held_before);
    assert!(!wt.join(".opencode").exists(), "opencode found a project config folder");
    let status = bench.team.env.git(wt, &["status", "--porcelain", "--untracked-files=all"]);
    assert_eq!(
        status.trim(),
        format!("M {PAIR}\n?? {ALIAS}\n?? {FRESH}"),
        "only the session's edits (and the bench's hard link) are in the worktree"
    );
}

#[test]
fn gemini_is_refused_a_held_file_and_allowed_the_rest() {
    gated_session("gemini", "gemini", Host::Gemini, gemini_env);
}

//! `git mas coordinate`'s preflight: the facts gathered here, the rules in
//! [`git_mas::coordinate::preflight`].
//!
//! Gathering writes nothing: the frame a development run focuses on is computed here (from the
//! goal as its task and the configured inputs) and published only when the run starts.

use crate::cli::context::Context;
use crate::cli::inputs::{InputArgs, read_inputs};
use git_mas::attention::frame::{self, InputFiles, TreeView};
use git_mas::attention::snapshot::Snapshot;
use git_mas::coordinate::preflight::{
    Item, Preflight, Program, base_item, find_program, is_executable, program, quorum_item,
};
use git_mas::devrun::slices::Coverage;
use git_mas::hosts::preset::{CommandSource, Wiring, resolve_command};
use git_mas::ops::land::commit::branch_worktrees;
use git_mas::peers::{PeerEntry, PeerSpec};
use git_mas::pool::check::check_command;
use std::path::Path;
use std::time::Duration;

/// How long a preset's CLI has to answer `--version`.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(20);

/// What a run needs, and whether it is there.
pub struct Gathered {
    /// Every check.
    pub preflight: Preflight,
    /// The frame a development run focuses on, when it could be computed.
    pub frame: Option<GoalFrame>,
}

/// The run's frame: the published frame when there is one, else a snapshot of the working tree
/// with the goal as its task and the configured inputs, to publish.
///
/// Decision (narrower than "publish the goal's frame when the goal is not the frame's task"): a
/// published frame is the team's shared frame, and publishing another makes every focus on it
/// stale — a person's or a session's hold on a file would stop holding while the run works. So
/// the driver publishes only when no frame is published; the preflight says when the frame's task
/// is not the goal.
pub struct GoalFrame {
    /// The snapshot.
    pub snapshot: Snapshot,
    /// Its hash.
    pub hash: String,
    /// Whether it is the published frame already.
    pub current: bool,
    /// Whether the goal is its task.
    pub of_goal: bool,
    /// What publishing it takes (the tree it was taken of, its inputs), when it is not current.
    pub publish: Option<(TreeView, InputFiles)>,
    /// What an aggregate run's goal concerns in it, when everything else holds (the plan covers
    /// it).
    pub coverage: Option<Coverage>,
}

/// What the run is.
pub struct Ask<'a> {
    /// The goal.
    pub goal: &'a str,
    /// The agents, in ring order.
    pub peers: &'a [PeerEntry],
    /// A development run (the roster, check, quorum, checkout and frame matter).
    pub development: bool,
    /// `--check`.
    pub check: Option<&'a str>,
    /// `--quorum`.
    pub quorum: Option<u32>,
    /// An aggregate run: its plan needs what the goal concerns (from the check's run on the base).
    pub aggregate: bool,
    /// `--check-timeout`: how long the check may run on the base.
    pub check_timeout: Duration,
}

/// Checks everything `ask` needs.
pub fn gather(ctx: &Context, ask: &Ask) -> Gathered {
    let mut p = Preflight::default();
    match ctx.caller() {
        Ok(c) => p.push(Item::ok("identity", format!("the driver signs as {}", c.name))),
        Err(e) => p.push(Item::missing(
            "identity",
            e.message(),
            e.hints().first().cloned().unwrap_or_else(|| "`git mas agent new <name>`".to_string()),
        )),
    }
    let store = match ctx.store() {
        Ok(s) => s,
        Err(e) => {
            p.push(Item::missing("repository", e.message(), "run it inside a git repository"));
            return Gathered { preflight: p, frame: None };
        }
    };
    if ask.development {
        roster(ctx, ask.peers, &mut p);
    }
    let check = check_command(store, ask.check, None);
    agents(ctx, ask.peers, check.as_deref(), &mut p);
    let mut frame = None;
    if ask.development {
        match &check {
            Some(c) => p.push(Item::ok("check", format!("`{c}` judges every proposal"))),
            None => p.push(Item::missing(
                "check",
                "no check command: every endorsement would fail",
                "git config mas.check '<the project's test command, e.g. python3 -m unittest or cargo test>' (or --check)",
            )),
        }
        let allow_self = git_mas::devrun::events::self_endorse_allowed(store);
        p.push(quorum_item(ask.peers.len(), ask.quorum, allow_self));
        checkout(store, &mut p);
        frame = goal_frame(ctx, ask.goal, &mut p);
    }
    // The check once on main, when everything else holds: a check that cannot run there, or that
    // stops before every suite ran, is refused now rather than failing every endorsement.
    let mut ran = None;
    if let (Some(c), true, true) = (&check, ask.development, p.passed()) {
        ran = base(store, c, ask.check_timeout, &mut p);
    }
    if let (Some(f), Some(base)) = (frame.as_mut(), &ran)
        && ask.aggregate
        && p.passed()
    {
        f.coverage = concerns(store, f, base.as_ref(), &mut p);
    }
    Gathered { preflight: p, frame }
}

/// The team's check run once on the base (the integration branch's tip; kept for the run's
/// differential endorsements), judged by [`base_item`]: `None` when there is no base, `Some(None)`
/// when the check could not be started at all.
fn base(
    store: &git_mas::store::Store,
    check: &str,
    timeout: Duration,
    p: &mut Preflight,
) -> Option<Option<git_mas::pool::check::CheckRun>> {
    let branch = store.integration_branch();
    let base = store.tip(&format!("refs/heads/{branch}")).ok().flatten()?;
    match git_mas::coordinate::coverage::base_check(store, base, check, Some(timeout)) {
        Ok(run) => {
            p.push(base_item(check, &branch, &run, timeout));
            Some(Some(run))
        }
        Err(e) => {
            p.push(Item::ok("base", format!("`{check}` could not run on {branch} ({e}): the plan does without it")));
            Some(None)
        }
    }
}

/// What the goal concerns for an aggregate run's plan: the team's check's run on the base (`ran`)
/// read for the files it names, the frame's named and erring files, their neighbours.
fn concerns(
    store: &git_mas::store::Store,
    f: &GoalFrame,
    ran: Option<&git_mas::pool::check::CheckRun>,
    p: &mut Preflight,
) -> Option<Coverage> {
    let branch = store.integration_branch();
    let base = store.tip(&format!("refs/heads/{branch}")).ok().flatten()?;
    let scip = match &f.publish {
        Some((_, files)) => files.scip.as_ref().map(|(_, b)| b.clone()),
        None => frame::current_frame_entry(store)
            .ok()
            .flatten()
            .and_then(|e| frame::frame_file(store, e.commit, "inputs/index.scip").ok().flatten()),
    };
    match git_mas::coordinate::coverage::coverage(store, base, &f.snapshot, ran, scip.as_deref()) {
        Ok(c) => Some(c),
        Err(e) => {
            p.push(Item::ok(
                "base",
                format!("what the goal concerns could not be read ({e}): the plan is dealt from the frame"),
            ));
            None
        }
    }
}

/// Every agent of a development run is on the roster with its key here.
fn roster(ctx: &Context, peers: &[PeerEntry], p: &mut Preflight) {
    let roster = match ctx.store().and_then(|s| s.roster().map_err(Into::into)) {
        Ok(r) => r,
        Err(e) => {
            p.push(Item::missing("roster", e.message(), "`git mas doctor` says what is wrong with .mas/roster"));
            return;
        }
    };
    for peer in peers {
        if roster.get(&peer.name).is_none() {
            p.push(Item::missing(
                "roster",
                format!(
                    "agent '{}' ({}) is not on the roster: in a development run every agent signs its own proposals and endorsements",
                    peer.name, peer.spec
                ),
                format!(
                    "name the peer after an agent on the roster (--agents <agent>={}), or create it: git mas agent new {} && git add .mas/roster && git commit -m 'agent {}'",
                    peer.spec, peer.name, peer.name
                ),
            ));
            continue;
        }
        match git_mas::identity::key::key_path(&peer.name) {
            Ok(path) if path.is_file() => {
                p.push(Item::ok("roster", format!("{} is on the roster, its key here", peer.name)))
            }
            Ok(path) => p.push(Item::missing(
                "roster",
                format!("{}'s key is not here ({}): it could not sign its work", peer.name, path.display()),
                format!(
                    "copy {}'s key to {} (`git mas agent new` wrote it where it was made)",
                    peer.name,
                    path.display()
                ),
            )),
            Err(e) => p.push(Item::missing("roster", e.to_string(), "set $GIT_MAS_KEY_DIR or $HOME")),
        }
    }
}

/// Every agent's program is there; a preset's CLI answers `--version`.
fn agents(ctx: &Context, peers: &[PeerEntry], check: Option<&str>, p: &mut Preflight) {
    let path = std::env::var_os("PATH");
    let cwd = ctx.cwd().ok();
    let lookup = |key: &str| ctx.store().ok().and_then(|s| s.config_string(key));
    // (peer, program path) of the presets to ask, in order.
    let mut probes = Vec::new();
    for peer in peers {
        let (line, preset) = match &peer.spec {
            PeerSpec::Builtin { kind } => {
                p.push(Item::ok("agent", format!("{} is git-mas's built-in {} peer", peer.name, kind.name())));
                continue;
            }
            PeerSpec::Cmd { command } => (command.clone(), None),
            // A preset's own command line runs its host's CLI, which must answer `--version`;
            // a line from git config is run as written, like a cmd: line.
            PeerSpec::Preset { preset } => match resolve_command(*preset, &peer.name, check, Wiring::default(), lookup)
            {
                (line, CommandSource::Default) => (line, Some(*preset)),
                (line, CommandSource::Config { .. }) => (line, None),
            },
        };
        let found = match program(&line) {
            Program::Opaque => {
                p.push(Item::ok(
                    "agent",
                    format!("{} runs `{}` (not looked up: shell syntax)", peer.name, short(&line)),
                ));
                continue;
            }
            Program::Named(name) => find_program(&name, path.as_deref()).ok_or(name),
            Program::Path(rel) => {
                let at = match &cwd {
                    Some(dir) if rel.is_relative() => dir.join(&rel),
                    _ => rel.clone(),
                };
                if is_executable(&at) { Ok(at) } else { Err(rel.display().to_string()) }
            }
        };
        match (found, preset) {
            (Err(name), Some(host)) => p.push(Item::missing(
                "agent",
                format!("{}: {} is not on PATH ({} runs `{}`)", peer.name, name, host.name(), short(&line)),
                format!(
                    "install {}'s CLI, or name its command with `git config mas.agent.{}.command '<line>'`",
                    host.name(),
                    peer.name
                ),
            )),
            (Err(name), None) => p.push(Item::missing(
                "agent",
                format!("{}: `{name}` is not found (its command is `{}`)", peer.name, short(&line)),
                format!("install {name}, or fix --agents {}=cmd:<command line>", peer.name),
            )),
            (Ok(exe), Some(_)) => probes.push((peer.name.clone(), exe)),
            (Ok(exe), None) => p.push(Item::ok("agent", format!("{} runs {}", peer.name, exe.display()))),
        }
    }
    // The presets' CLIs, asked all at once, each program once: two agents of one host share its
    // answer (two starts of one CLI at one instant can race on its own files: Gemini CLI was seen
    // to exit 52 for one of two).
    let mut programs: Vec<&std::path::PathBuf> = probes.iter().map(|(_, exe)| exe).collect();
    programs.sort();
    programs.dedup();
    let asked: Vec<(&std::path::PathBuf, Result<String, String>)> = std::thread::scope(|s| {
        let handles: Vec<_> = programs.iter().map(|exe| (*exe, s.spawn(move || answers_version(exe)))).collect();
        handles
            .into_iter()
            .map(|(exe, h)| (exe, h.join().unwrap_or_else(|_| Err("the probe panicked".to_string()))))
            .collect()
    });
    let answers = probes.iter().map(|(name, exe)| {
        let answer =
            asked.iter().find(|(e, _)| *e == exe).map_or_else(|| Err("not asked".to_string()), |(_, a)| a.clone());
        (name.clone(), answer)
    });
    for ((name, exe), (_, answer)) in probes.iter().zip(answers) {
        match answer {
            Ok(version) => p.push(Item::ok("agent", format!("{name} runs {} ({version})", exe.display()))),
            Err(why) => p.push(Item::missing(
                "agent",
                format!("{name}: {} does not answer `--version`: {why}", exe.display()),
                format!("run `{} --version` and fix what it says", exe.display()),
            )),
        }
    }
}

/// Runs `exe --version` with [`ANSWER_TIMEOUT`]: its first line, or why not.
fn answers_version(exe: &Path) -> Result<String, String> {
    use std::process::{Command, Stdio};
    let mut child = Command::new(exe)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let started = std::time::Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let mut out = String::new();
                if let Some(mut stdout) = child.stdout.take() {
                    use std::io::Read;
                    let _ = stdout.read_to_string(&mut out);
                }
                let first = out.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("").to_string();
                return if status.success() { Ok(first) } else { Err(format!("it exited with {status}")) };
            }
            Ok(None) if started.elapsed() >= ANSWER_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("no answer in {} s", ANSWER_TIMEOUT.as_secs()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// The integration branch exists, and every checkout of it can follow a landing.
fn checkout(store: &git_mas::store::Store, p: &mut Preflight) {
    let branch = store.integration_branch();
    let tip = match store.tip(&format!("refs/heads/{branch}")) {
        Ok(Some(t)) => t.to_string(),
        _ => {
            p.push(Item::missing(
                "checkout",
                format!("the integration branch {branch} has no commit: a landing has nothing to land on"),
                format!("git commit --allow-empty -m 'start' (on {branch}), or `git config mas.branch <branch>`"),
            ));
            return;
        }
    };
    match branch_worktrees(store, &branch, &tip, &tip) {
        Ok(list) => {
            let blocked: Vec<_> = list.iter().filter_map(|(path, why)| why.as_ref().map(|w| (path, w))).collect();
            if let Some((path, why)) = blocked.first() {
                p.push(Item::missing(
                    "checkout",
                    format!("{branch} is checked out at {} and a landing could not update it: {why}", path.display()),
                    format!("commit or stash its changes there (`git -C {} stash`)", path.display()),
                ));
            } else if list.is_empty() {
                p.push(Item::ok("checkout", format!("{branch} is not checked out: a landing moves the branch alone")));
            } else {
                p.push(Item::ok("checkout", format!("{branch}'s checkout is clean: a landing updates it")));
            }
        }
        Err(e) => p.push(Item::missing("checkout", e.to_string(), "`git mas doctor`")),
    }
}

/// The frame of the goal; a missing item when it cannot be computed.
fn goal_frame(ctx: &Context, goal: &str, p: &mut Preflight) -> Option<GoalFrame> {
    let computed = (|| -> Result<GoalFrame, crate::cli::error::CliError> {
        let store = ctx.store()?;
        // A published frame is the run's frame, whatever moved since: publishing another would
        // leave every focus on it stale.
        if let Some(f) = frame::current_frame(store)? {
            let of_goal = f.snapshot.inputs.task.as_deref() == Some(frame::task_id(goal).as_str());
            return Ok(GoalFrame {
                snapshot: f.snapshot,
                hash: f.hash,
                current: true,
                of_goal,
                publish: None,
                coverage: None,
            });
        }
        let inputs = InputArgs { task: Some(goal.to_string()), ..InputArgs::default() };
        let files = read_inputs(store, &inputs)?;
        let (snapshot, view) = frame::snapshot_now(store, &files)?;
        let hash = snapshot.frame_hash();
        Ok(GoalFrame { snapshot, hash, current: false, of_goal: true, publish: Some((view, files)), coverage: None })
    })();
    match computed {
        Ok(f) => {
            let n = f.snapshot.targets.len();
            let short = &f.hash[..f.hash.len().min(12)];
            p.push(Item::ok("frame", match (f.current, f.of_goal) {
                (false, _) => format!("frame {short} of the goal and the configured inputs ({n} targets) is published when the run starts"),
                (true, true) => format!("the published frame {short} ({n} targets) has the goal as its task"),
                (true, false) => format!("the published frame {short} ({n} targets) is kept, though its task is not the goal: publishing another would leave every focus on it stale"),
            }));
            Some(f)
        }
        Err(e) => {
            p.push(Item::missing(
                "frame",
                format!("the goal's frame cannot be computed: {}", e.message()),
                e.hints().first().cloned().unwrap_or_else(|| "`git mas snapshot --task '<goal>'` says why".to_string()),
            ));
            None
        }
    }
}

fn short(text: &str) -> String {
    let one = text.lines().next().unwrap_or("");
    if one.chars().count() > 60 { format!("{}…", one.chars().take(60).collect::<String>()) } else { one.to_string() }
}

//! `git mas status`: the one view of the team — the frame and whether the checkout moved on since,
//! every live agent and session with what it holds and how long, who waits on whom, deadlocks,
//! the runs in progress, what a crash left, and how refs/mas stands against the remote.
//!
//! Read-only: it reads the board (`refs/mas/focus/`), the current frame's record and its recorded
//! change list (not its snapshot), `git status`'s list of touched paths, the gate's denial log
//! ([`git_mas::attention::denials`]), the runs' definitions and records, what `git mas doctor`
//! looks at, and the remote's refs as the last sync fetched them (it does not talk to the remote);
//! it writes nothing but the caches every board reader keeps.

use crate::cli::commands::run::ListArgs;
use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::error::Kind;
use crate::cli::json::PhaseName;
use crate::cli::json::status::{
    Deadlock, StatusAgent, StatusConverge, StatusDebris, StatusExchange, StatusFrame, StatusGone, StatusLane,
    StatusOut, StatusRemote, StatusRunReleased,
};
use crate::cli::output::JsonFlag;
use crate::cli::{Done, Outcome};
use git_mas::attention::board::{Board, Liveness};
use git_mas::attention::claims::left;
use git_mas::attention::frame::Since;
use git_mas::attention::held_guard;
use git_mas::attention::{denials, focus_store, frame};
use git_mas::hosts::Host;
use git_mas::hosts::ProcessEnv;
use std::fmt::Write as _;
use std::time::SystemTime;

/// Show the team: the frame (and whether HEAD or the working tree moved on since), every live
/// agent and session with its claims and the time each has left, whom each waits on, deadlocks,
/// the development runs in progress (best-of-N or aggregate: proposals, endorsements, checks,
/// slices and the barrier, what keeps each from landing, which proposals cannot land together and
/// on which files), converge runs with no report yet, what a
/// crash left (stale locks, temporary files, interrupted landings: `git mas doctor --fix` clears
/// them), and how refs/mas stands against the remote (`mas.remote`, else origin) as of the last
/// `git mas sync`. A run's agents hold their claims until the run lands or is aborted, not for
/// the rest of their lease: status names each agent whose claims a run's end released.
///
/// "Waits on" comes from the gate's refusals of the last 30 minutes (a bounded log under the git
/// dir, `mas/denials.log`, not signed records), counted while the holder still holds the file. A
/// deadlock is two agents each refused a file the other holds: neither gets on by waiting, and
/// the refusal itself says so.
///
/// With --json: {now, frame: {hash, commit, publisher, published_at, since} | null, agents:
/// [{agent, host, claims, expires_at, last_activity, frame}], not_live, process_gone: [{agent,
/// claims}], released_by_run: [{agent, run, outcome: landed | aborted, claims}], waiting:
/// [{agent, holder, file, times, since, last}], deadlocks: [{a, b}], runs: [{id, phase, goal,
/// problem, class, slices: [{agent, files, status, detail}], barrier_holds, quorum, rounds,
/// max_rounds, proposals: [{agent, endorsers, checks_passed, checks_run, at_quorum, clashes: [{kind,
/// with, commit, paths}] (when any)}], leader, conflicts,
/// blocks_landing}], converging: [{id, class, goal, driver, peers, last}], debris: {problems,
/// stale_locks, stale_temp_files, interrupted, remedy},
/// remote: {name, fetched, same, ahead, behind, diverged, exchange: {running, off, state} | null}
/// | null, lanes: [{agent, glob, expires_at}], kept: [{ref, agent, file, commit}]}. `since` is `same`,
/// `head_moved` or `worktree_changed` (null when it cannot be told).
///
/// With --watch: the same view again whenever `refs/mas`, the index, the roster or the denial log
/// changes, or a claim lapses — nothing while nothing does. On a terminal each view replaces the
/// last; otherwise (and with --json, one object per line) each is printed after the last. Ctrl-C
/// stops it, leaving the terminal as it was.
#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// Show the view again on every change, until Ctrl-C.
    #[arg(long)]
    pub watch: bool,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// Runs `status`.
pub fn run(ctx: &mut Context, args: StatusArgs) -> Result<Outcome, CliError> {
    if args.watch {
        return watch(ctx, &args);
    }
    let done = status(ctx, &args)?;
    ctx.ui().emit(args.output, &done.value, human)?;
    Ok(done.outcome)
}

enum Signal {
    Changed,
    Stop,
}

/// What makes two views the same for `--watch` (times aside: a view is not drawn again because a
/// clock moved).
fn sameness(s: &StatusOut) -> String {
    let agents: Vec<(&str, &[String], &str)> =
        s.agents.iter().map(|a| (a.agent.as_str(), a.claims.as_slice(), a.frame.as_str())).collect();
    let waiting: Vec<(&str, &str, &str, usize)> =
        s.waiting.iter().map(|w| (w.agent.as_str(), w.holder.as_str(), w.file.as_str(), w.times)).collect();
    let runs: Vec<(&str, String)> = s.runs.iter().map(|r| (r.id.as_str(), r.phase.to_string())).collect();
    format!(
        "{:?}|{agents:?}|{}|{waiting:?}|{:?}|{runs:?}|{:?}",
        s.frame.as_ref().map(|f| &f.hash),
        s.not_live,
        s.deadlocks,
        s.debris.stale_locks
    )
}

/// `status --watch`.
fn watch(ctx: &mut Context, args: &StatusArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let common = store.common_dir().to_path_buf();
    let (tx, rx) = std::sync::mpsc::channel::<Signal>();
    let stop = tx.clone();
    ctrlc::set_handler(move || {
        let _ = stop.send(Signal::Stop);
    })
    .map_err(|e| CliError::with_message(Kind::Internal, "cannot install the Ctrl-C handler", e))?;
    let mut debouncer = notify_debouncer_full::new_debouncer(
        std::time::Duration::from_millis(150),
        None,
        move |result: notify_debouncer_full::DebounceEventResult| {
            if result.is_ok_and(|batch| batch.iter().any(|e| !matches!(e.event.kind, notify::EventKind::Access(_)))) {
                let _ = tx.send(Signal::Changed);
            }
        },
    )
    .map_err(|e| CliError::with_message(Kind::Internal, "cannot start the file watcher", e))?;
    // refs/mas (every chain), the common dir (packed-refs, the main index), the gate's denial
    // log, this worktree's git dir (its index) and the roster's folder.
    let refs = common.join("refs/mas");
    let _ = std::fs::create_dir_all(&refs);
    let _ = std::fs::create_dir_all(common.join("mas"));
    let mut watched = vec![(refs, notify::RecursiveMode::Recursive)];
    watched.push((common.clone(), notify::RecursiveMode::NonRecursive));
    watched.push((common.join("mas"), notify::RecursiveMode::NonRecursive));
    watched.push((store.repo().path().to_path_buf(), notify::RecursiveMode::NonRecursive));
    if let Ok(dir) = store.workdir() {
        let roster = dir.join(".mas");
        watched.push((if roster.is_dir() { roster } else { dir.to_path_buf() }, notify::RecursiveMode::NonRecursive));
    }
    for (dir, mode) in &watched {
        debouncer
            .watch(dir, *mode)
            .map_err(|e| CliError::with_message(Kind::Internal, format!("cannot watch {}", dir.display()), e))?;
    }
    let terminal = !args.output.json && ctx.ui().stdout_is_terminal();
    let mut last: Option<String> = None;
    loop {
        let view = status(ctx, args)?.value;
        let key = sameness(&view);
        if last.as_deref() != Some(key.as_str()) {
            if args.output.json {
                ctx.ui().json(&view)?;
            } else if terminal {
                // Home and clear, then the view: the screen shows one view, and nothing else is
                // changed in the terminal.
                ctx.ui().out(&format!("\x1b[H\x1b[2J{}\n(watching; Ctrl-C to stop)\n", human(&view)))?;
            } else {
                ctx.ui().out(&format!("{}\n", human(&view)))?;
            }
            last = Some(key);
        }
        // Wake up when the next claim lapses, or on a change.
        let next = view.agents.iter().map(|a| a.expires_at).filter(|&t| t > view.now).min();
        let wait = next.map(|t| std::time::Duration::from_secs(t - view.now + 1));
        let signal = match wait {
            Some(w) => match rx.recv_timeout(w) {
                Ok(s) => Some(s),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => None,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Some(Signal::Stop),
            },
            None => Some(rx.recv().unwrap_or(Signal::Stop)),
        };
        if matches!(signal, Some(Signal::Stop)) {
            break;
        }
        // Collapse a burst (a Ctrl-C inside it still stops).
        if rx.try_iter().any(|s| matches!(s, Signal::Stop)) {
            break;
        }
    }
    drop(debouncer);
    ctx.status("stopped");
    Ok(Outcome::Ok)
}

/// The host of a team-mode session agent (`alice.claude-3f2a9c1b` → claude-code).
fn host_of(agent: &str) -> Option<Host> {
    let (_, session) = agent.rsplit_once('.')?;
    let (name, hex) = session.rsplit_once('-')?;
    if hex.len() != 8 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Host::ALL.into_iter().find(|h| h.session_name() == name)
}

/// Gathers the view.
pub fn status(ctx: &Context, _args: &StatusArgs) -> Result<Done<StatusOut>, CliError> {
    let store = ctx.store()?;
    let roster = store.roster()?;
    ctx.warn_all(&roster.warnings);
    let now = focus_store::now_secs();
    let frame = status_frame(store)?;
    let board = focus_store::load_board(store, &roster, now, None, &git_mas::devrun::ledger::Ledger::new(store))?;
    put_back_held(ctx, store, &board);
    let agents = board
        .entries
        .iter()
        .filter(|e| e.liveness == Liveness::Live)
        .map(|e| StatusAgent {
            agent: e.focus.agent.clone(),
            host: host_of(&e.focus.agent).map(|h| h.name().to_string()),
            claims: e.focus.targets.clone(),
            expires_at: e.expires_at,
            last_activity: e.published_at,
            frame: e.focus.frame.clone(),
        })
        .collect();
    let not_live = board.entries.iter().filter(|e| e.liveness != Liveness::Live).count();
    let ended = |e: &&git_mas::attention::board::BoardEntry| e.liveness == Liveness::Expired && e.expires_at > now;
    let gone =
        git_mas::attention::ancestry::gone(store, board.entries.iter().filter(ended).map(|e| e.focus.agent.as_str()));
    let process_gone = board
        .entries
        .iter()
        .filter(|e| ended(e) && gone.contains(&e.focus.agent))
        .map(|e| StatusGone { agent: e.focus.agent.clone(), claims: e.focus.targets.clone() })
        .collect();
    let released_by_run = board
        .entries
        .iter()
        .filter(|e| e.expires_at > now)
        .filter_map(|e| {
            let end = e.ended_with.as_ref()?;
            Some(StatusRunReleased {
                agent: e.focus.agent.clone(),
                run: end.run.clone(),
                outcome: end.outcome,
                claims: e.focus.targets.clone(),
            })
        })
        .collect();
    let waiting = denials::waiting(&denials::read(store.common_dir()), &board, now);
    let deadlocks = denials::deadlocks(&waiting).into_iter().map(|(a, b)| Deadlock { a, b }).collect();
    let runs = crate::cli::commands::run::run_list(ctx, &ListArgs { output: JsonFlag::default() })?
        .value
        .into_iter()
        .filter(|r| matches!(r.phase, PhaseName::Open | PhaseName::Landing | PhaseName::Unreadable))
        .map(|r| super::status_runs::run_detail(ctx, r))
        .collect();
    let converging = converging(store, &roster)?;
    let debris = status_debris(store)?;
    let remote = status_remote(store)?;
    let team = git_mas::attention::team::enabled(store);
    let kept = git_mas::attention::lost::list(store)?;
    let lanes = git_mas::attention::lanes::live(store, now)?
        .into_iter()
        .map(|l| StatusLane { agent: l.agent, glob: l.glob, expires_at: l.expires_at })
        .collect();
    Ok(Done::ok(StatusOut {
        now,
        team,
        frame,
        agents,
        not_live,
        process_gone,
        released_by_run,
        waiting,
        deadlocks,
        runs,
        converging,
        debris,
        remote,
        lanes,
        kept,
    }))
}

/// The current frame, when one is published.
fn status_frame(store: &git_mas::store::Store) -> Result<Option<StatusFrame>, CliError> {
    Ok(match frame::current_frame_entry(store)? {
        Some(entry) => {
            let record = entry.record.as_ref().ok();
            let published_at = store
                .repo()
                .find_commit(entry.commit)
                .ok()
                .and_then(|c| c.time().ok())
                .map_or(0, |t| u64::try_from(t.seconds).unwrap_or(0));
            let since = frame::since(store, entry.commit).map_err(|e| {
                CliError::with_message(Kind::Internal, "cannot compare the frame with the working tree", e)
            })?;
            Some(StatusFrame {
                since,
                hash: record.map(frame::recorded_hash).unwrap_or_default(),
                commit: entry.commit.to_string(),
                publisher: record.map(|r| r.agent.clone()).unwrap_or_default(),
                published_at,
            })
        }
        None => None,
    })
}

/// Puts back a write no hook saw to a held file (team mode only), and says so.
fn put_back_held(ctx: &Context, store: &git_mas::store::Store, board: &Board) {
    // A write no hook saw to a held file is put back here too ([`held_guard`]).
    if git_mas::attention::team::enabled(store)
        && let Ok(here) = store.workdir()
    {
        match held_guard::step(store, here, None, held_guard::Moment::Look, board, None) {
            Ok((_, noticed)) if !noticed.is_empty() => {
                held_guard::tell_holders(store, None, &noticed);
                ctx.warn(&held_guard::describe(&noticed));
            }
            Ok(_) => {}
            Err(e) => ctx.warn(&format!("checking the files sessions hold failed: {e}")),
        }
    }
}

/// What a crash left (`git mas doctor` finds it).
fn status_debris(store: &git_mas::store::Store) -> Result<StatusDebris, CliError> {
    let findings = git_mas::doctor::examine(store, &std::env::temp_dir(), &ProcessEnv, SystemTime::now())
        .map_err(|e| CliError::with_message(Kind::Internal, "cannot look for what a crash left", e))?;
    let problems = findings.problem_count();
    Ok(StatusDebris {
        problems,
        stale_locks: findings.locks.iter().filter(|d| d.stale).map(|d| d.path.clone()).collect(),
        stale_temp_files: findings.temp_files.iter().filter(|d| d.stale).count(),
        interrupted: findings.half_finished.len(),
        operations: findings.half_finished.clone(),
        remedy: (problems > 0).then(|| "git mas doctor --fix".to_string()),
    })
}

/// The remote refs/mas is exchanged with, when there is one, as of the last sync.
fn status_remote(store: &git_mas::store::Store) -> Result<Option<StatusRemote>, CliError> {
    let remote_name = store.config_string("mas.remote").filter(|r| !r.is_empty()).unwrap_or_else(|| "origin".into());
    let standing = git_mas::sync::standing(store, &remote_name)?;
    let configured = store.config_string(&format!("remote.{remote_name}.url")).is_some();
    Ok((configured || standing.fetched).then_some(StatusRemote {
        name: remote_name,
        fetched: standing.fetched,
        same: standing.same,
        ahead: standing.ahead.len(),
        behind: standing.behind.len(),
        diverged: standing.diverged,
        exchange: git_mas::attention::team::enabled(store).then(|| {
            let standing = git_mas::exchange::standing(store);
            StatusExchange {
                running: standing.running,
                off: git_mas::exchange::remote(store).is_none(),
                state: standing.state,
            }
        }),
    }))
}

/// The converge runs whose driver recorded no report yet (one that cannot be read is left out:
/// `git mas report <run>` says why).
fn converging(
    store: &git_mas::store::Store,
    roster: &git_mas::identity::Roster,
) -> Result<Vec<StatusConverge>, CliError> {
    use git_mas::coordinate::scalar::record;
    let ids = git_mas::devrun::definition::list_of(store, git_mas::devrun::RunType::Converge)
        .map_err(|e| CliError::with_message(Kind::Internal, "cannot list the runs", e))?;
    let mut out = Vec::new();
    for id in ids {
        let Ok((meta, last)) = record::progress(store, roster, &id) else { continue };
        if last.as_deref() == Some("report") {
            continue;
        }
        out.push(StatusConverge {
            id,
            class: meta.pattern.name().to_string(),
            goal: meta.goal,
            driver: meta.driver,
            peers: meta.peers.into_iter().map(|p| p.name).collect(),
            last,
        });
    }
    Ok(out)
}

/// "40 s ago", "5 min ago", "3 h ago", "12 d ago".
fn ago(now: u64, then: u64) -> String {
    let secs = now.saturating_sub(then);
    let amount = match secs {
        0..120 => format!("{secs} s"),
        120..7_200 => format!("{} min", secs / 60),
        7_200..172_800 => format!("{} h", secs / 3_600),
        _ => format!("{} d", secs / 86_400),
    };
    format!("{amount} ago")
}

/// The lines saying whom `agent` waits on.
fn waits(o: &mut String, s: &StatusOut, agent: &str) {
    for w in s.waiting.iter().filter(|w| w.agent == agent) {
        let _ = writeln!(
            o,
            "    waits on {} for {}: refused {} time{}, first {}",
            w.holder,
            w.file,
            w.times,
            if w.times == 1 { "" } else { "s" },
            ago(s.now, w.since)
        );
    }
}

fn human(s: &StatusOut) -> String {
    let mut o = String::new();
    human_frame(&mut o, s);
    human_agents(&mut o, s);
    super::status_runs::human_runs(&mut o, s);
    human_converging(&mut o, s);
    human_remote(&mut o, s);
    human_debris(&mut o, s);
    human_deadlocks(&mut o, s);
    o
}

/// The frame line, and what moved since it was published.
fn human_frame(o: &mut String, s: &StatusOut) {
    match &s.frame {
        Some(f) => {
            let _ = writeln!(
                o,
                "frame      {} published by {} {}",
                &f.hash[..f.hash.len().min(12)],
                f.publisher,
                ago(s.now, f.published_at)
            );
            let moved = match f.since {
                Some(Since::HeadMoved) => Some("HEAD moved on"),
                Some(Since::WorktreeChanged) => Some("the working tree changed"),
                _ => None,
            };
            // In team mode the next edit of any session publishes the frame: nobody runs a command.
            if let Some(moved) = moved.filter(|_| !s.team) {
                let _ = writeln!(o, "           {moved} since; `git mas snapshot --publish` publishes a new frame");
            }
        }
        None => o.push_str("frame      none published yet (the first edit in team mode publishes one)\n"),
    }
}

/// The live agents, those that ended, and those waiting without holding anything.
fn human_agents(o: &mut String, s: &StatusOut) {
    let _ = writeln!(
        o,
        "agents     {} live{}",
        s.agents.len(),
        if s.not_live > 0 { format!(" ({} ended, released or lapsed)", s.not_live) } else { String::new() }
    );
    for l in &s.lanes {
        let _ = writeln!(o, "  {}: lane {} ({} left)", l.agent, l.glob, left(l.expires_at.saturating_sub(s.now)));
    }
    for k in &s.kept {
        let c = &k.commit[..k.commit.len().min(12)];
        let _ = writeln!(
            o,
            "  {}: lost {} to a claim made on another clone; its changes are kept in {c}: `git diff {c}^ {c} | git \
             apply --3way` takes them",
            k.agent, k.file
        );
    }
    for g in &s.process_gone {
        let _ = writeln!(
            o,
            "  {}: ended: process gone (its claims on {} ended with it)",
            g.agent,
            if g.claims.is_empty() { "nothing".to_string() } else { g.claims.join(", ") }
        );
    }
    for r in &s.released_by_run {
        let _ = writeln!(
            o,
            "  {}: released: run {} {} (its claims on {} ended with it)",
            r.agent,
            r.run,
            r.outcome.as_str(),
            if r.claims.is_empty() { "nothing".to_string() } else { r.claims.join(", ") }
        );
    }
    for a in &s.agents {
        let host = a.host.as_deref().map(|h| format!(" ({h})")).unwrap_or_default();
        let stale = match &s.frame {
            Some(f) if f.hash != a.frame => ", on an older frame",
            _ => "",
        };
        let _ = writeln!(
            o,
            "  {}{host}: holds {} for {} more, active {}{stale}",
            a.agent,
            if a.claims.is_empty() { "nothing".to_string() } else { a.claims.join(", ") },
            left(a.expires_at.saturating_sub(s.now)),
            ago(s.now, a.last_activity),
        );
        waits(o, s, &a.agent);
    }
    // Sessions refused before they held anything are waiting too.
    let mut idle: Vec<&str> =
        s.waiting.iter().map(|w| w.agent.as_str()).filter(|w| !s.agents.iter().any(|a| a.agent == *w)).collect();
    idle.dedup();
    for agent in idle {
        let _ = writeln!(o, "  {agent}: holds nothing");
        waits(o, s, agent);
    }
}

/// The converge runs still going (no report yet).
fn human_converging(o: &mut String, s: &StatusOut) {
    for c in &s.converging {
        let last = match c.last.as_deref() {
            Some(kind) => format!("last recorded: {kind}"),
            None => "nothing recorded yet".to_string(),
        };
        let _ = writeln!(
            o,
            "converge   {} ({}, driven by {}, peers {}): {}; {last}, no report yet (running, or stopped by a crash)",
            c.id,
            c.class,
            c.driver,
            c.peers.join(", "),
            c.goal
        );
    }
}

/// How refs/mas compares with the remote as of the last sync.
fn human_remote(o: &mut String, s: &StatusOut) {
    if let Some(r) = &s.remote {
        let line = if !r.fetched {
            "never synced: `git mas sync` exchanges refs/mas with it".to_string()
        } else {
            let mut parts = Vec::new();
            if r.ahead > 0 {
                parts.push(format!("{} ahead", r.ahead));
            }
            if r.behind > 0 {
                parts.push(format!("{} behind", r.behind));
            }
            if !r.diverged.is_empty() {
                parts.push(format!("{} diverged ({})", r.diverged.len(), r.diverged.join(", ")));
            }
            if parts.is_empty() {
                format!("in sync as of the last sync ({} refs)", r.same)
            } else {
                format!("{} as of the last sync; `git mas sync` settles it", parts.join(", "))
            }
        };
        let _ = writeln!(o, "remote     {}: {line}", r.name);
        if let Some(x) = &r.exchange {
            let _ = writeln!(o, "exchange   {}", exchange_line(x, s.now));
        }
    }
}

/// "running (pid 812), last round 0 s ago, 3 pushed, 5 taken", or why it is not running.
fn exchange_line(x: &StatusExchange, now: u64) -> String {
    if x.off {
        return "off (`git config mas.exchange false`): claims cross clones at each `git mas sync`".into();
    }
    let ago = |t: u64| left(now.saturating_sub(t));
    let mut line = match (&x.state, x.running) {
        (Some(st), true) => format!(
            "running (pid {}): claims go to and come from {} every round; last round {} ago, {} pushed, {} taken",
            st.pid,
            st.remote,
            ago(st.last_round_at),
            st.pushed,
            st.taken
        ),
        (None, true) => "running: no round finished yet".into(),
        (Some(st), false) => format!(
            "not running (the last one ended {} ago{}); a session's next hook call starts it",
            ago(st.last_round_at),
            st.ended.as_deref().map(|w| format!(": {w}")).unwrap_or_default()
        ),
        (None, false) => "not running; a session's next hook call starts it".into(),
    };
    if let Some(e) = x.state.as_ref().and_then(|s| s.last_error.as_ref()) {
        line.push_str(&format!("; its last round failed: {e}"));
    }
    line
}

/// What a crash left, and the command that clears it.
fn human_debris(o: &mut String, s: &StatusOut) {
    let d = &s.debris;
    if d.problems > 0 {
        let plural = |n: usize, one: &str| if n == 1 { format!("1 {one}") } else { format!("{n} {one}s") };
        let mut parts = Vec::new();
        if !d.stale_locks.is_empty() {
            let names: Vec<String> = d.stale_locks.iter().map(|p| p.display().to_string()).collect();
            parts.push(format!("{}: {}", plural(names.len(), "stale lock"), names.join(", ")));
        }
        if d.stale_temp_files > 0 {
            parts.push(plural(d.stale_temp_files, "stale temporary file"));
        }
        if d.interrupted > 0 {
            parts.push(plural(d.interrupted, "interrupted operation"));
        }
        let _ = writeln!(
            o,
            "debris     {}; `{}` clears them",
            parts.join("; "),
            d.remedy.as_deref().unwrap_or("git mas doctor --fix")
        );
        for op in &d.operations {
            let _ = writeln!(
                o,
                "           interrupted {} of run {}: {}; `{}` completes it",
                op.operation, op.run, op.detail, op.remedy
            );
        }
    }
}

/// Pairs of agents each waiting on the other.
fn human_deadlocks(o: &mut String, s: &StatusOut) {
    if !s.deadlocks.is_empty() {
        o.push_str("deadlocks\n");
        for d in &s.deadlocks {
            let files = |x: &str, y: &str| {
                s.waiting.iter().filter(|w| w.agent == x && w.holder == y).map(|w| w.file.as_str()).collect::<Vec<_>>()
            };
            let _ = writeln!(
                o,
                "  {} waits on {} ({}) and {} on {} ({}): one of them releases (`git mas --agent {} focus release \
                 --targets {}`)",
                d.a,
                d.b,
                files(&d.a, &d.b).join(", "),
                d.b,
                d.a,
                files(&d.b, &d.a).join(", "),
                d.a,
                files(&d.b, &d.a).first().copied().unwrap_or("FILE"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_in_the_largest_whole_unit() {
        let at = |secs: u64| ago(1_000_000, 1_000_000 - secs);
        assert_eq!(
            [at(0), at(119), at(120), at(7_199), at(7_200), at(172_799), at(172_800)],
            ["0 s ago", "119 s ago", "2 min ago", "119 min ago", "2 h ago", "47 h ago", "2 d ago"]
        );
        assert_eq!(ago(5, 10), "0 s ago", "a clock behind the record's reads as now");
    }

    #[test]
    fn a_session_agent_names_its_host() {
        assert_eq!(host_of("alice.claude-3f2a9c1b"), Some(Host::ClaudeCode));
        assert_eq!(host_of("bob.codex-00ff00ff"), Some(Host::Codex));
        assert_eq!(host_of("alice"), None);
        assert_eq!(host_of("alice.claude-xyz"), None);
        assert_eq!(host_of("alice.nosuch-3f2a9c1b"), None);
    }
}

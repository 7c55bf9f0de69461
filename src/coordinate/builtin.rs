//! git-mas's own development peers: scripted agents that do a development hop's work with real
//! `git mas` commands, in their own worktree, under their own identity.
//!
//! `git-mas peer <kind>` answers a development hop (header `phase=CONVERGE`, `class=development`)
//! with [`act`]. They stand in for coding agents where a run must be reproducible (the demo, the
//! tests); what they write is scripted, not derived from the goal:
//!
//! - **propose**: `reference` and `greedy` write `notes/<agent>.md` (the goal and the round) and run
//!   `git mas propose`; `faulty` does the same and also leaves an unclosed function at the end of
//!   `src/lib.rs` when there is one — a proposal the team's check must catch.
//! - **endorse**: `git mas endorse <agent>` for every agent the hop names; a failing check is a
//!   recorded result (exit 9), not a failure of the hop.
//! - **close**: a peer whose work landed releases its focus when it holds a live one
//!   (`git mas focus status`, then `git mas focus release`).
//!
//! Every reply says what was run and ends with the hop's handoff (`NEXT <next>` or `DONE`).

use super::Task;
use crate::peers::BuiltinKind;
use crate::peers::prompt::PromptHeader;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What `faulty` leaves at the end of `src/lib.rs`: a function that never closes.
pub const FAULTY_TAIL: &str = "\n// left unfinished\npub fn unfinished() -> u32 {\n";

/// A file a scripted peer writes: (path relative to its worktree, new contents).
pub type Edit = (String, String);

/// The files `kind` writes for a propose hop of `agent` (pure): its note, and for `faulty` a
/// broken `src/lib.rs` when `lib_rs` (its current contents) exists.
pub fn plan_edits(kind: BuiltinKind, agent: &str, goal: &str, round: &str, lib_rs: Option<&str>) -> Vec<Edit> {
    let mut edits = vec![(
        format!("notes/{agent}.md"),
        format!("# {agent}\n\nGoal: {goal}\n\nRound {round}: proposed by {agent}.\n"),
    )];
    if let (BuiltinKind::Faulty, Some(lib)) = (kind, lib_rs) {
        edits.push(("src/lib.rs".to_owned(), format!("{lib}{FAULTY_TAIL}")));
    }
    edits
}

struct Ran {
    line: String,
    code: Option<i32>,
    tail: String,
}

fn run(exe: &Path, dir: &Path, args: &[&str]) -> Ran {
    let line = format!("git mas {}", args.join(" "));
    match Command::new(exe).args(args).current_dir(dir).output() {
        Ok(out) => {
            let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            let lines: Vec<&str> = text.lines().collect();
            let tail = lines[lines.len().saturating_sub(4)..].join("\n");
            Ran { line, code: out.status.code(), tail }
        }
        Err(e) => Ran { line, code: None, tail: format!("cannot start: {e}") },
    }
}

fn report(out: &mut String, ran: &Ran) {
    let status = ran.code.map_or("killed".to_owned(), |c| format!("exit {c}"));
    let _ = writeln!(out, "$ {} ({status})", ran.line);
    for line in ran.tail.lines() {
        let _ = writeln!(out, "  {line}");
    }
}

fn handoff(header: &PromptHeader) -> String {
    match header.get("next") {
        Some(next) if next != "DONE" && !next.is_empty() => format!("NEXT {next}"),
        _ => "DONE".to_owned(),
    }
}

/// Does the development hop `header` asks of built-in `kind`, running `exe` (git-mas) in `dir`
/// (the hop's worktree), and returns the reply.
pub fn act(kind: BuiltinKind, header: &PromptHeader, exe: &Path, dir: &Path) -> String {
    let agent = header.get("agent").unwrap_or("");
    let mut out = String::new();
    match header.get("task").and_then(Task::lookup) {
        Some(Task::Propose) => {
            let lib = dir.join("src/lib.rs");
            let lib_rs = std::fs::read_to_string(&lib).ok();
            let goal = header.get("goal").unwrap_or("");
            let round = header.get("round").unwrap_or("1");
            for (rel, contents) in plan_edits(kind, agent, goal, round, lib_rs.as_deref()) {
                let path: PathBuf = dir.join(&rel);
                let written = path
                    .parent()
                    .map_or(Ok(()), std::fs::create_dir_all)
                    .and_then(|()| std::fs::write(&path, contents));
                match written {
                    Ok(()) => {
                        let _ = writeln!(out, "wrote {rel}");
                    }
                    Err(e) => {
                        let _ = writeln!(out, "could not write {rel}: {e}");
                    }
                }
            }
            let message = format!("{agent}'s scripted proposal, round {round}");
            report(&mut out, &run(exe, dir, &["propose", "-m", &message]));
        }
        Some(Task::Endorse) => {
            let targets = header.get("endorse").unwrap_or("");
            for proposer in targets.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                report(&mut out, &run(exe, dir, &["endorse", proposer]));
            }
        }
        Some(Task::Close) => {
            let won = header.get("winners").is_some_and(|w| w.split(',').any(|a| a.trim() == agent));
            if won && run(exe, dir, &["focus", "status"]).code == Some(0) {
                report(&mut out, &run(exe, dir, &["focus", "release"]));
            } else {
                out.push_str("nothing to release\n");
            }
        }
        None => out.push_str("the hop names no task I know (propose, endorse, close); I did nothing\n"),
    }
    let _ = writeln!(out, "{}", handoff(header));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_writes_only_its_note() {
        let edits = plan_edits(BuiltinKind::Reference, "bob", "fix it", "2", Some("pub fn a() {}\n"));
        assert_eq!(edits.len(), 1);
        assert_eq!(edits[0].0, "notes/bob.md");
        assert!(edits[0].1.contains("Goal: fix it") && edits[0].1.contains("Round 2"), "{}", edits[0].1);
    }

    #[test]
    fn faulty_breaks_the_crate_root_when_there_is_one() {
        let edits = plan_edits(BuiltinKind::Faulty, "carol", "g", "1", Some("pub fn a() {}\n"));
        assert_eq!(edits[1], ("src/lib.rs".to_owned(), format!("pub fn a() {{}}\n{FAULTY_TAIL}")));
        let opens = edits[1].1.matches('{').count();
        let closes = edits[1].1.matches('}').count();
        assert!(opens > closes, "the tail leaves a brace open");
        assert_eq!(plan_edits(BuiltinKind::Faulty, "carol", "g", "1", None).len(), 1);
    }
}

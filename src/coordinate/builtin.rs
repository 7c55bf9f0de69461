//! git-mas's own development peers: scripted agents that do a development hop's work with real
//! `git mas` commands, in their own worktree, under their own identity.
//!
//! `git-mas peer <kind>` answers a development hop (header `phase=CONVERGE`, `class=development`)
//! with [`act`]. They stand in for coding agents where a run must be reproducible (the demo, the
//! tests); what they write is scripted, not derived from the goal: the fixes they know are a
//! catalogue of the fixture project's bugs ([`KNOWN_FIXES`]: a file, the buggy text, the fixed
//! text), so that on the fixture a proposal is a real patch the project's tests can judge.
//!
//! - **propose**: in an aggregate run (a `slice=` header) every kind first publishes its focus
//!   from its slice (`git mas focus publish --targets <slice>`). In a best-of-N run every kind
//!   writes `notes/<agent>.md` (the goal and the round), so that two agents' proposals never
//!   share a tree (an endorsement of a tree the endorser proposed too would not count); in an
//!   aggregate run the slices are disjoint and a peer writes nothing outside its slice. Then it
//!   runs `git mas propose`. `reference` and `greedy` apply the catalogue's fixes — with a
//!   `slice=` header, only those for the files of their slice; without one, every fix whose buggy
//!   text is present; where none applies (another repository) the note is all they write, and a
//!   slice the catalogue knows nothing of gets no change: the peer abstains
//!   (`git mas propose --abstain -m <why>`). `faulty` breaks its slice: an unclosed function at
//!   the end of every Rust file of the slice, an unclosed definition at the end of every Python
//!   file; without a slice, or when its slice holds no such file, the unclosed function goes at
//!   the end of `src/lib.rs` when there is one. On the fixture, either is a proposal its check
//!   rejects.
//! - **endorse**: `git mas endorse <agent>` for every agent the hop names; a failing check is a
//!   recorded result (exit 9), not a failure of the hop.
//! - **close**: a peer whose work landed releases its focus when it holds a live one
//!   (`git mas focus status`, then `git mas focus release`).
//!
//! Every reply says what was run and ends with the hop's handoff (`NEXT <next>` or `DONE`).
//!
//! A peer only edits paths that stay inside its worktree: a slice path that is absolute or climbs
//! out (`..`) is skipped, whatever the prompt says.

use super::Task;
use crate::peers::BuiltinKind;
use crate::peers::prompt::PromptHeader;
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

/// What `faulty` leaves at the end of a Rust file: a function that never closes.
pub const FAULTY_TAIL: &str = "\n// left unfinished\npub fn unfinished() -> u32 {\n";

/// What `faulty` leaves at the end of a Python file: a definition that never closes.
pub const FAULTY_PY_TAIL: &str = "\n\n# left unfinished\ndef unfinished(:\n";

/// A file a scripted peer writes: (path relative to its worktree, new contents).
pub type Edit = (String, String);

/// One of the fixture project's known bugs, and its fix: `buggy` in `path` becomes `fixed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownFix {
    /// The file, relative to the project root.
    pub path: &'static str,
    /// The text that is wrong (it occurs once in the file).
    pub buggy: &'static str,
    /// What replaces it.
    pub fixed: &'static str,
}

/// The fixture project's bugs, each caught by one of its tests: sales tax truncated instead of
/// rounded (`cargo test`), and the reorder threshold off by one (`python3 -m unittest`).
pub const KNOWN_FIXES: &[KnownFix] = &[
    KnownFix {
        path: "src/pricing/tax.rs",
        buggy: "Money::from_cents(amount.cents() * i64::from(rate_bp) / 10_000)",
        fixed: "amount.percent_bp(rate_bp)",
    },
    KnownFix {
        path: "tools/stockcheck/reorder.py",
        buggy: "item.level(self.threshold + 1)",
        fixed: "item.level(self.threshold)",
    },
];

/// What a propose hop asks of a built-in, as its header says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProposeHop<'a> {
    /// The agent asked.
    pub agent: &'a str,
    /// The team's goal (or the agent's sub-goal).
    pub goal: &'a str,
    /// The round.
    pub round: &'a str,
    /// The agent's targets in an aggregate run (`slice=`); `None` in a best-of-N run.
    pub slice: Option<Vec<String>>,
}

impl<'a> ProposeHop<'a> {
    /// Reads the hop from a prompt's header: `subgoal=` over `goal=` when there is one.
    pub fn from_header(header: &'a PromptHeader) -> Self {
        ProposeHop {
            agent: header.get("agent").unwrap_or(""),
            goal: header.get("subgoal").or_else(|| header.get("goal")).unwrap_or(""),
            round: header.get("round").unwrap_or("1"),
            slice: header.get("slice").map(parse_slice),
        }
    }
}

/// The files of a `slice=` value: comma-separated, trimmed, blanks dropped; a symbol target
/// (`path#name`) stands for its file, and each file is named once.
pub fn parse_slice(value: &str) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    for target in value.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let file = target.split_once('#').map_or(target, |(file, _)| file);
        if !file.is_empty() && !files.iter().any(|f| f == file) {
            files.push(file.to_owned());
        }
    }
    files
}

/// Whether `rel` names a path inside the worktree: relative, and never climbing out.
fn inside(rel: &str) -> bool {
    !rel.is_empty() && Path::new(rel).components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// The files `kind` writes for `hop` (pure); `read` gives a file's current contents (`None`:
/// absent). See the module docs for what each kind writes.
pub fn plan_edits(kind: BuiltinKind, hop: &ProposeHop, read: &dyn Fn(&str) -> Option<String>) -> Vec<Edit> {
    let note = || {
        (
            format!("notes/{}.md", hop.agent),
            format!("# {}\n\nGoal: {}\n\nRound {}: proposed by {}.\n", hop.agent, hop.goal, hop.round, hop.agent),
        )
    };
    let slice: Option<Vec<&str>> =
        hop.slice.as_ref().map(|s| s.iter().map(String::as_str).filter(|p| inside(p)).collect());
    // A slice is the agent's whole work: no note outside it (a slice that changes nothing
    // abstains instead, see [`propose`]).
    let mut edits = if slice.is_some() { Vec::new() } else { vec![note()] };
    edits.extend(match kind {
        BuiltinKind::Reference | BuiltinKind::Greedy => apply_fixes(slice.as_deref(), read),
        BuiltinKind::Faulty => breakage(slice.as_deref(), read),
    });
    edits
}

/// The catalogue's fixes that apply: to the files of `slice`, or to every file (`None`); several
/// fixes of one file make one edit.
fn apply_fixes(slice: Option<&[&str]>, read: &dyn Fn(&str) -> Option<String>) -> Vec<Edit> {
    let mut paths: Vec<&str> = Vec::new();
    for fix in KNOWN_FIXES {
        if slice.is_none_or(|s| s.contains(&fix.path)) && !paths.contains(&fix.path) {
            paths.push(fix.path);
        }
    }
    let mut edits = Vec::new();
    for path in paths {
        let Some(before) = read(path) else { continue };
        let after = KNOWN_FIXES
            .iter()
            .filter(|f| f.path == path)
            .fold(before.clone(), |text, f| text.replacen(f.buggy, f.fixed, 1));
        if after != before {
            edits.push((path.to_owned(), after));
        }
    }
    edits
}

/// What `faulty` breaks: every Rust and Python file of its slice, else `src/lib.rs`.
fn breakage(slice: Option<&[&str]>, read: &dyn Fn(&str) -> Option<String>) -> Vec<Edit> {
    let broken = |path: &str| {
        let tail = if path.ends_with(".rs") {
            FAULTY_TAIL
        } else if path.ends_with(".py") {
            FAULTY_PY_TAIL
        } else {
            return None;
        };
        read(path).map(|text| (path.to_owned(), format!("{text}{tail}")))
    };
    let mut paths: Vec<&str> = Vec::new();
    for path in slice.unwrap_or_default() {
        if !paths.contains(path) {
            paths.push(path);
        }
    }
    let edits: Vec<Edit> = paths.iter().filter_map(|p| broken(p)).collect();
    if edits.is_empty() { broken("src/lib.rs").into_iter().collect() } else { edits }
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

/// A propose hop: writes what [`plan_edits`] plans in `dir`, then `git mas propose`. The reply's
/// first line names every file written.
fn propose(kind: BuiltinKind, header: &PromptHeader, exe: &Path, dir: &Path, out: &mut String) {
    let hop = ProposeHop::from_header(header);
    // An aggregate run's slice: the focus is published from it, under this agent's identity,
    // before anything is edited (the gate then holds its files for it).
    if let Some(slice) = header.get("slice") {
        let targets: Vec<&str> = slice.split(',').map(str::trim).filter(|t| !t.is_empty()).collect();
        if !targets.is_empty() {
            let mut args = vec!["focus", "publish", "--targets"];
            args.extend(targets);
            report(out, &run(exe, dir, &args));
        }
    }
    let read = |rel: &str| std::fs::read_to_string(dir.join(rel)).ok();
    let mut written = Vec::new();
    let mut failed = String::new();
    for (rel, contents) in plan_edits(kind, &hop, &read) {
        let path: PathBuf = dir.join(&rel);
        let result =
            path.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|()| std::fs::write(&path, contents));
        match result {
            Ok(()) => written.push(rel),
            Err(e) => {
                let _ = writeln!(failed, "could not write {rel}: {e}");
            }
        }
    }
    let _ = writeln!(out, "wrote {}", if written.is_empty() { "nothing".to_owned() } else { written.join(", ") });
    out.push_str(&failed);
    if written.is_empty()
        && let Some(slice) = &hop.slice
    {
        // A slice the catalogue has no fix for needs no change from this peer: it abstains.
        let why = format!("none of the fixes I know touches my slice ({})", slice.join(", "));
        report(out, &run(exe, dir, &["propose", "--abstain", "-m", &why]));
        return;
    }
    let message = format!("{}'s scripted proposal, round {}: {}", hop.agent, hop.round, written.join(", "));
    report(out, &run(exe, dir, &["propose", "-m", &message]));
}

/// Does the development hop `header` asks of built-in `kind`, running `exe` (git-mas) in `dir`
/// (the hop's worktree), and returns the reply.
pub fn act(kind: BuiltinKind, header: &PromptHeader, exe: &Path, dir: &Path) -> String {
    let agent = header.get("agent").unwrap_or("");
    let mut out = String::new();
    match header.get("task").and_then(Task::lookup) {
        Some(Task::Propose) => propose(kind, header, exe, dir, &mut out),
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
    use std::collections::BTreeMap;

    const TAX_RS: &str = include_str!("../../tests/fixtures-repo/src/pricing/tax.rs");
    const REORDER_PY: &str = include_str!("../../tests/fixtures-repo/tools/stockcheck/reorder.py");
    const LIB_RS: &str = include_str!("../../tests/fixtures-repo/src/lib.rs");

    fn fixture() -> BTreeMap<&'static str, &'static str> {
        [("src/pricing/tax.rs", TAX_RS), ("tools/stockcheck/reorder.py", REORDER_PY), ("src/lib.rs", LIB_RS)]
            .into_iter()
            .chain([("src/money.rs", "pub struct Money;\n"), ("README.md", "# inventory\n")])
            .collect()
    }

    fn hop(slice: Option<&[&str]>) -> ProposeHop<'static> {
        ProposeHop {
            agent: "bob",
            goal: "fix it",
            round: "2",
            slice: slice.map(|s| s.iter().map(|p| (*p).to_owned()).collect()),
        }
    }

    fn plan(kind: BuiltinKind, slice: Option<&[&str]>, files: &BTreeMap<&str, &str>) -> Vec<Edit> {
        plan_edits(kind, &hop(slice), &|p: &str| files.get(p).map(|t| (*t).to_owned()))
    }

    fn paths(edits: &[Edit]) -> Vec<&str> {
        edits.iter().map(|(p, _)| p.as_str()).collect()
    }

    #[test]
    fn every_known_fix_matches_the_fixture_once() {
        for fix in KNOWN_FIXES {
            let text = fixture()[fix.path];
            assert_eq!(text.matches(fix.buggy).count(), 1, "{}: {:?}", fix.path, fix.buggy);
            assert!(!text.contains(fix.fixed), "{}: already fixed", fix.path);
        }
    }

    #[test]
    fn each_kind_edits_what_its_slice_asks() {
        // (kind, slice, the paths written) on the fixture.
        type Row = (BuiltinKind, Option<&'static [&'static str]>, &'static [&'static str]);
        let table: &[Row] = &[
            // Best-of-N: the note and every fix whose buggy text is present.
            (BuiltinKind::Reference, None, &["notes/bob.md", "src/pricing/tax.rs", "tools/stockcheck/reorder.py"]),
            (BuiltinKind::Greedy, None, &["notes/bob.md", "src/pricing/tax.rs", "tools/stockcheck/reorder.py"]),
            // A slice: its own fixes only.
            (BuiltinKind::Reference, Some(&["src/pricing/tax.rs", "src/money.rs"]), &["src/pricing/tax.rs"]),
            (BuiltinKind::Reference, Some(&["tools/stockcheck/reorder.py"]), &["tools/stockcheck/reorder.py"]),
            // A slice the catalogue knows nothing of, or one climbing out: nothing (the peer
            // abstains).
            (BuiltinKind::Reference, Some(&["src/money.rs", "README.md"]), &[]),
            (BuiltinKind::Greedy, Some(&["../src/pricing/tax.rs", "/src/pricing/tax.rs"]), &[]),
            (BuiltinKind::Reference, Some(&[]), &[]),
            // Faulty: the note and its slice's code files broken, else the crate root.
            (BuiltinKind::Faulty, None, &["notes/bob.md", "src/lib.rs"]),
            (
                BuiltinKind::Faulty,
                Some(&["src/pricing/tax.rs", "tools/stockcheck/reorder.py", "README.md"]),
                &["src/pricing/tax.rs", "tools/stockcheck/reorder.py"],
            ),
            (BuiltinKind::Faulty, Some(&["README.md", "src/absent.rs"]), &["src/lib.rs"]),
            (BuiltinKind::Faulty, Some(&["src/lib.rs", "README.md", "src/lib.rs"]), &["src/lib.rs"]),
        ];
        for (kind, slice, want) in table {
            let edits = plan(*kind, *slice, &fixture());
            assert_eq!(paths(&edits), *want, "{kind:?} {slice:?}");
        }
    }

    #[test]
    fn the_fixes_are_real_patches() {
        let edits = plan(BuiltinKind::Reference, None, &fixture());
        assert!(edits[0].1.contains("Goal: fix it") && edits[0].1.contains("Round 2"), "{}", edits[0].1);
        let edits = edits[1..].to_vec();
        assert_eq!(edits.len(), KNOWN_FIXES.len());
        for ((path, after), fix) in edits.iter().zip(KNOWN_FIXES) {
            assert_eq!(path, fix.path);
            assert_eq!(*after, fixture()[fix.path].replacen(fix.buggy, fix.fixed, 1));
            assert!(!after.contains(fix.buggy) && after.contains(fix.fixed), "{path}");
        }
        // Once fixed, nothing in the catalogue applies: the note.
        let mut fixed = fixture();
        let owned: Vec<(String, String)> = edits.clone();
        for (p, t) in &owned {
            fixed.insert(p.as_str(), t.as_str());
        }
        assert_eq!(paths(&plan(BuiltinKind::Reference, None, &fixed)), ["notes/bob.md"]);
        // Another repository: the note alone.
        let other: BTreeMap<&str, &str> = [("src/lib.rs", "pub fn a() {}\n")].into_iter().collect();
        assert_eq!(paths(&plan(BuiltinKind::Reference, None, &other)), ["notes/bob.md"]);
    }

    #[test]
    fn faulty_leaves_code_that_does_not_parse() {
        let edits = plan(BuiltinKind::Faulty, Some(&["src/pricing/tax.rs", "tools/stockcheck/reorder.py"]), &fixture());
        assert_eq!(edits[0].1, format!("{TAX_RS}{FAULTY_TAIL}"));
        assert!(edits[0].1.matches('{').count() > edits[0].1.matches('}').count(), "a brace left open");
        assert_eq!(edits[1].1, format!("{REORDER_PY}{FAULTY_PY_TAIL}"));
        let other: BTreeMap<&str, &str> = [("src/lib.rs", "pub fn a() {}\n")].into_iter().collect();
        let edits = plan(BuiltinKind::Faulty, None, &other);
        assert_eq!(edits[1], ("src/lib.rs".to_owned(), format!("pub fn a() {{}}\n{FAULTY_TAIL}")));
        // Nothing to break and no crate root: only the note.
        assert_eq!(paths(&plan(BuiltinKind::Faulty, None, &BTreeMap::new())), ["notes/bob.md"]);
    }

    #[test]
    fn the_hop_is_read_from_the_header() {
        let header = PromptHeader::parse(
            "git-mas hop\nphase=CONVERGE\nagent=ann\ntask=propose\nround=3\ngoal=g\nsubgoal=fix tax\n\
             slice=src/pricing/tax.rs, src/money.rs#Money,,src/money.rs,#x\n\nprose",
        );
        let hop = ProposeHop::from_header(&header);
        assert_eq!((hop.agent, hop.goal, hop.round), ("ann", "fix tax", "3"));
        assert_eq!(hop.slice, Some(vec!["src/pricing/tax.rs".to_owned(), "src/money.rs".to_owned()]));
        let header = PromptHeader::parse("git-mas hop\nagent=ann\ngoal=g\n\n");
        let hop = ProposeHop::from_header(&header);
        assert_eq!((hop.goal, hop.round, hop.slice), ("g", "1", None));
    }
}

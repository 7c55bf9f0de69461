//! What the git hooks decide: the gate's mode, whether a refused verdict stops git, the receipt
//! `pre-commit` leaves for `commit-msg`, which pushed ranges `pre-push` replays, and the managed
//! block the hook files carry.
//!
//! The gate is opt-in per repository (`git config mas.gate`): off, the hooks gate nothing; warn,
//! they report but never stop git; enforce, a blocked or failed-closed verdict stops the commit or
//! push. An unknown value enforces — a typo must not switch the gate off. Whatever the mode,
//! `commit-msg` signs a change to `.mas/roster` for the committing agent (the roster's trail,
//! [`crate::identity::trail`], is identity, not the gate).
//!
//! The hook files may hold the user's own content: only the block between [`BEGIN`] and [`END`]
//! is ever written or removed, so install and uninstall keep everything else, and installing twice
//! gives the same file. [`planned`] decides what each hook file becomes and [`install`] writes
//! them: `git mas hooks install` installs, the team setup writes the same plan through its journal.

use crate::hosts::files::HostHookError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The hooks `git mas hooks install` manages.
pub const HOOK_NAMES: [&str; 3] = ["pre-commit", "commit-msg", "pre-push"];
/// The first line of the managed block.
pub const BEGIN: &str = "# >>> git-mas >>> (managed by `git mas hooks`; edit outside this block)";
/// The last line of the managed block.
pub const END: &str = "# <<< git-mas <<<";

/// The gate's mode, from `mas.gate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// The hooks do nothing.
    Off,
    /// The hooks report but never stop a commit.
    Warn,
    /// The hooks stop blocked and failed-closed commits.
    Enforce,
}

/// A `mas.gate` value read: the mode, and the value itself when it was not one the gate knows
/// (the mode is then [`Mode::Enforce`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModeSetting {
    /// The mode in force.
    pub mode: Mode,
    /// The unknown value, normalized (trimmed, lower case), when it was unknown.
    pub unknown: Option<String>,
}

/// The mode a `mas.gate` value (`None`: unset) names. Case and surrounding space do not matter;
/// unset and empty are off.
pub fn mode_of(value: Option<&str>) -> ModeSetting {
    let value = value.unwrap_or_default().trim().to_ascii_lowercase();
    let known = |mode| ModeSetting { mode, unknown: None };
    match value.as_str() {
        "" | "off" | "false" => known(Mode::Off),
        "warn" => known(Mode::Warn),
        "enforce" | "on" | "true" => known(Mode::Enforce),
        _ => ModeSetting { mode: Mode::Enforce, unknown: Some(value) },
    }
}

/// What a hook does with the gate's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookOutcome {
    /// Let git go on.
    Proceed,
    /// Let git go on although the gate refused (warn mode): say so.
    ProceedDespite,
    /// Stop git with the verdict's exit code.
    Stop,
}

impl Mode {
    /// What a hook in this mode does when the gate `refused` (blocked or failed closed) or not.
    pub fn outcome(self, refused: bool) -> HookOutcome {
        match (self, refused) {
            (_, false) | (Mode::Off, true) => HookOutcome::Proceed,
            (Mode::Warn, true) => HookOutcome::ProceedDespite,
            (Mode::Enforce, true) => HookOutcome::Stop,
        }
    }
}

/// What `pre-commit` leaves for `commit-msg` when the gate allowed a commit: who, on which frame,
/// and what binds it to this very commit attempt (HEAD and the index file's state).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    /// The agent the gate allowed.
    pub agent: String,
    /// The frame it allowed on.
    pub frame: String,
    /// The commit attempt it belongs to.
    pub binding: String,
    /// Allowed by team mode's rule (every file a live focus names is held; see
    /// [`super::claims`]), not the focus rule: the commit's `Mas-Rule: claims` trailer.
    pub claims: bool,
}

impl Receipt {
    /// The receipt file's text.
    pub fn to_text(&self) -> String {
        let rule = if self.claims { "claims\n" } else { "" };
        format!("{}\n{}\n{}\n{rule}", self.agent, self.frame, self.binding)
    }

    /// Reads a receipt file's text; `None` when it is not one.
    pub fn parse(text: &str) -> Option<Receipt> {
        let mut lines = text.lines();
        let (agent, frame, binding) = (lines.next()?, lines.next()?, lines.next()?);
        let claims = lines.next() == Some("claims");
        Some(Receipt { agent: agent.into(), frame: frame.into(), binding: binding.into(), claims })
    }

    /// The receipt when it belongs to the commit attempt `binding`, else `None` (it was left by
    /// another attempt: nothing is added).
    pub fn for_attempt(text: &str, binding: &str) -> Option<Receipt> {
        Receipt::parse(text).filter(|r| r.binding == binding)
    }
}

/// The `git rev-list` arguments of each branch update in `pre-push`'s standard input (`<local ref>
/// <local sha> <remote ref> <remote sha>` per line): `old..new` for an update, `new --not
/// --remotes=<remote>` for a new branch. Deletions and refs other than branches (refs/mas/* among
/// them) carry no code and are not gated.
pub fn push_ranges(input: &str, remote: &str) -> Vec<Vec<String>> {
    let zero = |s: &str| s.chars().all(|c| c == '0');
    let mut ranges = Vec::new();
    for line in input.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 4 || zero(f[1]) || !f[2].starts_with("refs/heads/") {
            continue;
        }
        if zero(f[3]) {
            ranges.push(vec![f[1].to_string(), "--not".to_string(), format!("--remotes={remote}")]);
        } else {
            ranges.push(vec![format!("{}..{}", f[3], f[1])]);
        }
    }
    ranges
}

/// The managed block for hook `name`: `git-mas` straight from PATH when it is there (a commit then
/// starts one process per hook instead of two: git's dispatcher costs a process start), else
/// through `git mas`, which also finds `git-mas` in git's exec-path.
pub fn block(name: &str) -> String {
    format!(
        "{BEGIN}\nif command -v git-mas >/dev/null 2>&1; then git-mas hook {name} \"$@\" || exit $?; \
         else git mas hook {name} \"$@\" || exit $?; fi\n{END}\n"
    )
}

/// Hook text without the managed block.
pub fn strip(text: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("# >>> git-mas >>>") {
            inside = true;
            continue;
        }
        if inside {
            if line.starts_with(END) {
                inside = false;
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Hook text (`None`: no hook file yet) with the managed block, replacing an old one.
pub fn installed(text: Option<&str>, name: &str) -> String {
    let base = match text {
        Some(t) => strip(t),
        None => "#!/bin/sh\n".to_string(),
    };
    let mut base = if base.trim().is_empty() { "#!/bin/sh\n".to_string() } else { base };
    if !base.ends_with('\n') {
        base.push('\n');
    }
    base + &block(name)
}

/// One git hook file as installing leaves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookFile {
    /// The hook's name.
    pub name: &'static str,
    /// The file written: the hook's path in the hooks folder, or, when that is a symbolic link,
    /// the file at the end of its links (the link stays a link).
    pub path: PathBuf,
    /// Its text and permission bits before (`None`: no file).
    pub before: Option<(String, u32)>,
    /// Its text after: the user's own content and the managed block ([`installed`]).
    pub text: String,
    /// Its permission bits after: its own with every execute bit, `0o755` for a new file.
    pub mode: u32,
}

/// What installing did to one hook file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HookChange {
    /// There was no file: it was written.
    Created,
    /// The file lacked the managed block as it is now, or an execute bit: it was rewritten.
    Updated,
    /// The file was installed already: untouched.
    Unchanged,
}

impl HookFile {
    /// What installing does to the file.
    pub fn change(&self) -> HookChange {
        match &self.before {
            None => HookChange::Created,
            Some((text, mode)) if *text == self.text && *mode == self.mode => HookChange::Unchanged,
            Some(_) => HookChange::Updated,
        }
    }
}

/// Why the git hooks cannot be installed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// Reading or writing a hook file, or creating the hooks folder, failed.
    #[error("cannot {action} {}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// Where.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A hook file holds bytes that are not text: someone's, and never rewritten.
    #[error("{} is not UTF-8 text", path.display())]
    NotText {
        /// The file.
        path: PathBuf,
    },
    /// A hook file is a symbolic link that cannot be followed (a loop).
    #[error(transparent)]
    Link(#[from] HostHookError),
}

/// What installing the hooks in the hooks folder `dir` writes: each of [`HOOK_NAMES`] with its
/// managed block, the user's own content kept. Reads only.
pub fn planned(dir: &Path) -> Result<Vec<HookFile>, InstallError> {
    let mut hooks = Vec::new();
    for name in HOOK_NAMES {
        let path = crate::hosts::files::write_target(&dir.join(name))?;
        let before = match std::fs::read(&path) {
            Ok(bytes) => {
                let meta = std::fs::metadata(&path).map_err(io("read", &path))?;
                let text = String::from_utf8(bytes).map_err(|_| InstallError::NotText { path: path.clone() })?;
                Some((text, permissions(&meta)))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io("read", &path)(e)),
        };
        let text = installed(before.as_ref().map(|(text, _)| text.as_str()), name);
        let mode = before.as_ref().map_or(0o755, |(_, mode)| mode | 0o111);
        hooks.push(HookFile { name, path, before, text, mode });
    }
    Ok(hooks)
}

/// Installs the git hooks in the hooks folder `dir` (created when missing): writes each hook of
/// [`planned`] that changes, whole, through [`crate::fsx::write_atomic`] (a temporary beside it,
/// flushed, given its mode, renamed over it). Returns every hook, [`HookFile::change`] saying what
/// was done to it.
///
/// A crash at any instant leaves each hook file either as it was or installed, whole and
/// executable — never a mix, never an installed hook without its execute bits — and at most one
/// temporary `.<hook>.mas-tmp.<pid>.<n>` beside a hook, which `git mas doctor` lists and `--fix`
/// removes. Running the install again completes it.
pub fn install(dir: &Path) -> Result<Vec<HookFile>, InstallError> {
    std::fs::create_dir_all(dir).map_err(io("create", dir))?;
    let hooks = planned(dir)?;
    for hook in hooks.iter().filter(|h| h.change() != HookChange::Unchanged) {
        crate::fsx::write_atomic(&hook.path, hook.text.as_bytes(), Some(hook.mode)).map_err(io("write", &hook.path))?;
    }
    Ok(hooks)
}

/// Takes the git hooks out of the hooks folder `dir`: each of [`HOOK_NAMES`] that carries the
/// managed block gets back the user's own content ([`uninstalled`]), written whole through
/// [`crate::fsx::write_atomic`] with the file's mode (through a link, its target), or is removed
/// when nothing but a shebang would remain. A hook without the block, one that is not text, and a
/// missing one are left as they are.
///
/// A crash at any instant leaves each hook file either as it was or without the block, whole —
/// never the user's content cut short — and at most one temporary beside it, which `git mas doctor`
/// lists and `--fix` removes.
pub fn uninstall(dir: &Path) -> Result<(), InstallError> {
    for name in HOOK_NAMES {
        let path = dir.join(name);
        let target = crate::hosts::files::write_target(&path)?;
        let Ok(text) = std::fs::read_to_string(&target) else { continue };
        match uninstalled(Some(&text)) {
            Uninstall::Keep => {}
            Uninstall::Remove => std::fs::remove_file(&path).map_err(io("remove", &path))?,
            Uninstall::Write(rest) => {
                let mode = std::fs::metadata(&target).map(|m| permissions(&m)).map_err(io("read", &target))?;
                crate::fsx::write_atomic(&target, rest.as_bytes(), Some(mode)).map_err(io("write", &target))?;
            }
        }
    }
    Ok(())
}

fn io<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> InstallError + 'a {
    move |source| InstallError::Io { action, path: path.to_path_buf(), source }
}

#[cfg(unix)]
fn permissions(meta: &std::fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

#[cfg(not(unix))]
fn permissions(_: &std::fs::Metadata) -> u32 {
    0o755
}

/// What uninstalling does to one hook file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Uninstall {
    /// Nothing of ours is in it (or there is no file): leave it.
    Keep,
    /// Only a shebang would remain: remove the file.
    Remove,
    /// Write back the user's own content.
    Write(String),
}

/// What uninstalling does to hook text (`None`: no hook file).
pub fn uninstalled(text: Option<&str>) -> Uninstall {
    let Some(text) = text else { return Uninstall::Keep };
    let rest = strip(text);
    if rest.lines().all(|l| l.trim().is_empty() || l.starts_with("#!")) {
        Uninstall::Remove
    } else if rest != text {
        Uninstall::Write(rest)
    } else {
        Uninstall::Keep
    }
}

/// Whether a hook file carries the managed block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum HookState {
    /// It does.
    #[serde(rename = "installed")]
    Installed,
    /// A hook file without it.
    #[serde(rename = "other hook (git-mas not installed)")]
    Other,
    /// No hook file (or none readable).
    #[serde(rename = "absent")]
    Absent,
}

impl HookState {
    /// The state as `git mas hooks` prints it.
    pub fn label(self) -> &'static str {
        match self {
            HookState::Installed => "installed",
            HookState::Other => "other hook (git-mas not installed)",
            HookState::Absent => "absent",
        }
    }
}

/// The state of a hook file's text (`None`: no file).
pub fn hook_state(text: Option<&str>) -> HookState {
    match text {
        Some(t) if t.contains(BEGIN) => HookState::Installed,
        Some(_) => HookState::Other,
        None => HookState::Absent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_table() {
        let cases: [(Option<&str>, Mode, Option<&str>); 12] = [
            (None, Mode::Off, None),
            (Some(""), Mode::Off, None),
            (Some("off"), Mode::Off, None),
            (Some(" OFF "), Mode::Off, None),
            (Some("false"), Mode::Off, None),
            (Some("warn"), Mode::Warn, None),
            (Some("Warn"), Mode::Warn, None),
            (Some("enforce"), Mode::Enforce, None),
            (Some("on"), Mode::Enforce, None),
            (Some("TRUE"), Mode::Enforce, None),
            (Some("enforcee"), Mode::Enforce, Some("enforcee")),
            (Some(" Maybe "), Mode::Enforce, Some("maybe")),
        ];
        for (value, mode, unknown) in cases {
            assert_eq!(mode_of(value), ModeSetting { mode, unknown: unknown.map(String::from) }, "{value:?}");
        }
    }

    #[test]
    fn hook_outcome_table() {
        let cases = [
            (Mode::Off, false, HookOutcome::Proceed),
            (Mode::Off, true, HookOutcome::Proceed),
            (Mode::Warn, false, HookOutcome::Proceed),
            (Mode::Warn, true, HookOutcome::ProceedDespite),
            (Mode::Enforce, false, HookOutcome::Proceed),
            (Mode::Enforce, true, HookOutcome::Stop),
        ];
        for (mode, refused, want) in cases {
            assert_eq!(mode.outcome(refused), want, "{mode:?} {refused}");
        }
    }

    #[test]
    fn receipts_round_trip_and_bind_to_one_attempt() {
        let r = Receipt { agent: "alice".into(), frame: "F".into(), binding: "HEAD 10:t".into(), claims: false };
        assert_eq!(Receipt::parse(&r.to_text()), Some(r.clone()));
        let cases: [(&str, &str, bool); 5] = [
            ("alice\nF\nHEAD 10:t\n", "HEAD 10:t", true),
            ("alice\nF\nHEAD 10:t", "HEAD 10:t", true),
            ("alice\nF\nHEAD 10:t\n", "HEAD 11:t", false),
            ("alice\nF\n", "", false),
            ("", "", false),
        ];
        for (text, binding, applies) in cases {
            assert_eq!(Receipt::for_attempt(text, binding).is_some(), applies, "{text:?} {binding:?}");
        }
    }

    #[test]
    fn push_range_table() {
        let z = "0".repeat(40);
        let (a, b) = ("a".repeat(40), "b".repeat(40));
        let cases: Vec<(String, Vec<Vec<String>>)> = vec![
            (format!("refs/heads/x {b} refs/heads/x {a}"), vec![vec![format!("{a}..{b}")]]),
            (
                format!("refs/heads/new {b} refs/heads/new {z}"),
                vec![vec![b.clone(), "--not".into(), "--remotes=up".into()]],
            ),
            // A deletion, refs/mas/*, a tag, a short line: nothing to gate.
            (format!("(delete) {z} refs/heads/x {a}"), vec![]),
            (format!("refs/mas/frame {b} refs/mas/frame {a}"), vec![]),
            (format!("refs/tags/v1 {b} refs/tags/v1 {z}"), vec![]),
            (format!("refs/heads/x {b}"), vec![]),
            (
                format!("refs/heads/x {b} refs/heads/x {a}\nrefs/heads/y {a} refs/heads/y {b}\n"),
                vec![vec![format!("{a}..{b}")], vec![format!("{b}..{a}")]],
            ),
        ];
        for (input, want) in cases {
            assert_eq!(push_ranges(&input, "up"), want, "{input}");
        }
    }

    #[test]
    fn install_is_idempotent_and_keeps_user_content() {
        let user = "#!/bin/sh\necho mine\n";
        let once = installed(Some(user), "pre-commit");
        assert!(once.starts_with(user) && once.contains("git mas hook pre-commit"));
        assert_eq!(installed(Some(&once), "pre-commit"), once);
        assert_eq!(strip(&once), user);
        assert_eq!(installed(None, "commit-msg"), format!("#!/bin/sh\n{}", block("commit-msg")));
        assert_eq!(installed(Some("#!/bin/sh\necho mine"), "pre-push"), format!("{user}{}", block("pre-push")));
    }

    #[test]
    fn uninstall_and_state_table() {
        let user = "#!/bin/sh\necho mine\n";
        let ours = installed(None, "pre-push");
        let both = installed(Some(user), "pre-push");
        let cases: [(Option<&str>, Uninstall, HookState); 4] = [
            (None, Uninstall::Keep, HookState::Absent),
            (Some(user), Uninstall::Keep, HookState::Other),
            (Some(&ours), Uninstall::Remove, HookState::Installed),
            (Some(&both), Uninstall::Write(user.to_string()), HookState::Installed),
        ];
        for (text, uninstall, state) in cases {
            assert_eq!(uninstalled(text), uninstall, "{text:?}");
            assert_eq!(hook_state(text), state, "{text:?}");
            assert_eq!(serde_json::to_value(state).unwrap(), state.label());
        }
    }

    #[cfg(unix)]
    #[test]
    fn install_writes_each_hook_whole_and_executable_and_keeps_the_users_own() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let hooks = dir.path().join("hooks");
        std::fs::create_dir_all(&hooks).unwrap();
        let user = "#!/bin/sh\necho mine\n";
        std::fs::write(hooks.join("pre-commit"), user).unwrap();
        std::fs::set_permissions(hooks.join("pre-commit"), std::fs::Permissions::from_mode(0o700)).unwrap();
        // A hook that is a link: its target is written, the link stays.
        std::fs::write(dir.path().join("mine-push"), user).unwrap();
        std::os::unix::fs::symlink("../mine-push", hooks.join("pre-push")).unwrap();
        let done = install(&hooks).unwrap();
        let changes: Vec<_> = done.iter().map(|h| (h.name, h.change())).collect();
        assert_eq!(
            changes,
            [
                ("pre-commit", HookChange::Updated),
                ("commit-msg", HookChange::Created),
                ("pre-push", HookChange::Updated)
            ]
        );
        for (name, file, mode) in [
            ("pre-commit", hooks.join("pre-commit"), 0o711),
            ("commit-msg", hooks.join("commit-msg"), 0o755),
            ("pre-push", dir.path().join("mine-push"), 0o755),
        ] {
            let text = std::fs::read_to_string(&file).unwrap();
            let want = if name == "commit-msg" { installed(None, name) } else { installed(Some(user), name) };
            assert_eq!(text, want, "{name}");
            assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o7777, mode, "{name}");
        }
        assert!(std::fs::symlink_metadata(hooks.join("pre-push")).unwrap().is_symlink());
        let names: Vec<_> = std::fs::read_dir(&hooks).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 3, "nothing beside the hooks: {names:?}");
        // Installing again changes nothing.
        assert!(install(&hooks).unwrap().iter().all(|h| h.change() == HookChange::Unchanged));
        // Uninstalling gives the user's own content back, with its mode, through the link too;
        // a hook that held nothing else goes.
        uninstall(&hooks).unwrap();
        assert_eq!(std::fs::read_to_string(hooks.join("pre-commit")).unwrap(), user);
        assert_eq!(std::fs::metadata(hooks.join("pre-commit")).unwrap().permissions().mode() & 0o7777, 0o711);
        assert_eq!(std::fs::read_to_string(dir.path().join("mine-push")).unwrap(), user);
        assert!(std::fs::symlink_metadata(hooks.join("pre-push")).unwrap().is_symlink());
        assert!(!hooks.join("commit-msg").exists());
        let names: Vec<_> = std::fs::read_dir(&hooks).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 2, "no temporary left: {names:?}");
        // A second uninstall changes nothing.
        uninstall(&hooks).unwrap();
        assert_eq!(std::fs::read_to_string(hooks.join("pre-commit")).unwrap(), user);
        install(&hooks).unwrap();
        // A hook that is not text is someone's: refused, left as it was.
        std::fs::write(hooks.join("commit-msg"), b"\xff\xfe").unwrap();
        assert!(matches!(install(&hooks), Err(InstallError::NotText { .. })));
        assert_eq!(std::fs::read(hooks.join("commit-msg")).unwrap(), b"\xff\xfe");
        uninstall(&hooks).unwrap();
        assert_eq!(std::fs::read(hooks.join("commit-msg")).unwrap(), b"\xff\xfe");
    }
}

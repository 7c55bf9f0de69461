//! Appending the receipt's trailers to a commit message without spawning `git interpret-trailers`.
//!
//! The `commit-msg` hook adds `Mas-Agent:` and `Mas-Frame:` the way `git interpret-trailers
//! --if-exists replace --trailer …` does. Spawning git for it cost a process start on every
//! commit; the messages agents write are almost always plain, so the plain cases are handled here
//! and everything else is left to git.
//!
//! Handled (the output is byte-for-byte what git writes, checked by the tests against git itself):
//! - a message whose last paragraph is not a trailer block (one paragraph, or prose at the end): a
//!   blank line, then the trailers;
//! - a message whose last paragraph (not the first) is made of `Key: value` lines only, none of them
//!   ours (`Signed-off-by:` from `git commit -s`, for instance): the trailers join that block.
//!
//! Left to git ([`append_trailers`] returns `None`): a message that does not end in exactly one
//! newline, that holds comment lines (`#`), a `---` line, carriage returns, trailers of ours
//! already, or a last paragraph that mixes trailer-like and other lines (continuation lines, git's
//! 25 % rule), and any repository with `trailer.*` or `core.commentChar` configuration (the caller
//! checks that).

/// How a commit message gets its trailers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrailerPlan {
    /// No trailer to add: the message stays as it is.
    Nothing,
    /// The message with the trailers appended, written here.
    Write(String),
    /// `git interpret-trailers --in-place --if-exists replace` with these `key: value`s decides.
    Git(Vec<(String, String)>),
}

/// The commit-msg hook's policy: the receipt's `Mas-Agent`/`Mas-Frame` (when `pre-commit`
/// allowed this attempt) and the roster trail (when the commit changes the roster), appended
/// here to the plain messages agents write; git decides for any message [`append_trailers`]
/// leaves to it, and whenever the repository configures trailers or a comment character
/// (`git_configured`), since only git reads that configuration.
pub fn plan(message: &str, trailers: &[(&str, &str)], git_configured: bool) -> TrailerPlan {
    if trailers.is_empty() {
        return TrailerPlan::Nothing;
    }
    match append_trailers(message, trailers).filter(|_| !git_configured) {
        Some(text) => TrailerPlan::Write(text),
        None => TrailerPlan::Git(trailers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()),
    }
}

/// The message with `trailers` appended as git would append them, or `None` when git must decide.
pub fn append_trailers(message: &str, trailers: &[(&str, &str)]) -> Option<String> {
    let body = message.strip_suffix('\n')?;
    if body.trim().is_empty() || body.ends_with('\n') || body.contains('\r') {
        return None;
    }
    let lines: Vec<&str> = body.split('\n').collect();
    if lines.iter().any(|l| l.starts_with('#') || l.starts_with("---") || l.trim().is_empty() && !l.is_empty()) {
        return None;
    }
    // The last paragraph, unless it is the first (the title is never a trailer block).
    let last_start = lines.iter().rposition(|l| l.is_empty()).map(|i| i + 1);
    let in_block = match last_start {
        None => false,
        Some(start) => {
            let paragraph = &lines[start..];
            let keyed = paragraph.iter().filter(|l| trailer_key(l).is_some()).count();
            if paragraph
                .iter()
                .any(|l| trailers.iter().any(|(k, _)| trailer_key(l).is_some_and(|t| t.eq_ignore_ascii_case(k))))
            {
                return None;
            }
            if keyed == paragraph.len() {
                true
            } else if keyed == 0 && !paragraph.iter().any(|l| l.contains(':')) {
                false
            } else {
                return None;
            }
        }
    };
    let mut out = String::with_capacity(message.len() + 128);
    out.push_str(message);
    if !in_block {
        out.push('\n');
    }
    for (key, value) in trailers {
        out.push_str(key);
        out.push_str(": ");
        out.push_str(value);
        out.push('\n');
    }
    Some(out)
}

/// The key of a `Key: value` line (letters, digits and `-`, directly followed by `:`).
fn trailer_key(line: &str) -> Option<&str> {
    let (key, _) = line.split_once(':')?;
    (!key.is_empty() && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')).then_some(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trailer_plan_writes_plain_messages_and_leaves_the_rest_to_git() {
        let ours = [("Mas-Agent", "alice"), ("Mas-Frame", "f1")];
        assert_eq!(plan("fix\n", &[], false), TrailerPlan::Nothing);
        assert_eq!(plan("fix\n", &ours, false), TrailerPlan::Write("fix\n\nMas-Agent: alice\nMas-Frame: f1\n".into()));
        let git = TrailerPlan::Git(vec![("Mas-Agent".into(), "alice".into()), ("Mas-Frame".into(), "f1".into())]);
        assert_eq!(plan("fix\n", &ours, true), git, "configured trailers: git decides");
        assert_eq!(plan("fix", &ours, false), git, "no final newline: git decides");
    }
    use std::process::Command;

    const TRAILERS: [(&str, &str); 2] = [("Mas-Agent", "a00"), ("Mas-Frame", "0123456789abcdef")];

    fn by_git(message: &str) -> String {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("MSG");
        std::fs::write(&file, message).unwrap();
        let out = Command::new("git")
            .current_dir(tmp.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .args(["interpret-trailers", "--in-place", "--if-exists", "replace"])
            .args(["--trailer", "Mas-Agent: a00", "--trailer", "Mas-Frame: 0123456789abcdef"])
            .arg(&file)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        std::fs::read_to_string(&file).unwrap()
    }

    #[test]
    fn matches_git_interpret_trailers_where_it_answers_and_declines_the_rest() {
        let handled = [
            "change\n",
            "Fix the tax rounding\n\nThe old code rounded twice.\n",
            "Fix\n\nBody line one\nbody line two\n",
            "Fix\n\nSigned-off-by: A <a@example.invalid>\n",
            "Fix\n\nBody.\n\nSigned-off-by: A <a@example.invalid>\nReviewed-by: B\n",
            "Subject: with a colon in the title\n",
            "Fix\n\nCo-authored-by: x\n",
            "Fix\n\nprose: a colon after a one-word key makes a trailer\n",
        ];
        for message in handled {
            let ours = append_trailers(message, &TRAILERS);
            assert_eq!(ours.as_deref(), Some(by_git(message).as_str()), "{message:?}");
        }
        let declined = [
            "change",
            "change\n\n",
            "",
            "\n",
            "Fix\n\n# a comment\n",
            "Fix\n\nBody\n---\nnotes\n",
            "Fix\r\n",
            "Fix\n\nMas-Agent: someone\n",
            "Fix\n\nmas-frame: abc\n",
            "Fix\n\nSigned-off-by: A\n  continued\n",
            "Fix\n\nNote: this has a colon\nand prose\n",
            "Fix\n \nBody\n",
        ];
        for message in declined {
            assert_eq!(append_trailers(message, &TRAILERS), None, "{message:?}");
        }
    }
}

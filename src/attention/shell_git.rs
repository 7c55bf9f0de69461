//! Git's own commands that take other sessions' uncommitted work: what a shell call's pre-tool
//! hook refuses in team mode while another live session holds files the command would touch.
//!
//! A shell backstop puts back a held file after the call, but `git stash` has by then carried
//! the holder's work into a stash entry, `git reset --hard` and `git checkout -- .` have thrown it
//! away in the index as well, and `git clean -f` has deleted an untracked file — the put-back
//! restores the bytes but leaves a stash to be popped over them, or a session that believes its
//! command did what it said. So these are refused before they run, naming the holders and the
//! safe form (the same command limited to the caller's own files). Which commands:
//!
//! | command | refused when |
//! |---|---|
//! | `git stash` (bare, `push`, `save`, `-u`, …) | no pathspec, or one that covers a held file |
//! | `git reset --hard` / `--merge` / `--keep` | always (every tracked file) |
//! | `git checkout -f`, `git switch -f` / `--discard-changes` | always |
//! | `git checkout [<tree>] -- <paths>`, `git checkout .` | a pathspec covers a held file |
//! | `git restore <paths>` (the worktree: not `--staged` alone) | a pathspec covers a held file |
//! | `git clean -f` | no pathspec, or one that covers a held file |
//!
//! A pathspec covers a held file when it names it, a folder above it, the top (`.` from the top,
//! `:/`), or holds a wildcard (refusing when unsure). The command line is read as a shell would
//! split it into simple commands (`;`, `&&`, `||`, `|`, `&`, newlines, `(`, `)`, `$(`, backticks),
//! each split into words with POSIX quoting (`shlex`); `git` is found after variable
//! assignments and `env`, `command`, `sudo`, `nice`, `timeout N`, and its global options
//! (`-C`, `-c`, `--git-dir`, `--work-tree`, …) are skipped. What this cannot see — a script
//! file, an alias, `eval`, `xargs git …` — is left to the post-tool check, which puts back the
//! files and says so.

/// One refused git command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The command as found (its words joined).
    pub command: String,
    /// The held files it would touch.
    pub files: Vec<String>,
    /// The safe form to suggest.
    pub safe: &'static str,
}

/// The simple commands of a shell line, each as its words.
fn simple_commands(line: &str) -> Vec<Vec<String>> {
    let mut pieces = Vec::new();
    let mut current = String::new();
    let (mut single, mut double) = (false, false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' if !double => {
                single = !single;
                current.push(c);
            }
            '"' if !single => {
                double = !double;
                current.push(c);
            }
            '\\' if !single => {
                current.push(c);
                if let Some(n) = chars.next() {
                    current.push(n);
                }
            }
            ';' | '&' | '|' | '\n' | '(' | ')' | '`' if !single && !double => pieces.push(std::mem::take(&mut current)),
            '$' if !single && chars.peek() == Some(&'(') => pieces.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    pieces.push(current);
    pieces
        .into_iter()
        .filter_map(|p| {
            let words = shlex::split(&p).unwrap_or_else(|| p.split_whitespace().map(String::from).collect());
            (!words.is_empty()).then_some(words)
        })
        .collect()
}

/// The git command in `words` (after wrappers and assignments): its directory option (`-C`)
/// and its subcommand with the words after it.
fn git_of(words: &[String]) -> Option<(Option<String>, Vec<String>)> {
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        let base = w.rsplit('/').next().unwrap_or(w);
        if w.contains('=') && !w.starts_with('-') && !w.starts_with('=') {
            i += 1; // VAR=value
        } else if matches!(base, "env" | "command" | "sudo" | "nice" | "nohup" | "exec" | "time") {
            i += 1;
            while i < words.len() && words[i].starts_with('-') {
                i += 1;
            }
        } else if base == "timeout" {
            i += 1;
            while i < words.len() && words[i].starts_with('-') {
                i += 1;
            }
            i += 1; // the duration
        } else if base == "git" {
            break;
        } else {
            return None;
        }
    }
    i += 1;
    let mut dir = None;
    while i < words.len() {
        match words[i].as_str() {
            "-C" => {
                dir = words.get(i + 1).cloned();
                i += 2;
            }
            "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path" | "--config-env" => i += 2,
            w if w.starts_with('-') => i += 1,
            _ => break,
        }
    }
    (i < words.len()).then(|| (dir, words[i..].to_vec()))
}

/// The held files a pathspec covers; `rel` is the command's directory relative to the top.
fn covered<'a>(spec: &str, rel: &str, held: &'a [String]) -> Vec<&'a String> {
    let spec = spec.trim_start_matches("./");
    if spec.contains(['*', '?', '[']) || spec.starts_with(":/") || spec.starts_with(":(") {
        return held.iter().collect();
    }
    let full = match (rel.is_empty(), spec) {
        (_, "" | ".") => rel.to_string(),
        (true, s) => s.to_string(),
        (false, s) => format!("{rel}/{s}"),
    };
    let full = normalize(&full);
    held.iter()
        .filter(|h| full.is_empty() || **h == full || h.starts_with(&format!("{}/", full.trim_end_matches('/'))))
        .collect()
}

/// `a/b/../c` → `a/c`; a path that climbs above the top is the top.
fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

/// The pathspecs of `args`: the words after `--`, else the words that are not options (the
/// first `skip` of them being something else, such as a tree-ish).
fn pathspecs(args: &[String]) -> (Vec<String>, bool) {
    match args.iter().position(|a| a == "--") {
        Some(i) => (args[i + 1..].to_vec(), true),
        None => {
            let mut specs = Vec::new();
            let mut words = args.iter();
            while let Some(a) = words.next() {
                if VALUED.contains(&a.as_str()) {
                    words.next(); // the option's value
                } else if !a.starts_with('-') {
                    specs.push(a.clone());
                }
            }
            (specs, false)
        }
    }
}

/// The options of these commands that take the next word as their value.
const VALUED: &[&str] =
    &["-m", "--message", "-s", "--source", "-b", "-B", "--orphan", "--pathspec-from-file", "-e", "--exclude"];

/// What in `line` (a shell call's command, run in `rel`, its directory relative to the top)
/// would take the uncommitted work of the `held` files (repo-relative), if anything.
pub fn refusals(line: &str, rel: &str, held: &[String]) -> Vec<Refusal> {
    if held.is_empty() {
        return Vec::new();
    }
    let mut found = Vec::new();
    for words in simple_commands(line) {
        let Some((dir, sub)) = git_of(&words) else { continue };
        // Another directory: its pathspecs are relative to it, which this cannot place; cover
        // by name from the top as well.
        let rel = if dir.is_some() { "" } else { rel };
        let (name, args) = (sub[0].as_str(), &sub[1..]);
        let has = |flags: &[&str]| {
            args.iter().any(|a| {
                flags.contains(&a.as_str())
                    || (a.starts_with('-')
                        && !a.starts_with("--")
                        && flags
                            .iter()
                            .any(|f| f.len() == 2 && f.starts_with('-') && !f.starts_with("--") && a.contains(&f[1..])))
            })
        };
        let of_specs = |specs: &[String]| -> Vec<String> {
            let mut files: Vec<String> = specs.iter().flat_map(|s| covered(s, rel, held)).cloned().collect();
            files.sort();
            files.dedup();
            files
        };
        let (files, safe) = match name {
            "stash" => stash_files(args, held, &of_specs),
            "reset" if has(&["--hard", "--merge", "--keep"]) => {
                (held.to_vec(), "git restore --staged -- <files> (the index only), or git checkout -- <your own files>")
            }
            "checkout" if has(&["-f", "--force"]) => (held.to_vec(), "git checkout -- <your own files>"),
            "switch" if has(&["-f", "--force", "--discard-changes"]) => {
                (held.to_vec(), "git switch without --discard-changes (git keeps local changes, or refuses)")
            }
            "checkout" => {
                let (specs, dashed) = pathspecs(args);
                // Without `--`, a single word is a branch unless it is `.` or a held path.
                let specs: Vec<String> = if dashed {
                    specs
                } else {
                    specs
                        .into_iter()
                        .filter(|s| s == "." || s.ends_with('/') || !covered(s, rel, held).is_empty())
                        .collect()
                };
                (of_specs(&specs), "git checkout -- <your own files>")
            }
            "restore" => {
                let staged_only = has(&["--staged", "-S"]) && !has(&["--worktree", "-W"]);
                if staged_only {
                    (Vec::new(), "")
                } else {
                    let (specs, _) = pathspecs(args);
                    (of_specs(&specs), "git restore -- <your own files>")
                }
            }
            "clean" if has(&["-f", "--force"]) && !has(&["-n", "--dry-run"]) => {
                let (specs, _) = pathspecs(args);
                let files = if specs.is_empty() { held.to_vec() } else { of_specs(&specs) };
                (files, "git clean -f -- <your own paths>")
            }
            _ => (Vec::new(), ""),
        };
        let mut files = files;
        files.sort();
        if !files.is_empty() {
            found.push(Refusal { command: words.join(" "), files, safe });
        }
    }
    found
}

/// The held files a `git stash` with `args` would take, and what to run instead.
fn stash_files(
    args: &[String],
    held: &[String],
    of_specs: &dyn Fn(&[String]) -> Vec<String>,
) -> (Vec<String>, &'static str) {
    let sub = args.iter().find(|a| !a.starts_with('-')).map(String::as_str);
    match sub {
        None | Some("push" | "save") | Some("--") => {
            let after = match args.iter().position(|a| a == "push" || a == "save") {
                Some(i) => &args[i + 1..],
                None => args,
            };
            let (specs, _) = pathspecs(after);
            let specs: Vec<String> =
                if sub == Some("save") { Vec::new() } else { specs.into_iter().filter(|s| s != "push").collect() };
            let files = if specs.is_empty() { held.to_vec() } else { of_specs(&specs) };
            (files, "git stash push -- <your own files>")
        }
        Some(p)
            if !matches!(p, "list" | "show" | "drop" | "clear" | "branch" | "create" | "store" | "pop" | "apply") =>
        {
            // `git stash -- <paths>` without push, or an unknown word: a push.
            let (specs, _) = pathspecs(args);
            (of_specs(&specs), "git stash push -- <your own files>")
        }
        _ => (Vec::new(), ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held() -> Vec<String> {
        vec!["src/lib.rs".into(), "src/money.rs".into(), "README.md".into()]
    }

    #[test]
    fn the_commands_that_take_others_work_are_found_and_the_rest_are_not() {
        // (command, run in, refused files)
        let cases: &[(&str, &str, &[&str])] = &[
            ("git stash", "", &["README.md", "src/lib.rs", "src/money.rs"]),
            ("git stash -u", "", &["README.md", "src/lib.rs", "src/money.rs"]),
            ("git stash push -m wip", "", &["README.md", "src/lib.rs", "src/money.rs"]),
            ("git stash push -- src/report.rs", "", &[]),
            ("git stash push -- src/lib.rs", "", &["src/lib.rs"]),
            ("git stash push -- .", "src", &["src/lib.rs", "src/money.rs"]),
            ("git stash list", "", &[]),
            ("git stash pop", "", &[]),
            ("git reset --hard", "", &["README.md", "src/lib.rs", "src/money.rs"]),
            ("git reset --hard HEAD~1", "", &["README.md", "src/lib.rs", "src/money.rs"]),
            ("git reset HEAD src/lib.rs", "", &[]),
            ("git reset --soft HEAD~1", "", &[]),
            ("git checkout -- .", "", &["README.md", "src/lib.rs", "src/money.rs"]),
            ("git checkout .", "", &["README.md", "src/lib.rs", "src/money.rs"]),
            ("git checkout -- lib.rs", "src", &["src/lib.rs"]),
            ("git checkout main -- src/", "", &["src/lib.rs", "src/money.rs"]),
            ("git checkout feature", "", &[]),
            ("git checkout -b feature", "", &[]),
            ("git checkout -f feature", "", &["README.md", "src/lib.rs", "src/money.rs"]),
            ("git switch --discard-changes main", "", &["README.md", "src/lib.rs", "src/money.rs"]),
            ("git switch main", "", &[]),
            ("git restore .", "", &["README.md", "src/lib.rs", "src/money.rs"]),
            ("git restore src/money.rs", "", &["src/money.rs"]),
            ("git restore --staged .", "", &[]),
            ("git restore --staged --worktree src/lib.rs", "", &["src/lib.rs"]),
            ("git restore '*.rs'", "", &["README.md", "src/lib.rs", "src/money.rs"]),
            ("git clean -fd", "", &["README.md", "src/lib.rs", "src/money.rs"]),
            ("git clean -n", "", &[]),
            ("git clean -f -- build/", "", &[]),
            ("cd sub && git -C .. reset --hard", "", &["README.md", "src/lib.rs", "src/money.rs"]),
            ("echo hi; FOO=1 git stash", "", &["README.md", "src/lib.rs", "src/money.rs"]),
            ("timeout 5 /usr/bin/git -c x=y checkout -- src/lib.rs", "", &["src/lib.rs"]),
            ("echo $(git stash list)", "", &[]),
            ("echo 'git reset --hard'", "", &[]),
            ("git status && git diff", "", &[]),
            ("git commit -am wip", "", &[]),
            ("grep -r 'git stash' .", "", &[]),
        ];
        for (line, rel, want) in cases {
            let got: Vec<String> = refusals(line, rel, &held()).into_iter().flat_map(|r| r.files).collect();
            let want: Vec<String> = want.iter().map(|s| s.to_string()).collect();
            assert_eq!(got, want, "{line:?} in {rel:?}");
        }
    }

    #[test]
    fn nothing_is_refused_when_nobody_else_holds_a_file() {
        assert!(refusals("git reset --hard && git stash && git clean -fdx", "", &[]).is_empty());
    }
}

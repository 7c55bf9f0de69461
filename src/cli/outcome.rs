//! [`Outcome`]: how a command ends, as one exit code. Its own module so that the hook's small
//! binary (`src/bin/git-mas-hook.rs`) takes it without the command line's parser.

/// How a command ends: each outcome is one exit code scripts rely on, one name (what `--json`
/// consumers and the MCP server's results call it) and one meaning, which `--help`'s exit status
/// list and the table of docs/README.md give word for word (a test holds the table to it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Success.
    Ok,
    /// Refused or failed because of the input or the repository's state; nothing changed.
    Refused,
    /// The command line itself was wrong.
    Usage,
    /// An internal or git failure.
    Internal,
    /// Something read did not verify.
    Unverified,
    /// `sync` left some refs disagreeing with the remote.
    SyncIncomplete,
    /// The gate blocks, `check` lists commits, or a landing is blocked.
    Blocked,
    /// The gate fails closed.
    FailClosed,
    /// A run ended without a result.
    RunIncomplete,
    /// A check failed.
    CheckFailed,
    /// A run landed, and tests still fail on what landed.
    Partial,
    /// Standard output was closed early.
    BrokenPipe,
}

impl Outcome {
    /// Every outcome, in the order of their codes.
    pub const ALL: [Outcome; 12] = [
        Outcome::Ok,
        Outcome::Refused,
        Outcome::Usage,
        Outcome::Internal,
        Outcome::Unverified,
        Outcome::SyncIncomplete,
        Outcome::Blocked,
        Outcome::FailClosed,
        Outcome::RunIncomplete,
        Outcome::CheckFailed,
        Outcome::Partial,
        Outcome::BrokenPipe,
    ];

    /// The exit code.
    pub const fn code(self) -> u8 {
        match self {
            Outcome::Ok => 0,
            Outcome::Refused => 1,
            Outcome::Usage => 2,
            Outcome::Internal => 3,
            Outcome::Unverified => 4,
            Outcome::SyncIncomplete => 5,
            Outcome::Blocked => 6,
            Outcome::FailClosed => 7,
            Outcome::RunIncomplete => 8,
            Outcome::CheckFailed => 9,
            Outcome::Partial => 10,
            Outcome::BrokenPipe => 141,
        }
    }

    /// The outcome that exits with a host hook's reply code. That code is the host's protocol,
    /// not ours (Claude Code blocks a tool call on 2, which is [`Outcome::Usage`]'s code): this is
    /// the one place a bare code becomes an outcome; an unknown code is internal.
    pub fn of_host_reply(code: u8) -> Outcome {
        Outcome::ALL.into_iter().find(|o| o.code() == code).unwrap_or(Outcome::Internal)
    }

    /// The name scripts and agents read.
    pub const fn name(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Refused => "refused",
            Outcome::Usage => "usage",
            Outcome::Internal => "internal",
            Outcome::Unverified => "unverified",
            Outcome::SyncIncomplete => "sync-incomplete",
            Outcome::Blocked => "blocked",
            Outcome::FailClosed => "fail-closed",
            Outcome::RunIncomplete => "run-incomplete",
            Outcome::CheckFailed => "check-failed",
            Outcome::Partial => "partial",
            Outcome::BrokenPipe => "broken-pipe",
        }
    }

    /// What the code means, as `--help` and docs/README.md say it.
    pub const fn meaning(self) -> &'static str {
        match self {
            Outcome::Ok => "success",
            Outcome::Refused => {
                "refused or failed because of the input or the repository's state; nothing was changed \
                 (`git mas doctor`: stale files or interrupted operations remain)"
            }
            Outcome::Usage => {
                "usage error (unknown command or flag, missing argument, or an argument value or combination \
                 of flags the command does not take)"
            }
            Outcome::Internal => "internal or git failure",
            Outcome::Unverified => {
                "something read did not verify: a record (`git mas log`, `git mas report`) or a frame \
                 (`git mas snapshot --verify`)"
            }
            Outcome::SyncIncomplete => {
                "`git mas sync` ended with some refs not agreeing with the remote: rejected, refused, diverged, \
                 locked or moving"
            }
            Outcome::Blocked => {
                "blocked: the gate refuses the change, `git mas check` lists commits (or, with `--records`, \
                 unverified records), or `git mas land` is blocked by a merge conflict or a failing check of \
                 the merged tree"
            }
            Outcome::FailClosed => {
                "the gate fails closed: no live focus on the current frame, or the board cannot be read \
                 (`git mas focus status` too)"
            }
            Outcome::RunIncomplete => {
                "a converge run halted without a result: missing-update-rule, unreadable-announcement, \
                 budget-exhausted; or `git mas coordinate` ended without a landing (no landable quorum, an \
                 unreadable reply, the budget)"
            }
            Outcome::CheckFailed => "a check failed: `git mas endorse` recorded a failed endorsement",
            Outcome::Partial => {
                "partial: a run landed (`git mas coordinate`, `git mas land`) and tests still fail on what landed: \
                 it improved on main (fixed at least one failing test, broke none) without passing the check"
            }
            Outcome::BrokenPipe => {
                "standard output was closed before everything was written (`git mas log | head -1`); the \
                 command stopped there, quietly, as git does (128 + SIGPIPE)"
            }
        }
    }
}

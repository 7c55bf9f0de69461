//! Errors as the user sees them: the error itself (kept whole, so that its causes are printed from
//! its source chain), a kind that decides the exit code, and any number of hints.
//!
//! Library errors become a [`CliError`] here, by variant, in `From` impls: the kind and the hints
//! are decided from what the variant carries, never from its text. [`CliError::render`] is a pure
//! function of the error, so the rendering is tested as a table (see the tests below) and the
//! output layer only writes the string it returns:
//!
//! ```text
//! Error: <the error>
//! Caused by: <its one source>          (or "Caused by:" and "1: …", "2: …" for several)
//! Hint: <a hint>                       (one line per hint)
//! ```

use super::Outcome;
use super::context::Context;
use git_mas::attention::board::Rejection;
use git_mas::attention::focus_store::PublishError;
use git_mas::attention::frame::FrameError;
use git_mas::attention::gate_io::GateIoError;
use git_mas::attention::replay::ReplayError;
use git_mas::attention::select::SelectError;
use git_mas::attention::team_gate::TeamGateError;
use git_mas::coordinate::develop::DevError;
use git_mas::coordinate::scalar::record::{RecordError, runs_prefix};
use git_mas::coordinate::scalar::{DriverError, SinkError};
use git_mas::devrun::rules::Refusal;
use git_mas::devrun::slices::SliceError;
use git_mas::devrun::{RunError, SettingError};
use git_mas::hosts::files::HostHookError;
use git_mas::hosts::mcp::HostMcpError;
use git_mas::hosts::skills::SkillsError;
use git_mas::identity::{KeyError, NameError, RosterError};
use git_mas::ops::endorse::EndorseError;
use git_mas::ops::propose::ProposeError;
use git_mas::ops::setup::SetupError;
use git_mas::pool::PoolError;
use git_mas::store::StoreError;
use git_mas::sync::SyncError;
use std::error::Error;

/// Who or what is at fault, which decides the exit code (docs/README.md, "Exit codes").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The command line itself was wrong: a value or a combination of flags that clap did not
    /// catch (exit 2, as clap's own usage errors).
    Usage,
    /// Refused or failed because of the input or the repository's state (exit 1).
    User,
    /// Us or git (exit 3).
    Internal,
    /// Something read did not verify (exit 4).
    Unverified,
    /// The gate cannot decide safely: the board or the frame cannot be read (exit 7).
    FailClosed,
    /// A write to a closed pipe: the command ends quietly, as git does (exit 141, 128 + SIGPIPE).
    BrokenPipe,
}

impl Kind {
    /// The outcome an error of this kind ends the command with.
    pub fn outcome(self) -> Outcome {
        match self {
            Kind::Usage => Outcome::Usage,
            Kind::User => Outcome::Refused,
            Kind::Internal => Outcome::Internal,
            Kind::Unverified => Outcome::Unverified,
            Kind::FailClosed => Outcome::FailClosed,
            Kind::BrokenPipe => Outcome::BrokenPipe,
        }
    }
}

/// The error type a source error is boxed as.
pub type BoxedError = Box<dyn Error + Send + Sync>;

/// An error of a command: the error, its kind and hints on what to do next.
#[derive(Debug)]
pub struct CliError {
    kind: Kind,
    error: BoxedError,
    hints: Vec<String>,
}

/// A message in front of a source error (the source's own text is printed as a cause, unless the
/// message already says it).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
struct WithMessage {
    message: String,
    #[source]
    source: BoxedError,
}

/// A plain message with no source.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Message(String);

impl CliError {
    /// An error of `kind`, keeping `error` (its text is the message, its sources the causes).
    pub fn new(kind: Kind, error: impl Into<BoxedError>) -> Self {
        CliError { kind, error: error.into(), hints: Vec::new() }
    }

    /// An error of `kind` saying `message`, caused by `source`.
    pub fn with_message(kind: Kind, message: impl Into<String>, source: impl Into<BoxedError>) -> Self {
        Self::new(kind, WithMessage { message: message.into(), source: source.into() })
    }

    /// A refusal because of the input or the repository's state (exit 1).
    pub fn user(message: impl Into<String>) -> Self {
        Self::new(Kind::User, Message(message.into()))
    }

    /// A mistake on the command line that clap did not catch (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Self::new(Kind::Usage, Message(message.into()))
    }

    /// An internal or git failure (exit 3).
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(Kind::Internal, Message(message.into()))
    }

    /// Appends a hint.
    pub fn hinted(mut self, hint: impl Into<String>) -> Self {
        self.add_hint(hint);
        self
    }

    /// Appends a hint in place.
    pub fn add_hint(&mut self, hint: impl Into<String>) {
        self.hints.push(hint.into());
    }

    /// Appends any number of hints.
    pub fn extend_hints(&mut self, hints: impl IntoIterator<Item = String>) {
        self.hints.extend(hints);
    }

    /// The kind.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The message, without causes or hints.
    pub fn message(&self) -> String {
        self.error.to_string()
    }

    /// The hints, in order.
    pub fn hints(&self) -> &[String] {
        &self.hints
    }

    /// The outcome the command ends with.
    pub fn outcome(&self) -> Outcome {
        self.kind().outcome()
    }

    /// The process exit code.
    pub fn exit_code(&self) -> u8 {
        self.outcome().code()
    }

    /// Whether this is a write to a closed pipe (exit quietly, like other Unix tools).
    pub fn is_broken_pipe(&self) -> bool {
        self.kind == Kind::BrokenPipe
    }

    /// The causes printed under the message: the source chain, without a cause whose text the
    /// message (or the cause above it) already includes — many library errors spell their source
    /// out in their own message.
    pub fn causes(&self) -> Vec<String> {
        let mut shown = self.error.to_string();
        let mut causes = Vec::new();
        let mut source = self.error.source();
        while let Some(err) = source {
            let text = err.to_string();
            if !shown.contains(&text) {
                causes.push(text.clone());
            }
            shown = text;
            source = err.source();
        }
        causes
    }

    /// The error as printed on stderr, jj's shape: `Error: …`, `Caused by: …` (numbered when
    /// there are several causes), one `Hint: …` line per hint. Headings are colored when `color`.
    pub fn render(&self, color: bool) -> String {
        let paint =
            |text: &str, code: &str| if color { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_string() };
        let mut out = format!("{} {}\n", paint("Error:", "1;31"), self.error);
        match self.causes().as_slice() {
            [] => {}
            [one] => out.push_str(&format!("{} {one}\n", paint("Caused by:", "1"))),
            many => {
                out.push_str(&format!("{}\n", paint("Caused by:", "1")));
                for (i, cause) in many.iter().enumerate() {
                    out.push_str(&format!("{} {cause}\n", paint(&format!("{}:", i + 1), "1")));
                }
            }
        }
        for hint in self.hints() {
            out.push_str(&format!("{} {hint}\n", paint("Hint:", "1;36")));
        }
        out
    }

    /// Writes [`CliError::render`] to stderr, colored as `ctx` says; nothing for a closed pipe.
    pub fn print(&self, ctx: &Context) {
        if self.is_broken_pipe() {
            return;
        }
        ctx.ui().err_text(&self.render(ctx.ui().color()));
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        let kind = if e.kind() == std::io::ErrorKind::BrokenPipe { Kind::BrokenPipe } else { Kind::Internal };
        CliError::with_message(kind, format!("i/o error: {e}"), e)
    }
}

impl From<StoreError> for CliError {
    fn from(e: StoreError) -> Self {
        let hint = e.remedy();
        let kind = match &e {
            StoreError::Roster(r) => return CliError::from(r.clone()),
            StoreError::NotARepository { .. }
            | StoreError::Bare { .. }
            | StoreError::BadRefName { .. }
            | StoreError::SeqOverflow { .. }
            | StoreError::StaleLock { .. }
            | StoreError::MissingObject { .. }
            | StoreError::UnreadableRef { .. } => Kind::User,
            StoreError::TooManyRetries { .. }
            | StoreError::Git { .. }
            | StoreError::Encode { .. }
            | StoreError::Io { .. } => Kind::Internal,
        };
        let mut err = CliError::new(kind, e);
        err.extend_hints(hint);
        err
    }
}

impl From<RosterError> for CliError {
    fn from(e: RosterError) -> Self {
        CliError::with_message(Kind::User, format!("invalid roster: {e}"), e)
            .hinted("each roster line is `name did:key:z…`; fix the line, or remove it and run `git mas agent new`")
    }
}

impl From<NameError> for CliError {
    fn from(e: NameError) -> Self {
        CliError::new(Kind::User, e)
    }
}

impl From<KeyError> for CliError {
    fn from(e: KeyError) -> Self {
        let hint = e.remedy();
        let kind = match e {
            KeyError::Random(_) | KeyError::Io { .. } => Kind::Internal,
            _ => Kind::User,
        };
        let mut err = CliError::new(kind, e);
        err.extend_hints(hint);
        err
    }
}

impl From<RunError> for CliError {
    fn from(e: RunError) -> Self {
        let e = match e {
            RunError::Store(s) => return CliError::from(s),
            other => other,
        };
        let (kind, hint) = match &e {
            RunError::Store(_) => (Kind::Internal, None),
            RunError::NoSuchRun { .. } => (Kind::User, Some("list the runs with `git mas run list`")),
            RunError::Exists { .. } => (Kind::User, Some("choose another --id, or omit it")),
            RunError::Landed { .. } | RunError::Aborted { .. } => {
                (Kind::User, Some("start a new run for further work"))
            }
            RunError::NoBranch { .. } => (
                Kind::User,
                Some("commit something on the integration branch first, or name it with `git config mas.branch`"),
            ),
            RunError::NoRun => (Kind::User, None),
            RunError::Ambiguous { .. } => (Kind::User, Some("name the run, or set it with `git config mas.run <id>`")),
            RunError::BadSetting { setting } => (setting_kind(setting), None),
            RunError::BadId { .. } | RunError::Unreadable { .. } => (Kind::User, None),
        };
        let mut err = CliError::new(kind, e);
        err.extend_hints(hint.map(str::to_string));
        err
    }
}

/// A flag's value out of range is a usage error; a roster that does not fit the repository's is
/// the repository's state.
fn setting_kind(setting: &SettingError) -> Kind {
    match setting {
        SettingError::EmptyGoal
        | SettingError::RosterName { .. }
        | SettingError::ZeroQuorum
        | SettingError::ZeroMaxRounds
        | SettingError::ZeroBudget
        | SettingError::EmptyCheck
        | SettingError::EmptyReason => Kind::Usage,
        SettingError::NotOnRoster { .. }
        | SettingError::EmptyRoster
        | SettingError::SlicesRoster { .. }
        | SettingError::Slices { .. } => Kind::User,
    }
}

impl From<PoolError> for CliError {
    fn from(e: PoolError) -> Self {
        let hint: Option<String> = match &e {
            PoolError::Store(_) | PoolError::Run(_) => None,
            PoolError::WorktreeExists { agent, run, .. } => {
                Some(format!("work in it, or remove it first: `git mas worktree remove {agent} --run {run}`"))
            }
            PoolError::PathNotEmpty { .. } => Some("choose another path, or empty that directory first".into()),
            PoolError::PathNotUtf8 { .. } => Some("use a path that is valid UTF-8".into()),
            PoolError::UnsafeTreeEntry { .. } => {
                Some("the proposal's tree cannot be checked out safely; re-propose it without that entry".into())
            }
            PoolError::AggregateWaiting { .. } => Some(
                "wait for the remaining endorsements (`git mas tally`), or land the leader alone without --aggregate"
                    .into(),
            ),
            PoolError::NoProposalAtQuorum { .. } | PoolError::QuorumNotReached { .. } => {
                Some("`git mas tally` shows each proposal's valid endorsements".into())
            }
            PoolError::CheckFailed { agent, .. } => {
                Some(format!("re-check with `git mas endorse {agent}`, or re-propose with `git mas propose`"))
            }
            PoolError::DependencyInconsistent { .. } => {
                Some("re-propose on the run's base, or land the proposal it depends on first".into())
            }
            PoolError::NoBranch { .. } => {
                Some("commit something on the integration branch first, or name it with `git config mas.branch`".into())
            }
            PoolError::CheckoutCannotFollow { .. } => {
                Some("commit or stash the changes in that checkout, then land again".into())
            }
            PoolError::LandedRefExists { refname, .. } => {
                Some(format!("inspect it with `git show-ref {refname}`; `git update-ref -d {refname}` removes it"))
            }
            _ => None,
        };
        // The library says which of its errors are refusals (the caller's input or the
        // repository's state), as opposed to failures of git or git-mas.
        let kind = if e.is_refusal() { Kind::User } else { Kind::Internal };
        let err = match e {
            PoolError::Store(s) => return CliError::from(s),
            PoolError::Run(r) => return CliError::from(r),
            e => CliError::new(kind, e),
        };
        match hint {
            Some(h) => err.hinted(h),
            None => err,
        }
    }
}

impl From<GateIoError> for CliError {
    fn from(e: GateIoError) -> Self {
        let hint = match &e {
            GateIoError::Roster { source: StoreError::Roster(_) } => Some(
                "each roster line is `name did:key:z…`; fix the line, or remove it and run `git mas agent new`".into(),
            ),
            GateIoError::CurrentFrame { .. } | GateIoError::Frame { .. } => {
                Some("publish a new frame with `git mas snapshot --publish`".into())
            }
            GateIoError::Roster { source } | GateIoError::Board { source } => source.remedy(),
            GateIoError::Touched(_) => None,
        };
        let mut err = CliError::new(Kind::FailClosed, e);
        err.extend_hints(hint);
        err
    }
}

impl From<PublishError> for CliError {
    fn from(e: PublishError) -> Self {
        let e = match e {
            PublishError::Store(s) => return CliError::from(s),
            other => other,
        };
        let hint = match &e {
            PublishError::Store(_) => None,
            PublishError::Rejected { rejection, .. } => match rejection {
                Rejection::TooManyTargets { .. } => Some("name fewer targets, or take fewer with --top K"),
                Rejection::UnknownTarget { .. } => Some("list the frame's targets with `git mas frame --top 50`"),
                Rejection::PathEscapes { .. } => Some("name a path inside the repository: relative, without `..`"),
                Rejection::Flood | Rejection::PrincipalFlood { .. } => {
                    Some("wait for a focus to lapse, or for its agent to run `git mas focus release`")
                }
                Rejection::BadLease { .. } | Rejection::Unverified { .. } | Rejection::Malformed { .. } => None,
            },
        };
        let mut err = CliError::new(Kind::User, e);
        err.extend_hints(hint.map(str::to_string));
        err
    }
}

impl From<RecordError> for CliError {
    fn from(e: RecordError) -> Self {
        let e = match e {
            RecordError::Store(store) => return CliError::from(store),
            other => other,
        };
        let (kind, hint) = match &e {
            RecordError::Store(_) => (Kind::Internal, None),
            RecordError::NotFound { .. } => (
                Kind::User,
                Some(format!(
                    "runs are recorded under {}<run>/; `git mas log` lists every chain, run ids included",
                    runs_prefix()
                )),
            ),
            RecordError::BadRunId { .. } => (Kind::User, None),
            RecordError::Exists { .. } | RecordError::Serialize(_) => (Kind::Internal, None),
            RecordError::Unverified { .. } | RecordError::Malformed { .. } => (
                Kind::Unverified,
                Some("inspect the chain with `git mas log <ref>`; a run is rendered only from verified records".into()),
            ),
        };
        let mut err = CliError::new(kind, e);
        err.extend_hints(hint);
        err
    }
}

impl From<FrameError> for CliError {
    fn from(e: FrameError) -> Self {
        let e = match e {
            FrameError::Store(store) => return CliError::from(store),
            other => other,
        };
        let kind = match &e {
            FrameError::Store(_) | FrameError::Git { .. } => Kind::Internal,
            FrameError::NoFrame
            | FrameError::ReadInput { .. }
            | FrameError::InputTooLarge { .. }
            | FrameError::Scip { .. }
            | FrameError::Diagnostics { .. }
            | FrameError::Incomplete { .. } => Kind::User,
        };
        let hint = e.remedy();
        let mut err = CliError::new(kind, e);
        err.extend_hints(hint);
        err
    }
}

impl From<SyncError> for CliError {
    fn from(e: SyncError) -> Self {
        let e = match e {
            SyncError::Store(store) => return CliError::from(store),
            other => other,
        };
        let (kind, hint) = match &e {
            SyncError::Store(_) | SyncError::Spawn { .. } | SyncError::Mutex { .. } | SyncError::Sweep { .. } => {
                (Kind::Internal, None)
            }
            SyncError::Busy { .. } => (Kind::User, Some("wait for the other sync to finish")),
            SyncError::BadRemote { .. } => {
                (Kind::Usage, Some("name a remote `git remote` lists, or give a URL or a path"))
            }
            SyncError::Fetch { stderr, .. } | SyncError::Push { stderr, .. } => {
                (Kind::User, Some(transport_hint(stderr).unwrap_or("check the remote with `git remote -v`")))
            }
        };
        let mut err = CliError::new(kind, e);
        err.extend_hints(hint.map(str::to_string));
        err
    }
}

/// What to do about a failed fetch or push, from git's message: wrong or missing credentials, a
/// server that does not let this user push, an address nothing answers at. `None` when git's
/// message names none of them.
fn transport_hint(stderr: &str) -> Option<&'static str> {
    let s = stderr.to_ascii_lowercase();
    if s.contains("could not read username") || s.contains("could not read password") {
        Some(
            "git has no credentials for the remote and cannot ask (it asks only when git mas's standard input is a \
             terminal): store them with a credential helper (`git config credential.helper`), or run the sync \
             from a terminal",
        )
    } else if s.contains("authentication failed") {
        Some(
            "the remote did not accept the credentials git gave it: check the user and password (or token) in \
             git's credential helper (`git config credential.helper`) or in the remote's URL; git mas only passes \
             them through to git",
        )
    } else if s.contains("returned error: 403") {
        Some(
            "the server refuses this user (HTTP 403): for a push, it must let the user push (git http-backend \
             lets only an authenticated user push, unless http.receivepack is set)",
        )
    } else if s.contains("returned error: 404") || s.contains("does not appear to be a git repository") {
        Some("no repository answers at that address: check the URL with `git remote -v`")
    } else if s.contains("could not connect") || s.contains("connection refused") || s.contains("failed to connect") {
        Some("nothing answers at the remote's address: is the server running, and the host and port right?")
    } else {
        None
    }
}

impl From<SkillsError> for CliError {
    fn from(e: SkillsError) -> Self {
        let hint = match &e {
            SkillsError::Conflicts(_) => {
                Some("nothing was changed; look at the differences, then run again with --force to overwrite them")
            }
            SkillsError::NoHome => Some("set HOME, or name the directory with --dir DIR"),
            SkillsError::Io { .. } => None,
        };
        let mut err = CliError::new(Kind::User, e);
        err.extend_hints(hint.map(str::to_string));
        err
    }
}

impl From<HostHookError> for CliError {
    /// A host's configuration file that `hooks|mcp install` cannot change: nothing was written.
    fn from(e: HostHookError) -> Self {
        let hint = match &e {
            HostHookError::Invalid { .. } | HostHookError::Shape { .. } => {
                Some("fix the file (or move it aside) and run the command again; nothing was written")
            }
            HostHookError::NotOurs { .. } => {
                Some("move that file aside to let git-mas write its own; nothing was written")
            }
            HostHookError::NoHome { .. } => Some("set HOME (or the host's own directory variable)"),
            HostHookError::Io { .. } | HostHookError::Git { .. } => None,
        };
        let mut err = CliError::new(Kind::User, e);
        err.extend_hints(hint.map(str::to_string));
        err
    }
}

impl From<HostMcpError> for CliError {
    fn from(e: HostMcpError) -> Self {
        match e {
            HostMcpError::File(file) => CliError::from(file),
            unsupported @ HostMcpError::Unsupported { .. } => CliError::new(Kind::User, unsupported),
        }
    }
}

impl From<Refusal> for CliError {
    /// A refused proposal or endorsement: a user error with what to do instead, or a usage error
    /// when a flag's value is blank.
    fn from(e: Refusal) -> Self {
        let e = match e {
            Refusal::Ended(run) => return CliError::from(run),
            blank @ (Refusal::EmptyMessage | Refusal::EmptyReason) => return CliError::new(Kind::Usage, blank),
            other => other,
        };
        let hint = match &e {
            Refusal::Ended(_) | Refusal::EmptyMessage | Refusal::EmptyReason => None,
            Refusal::BudgetExhausted { .. } => {
                Some("land what has a quorum with `git mas land`, or stop the run with `git mas run abort`".to_string())
            }
            Refusal::RoundLimit { .. } => {
                Some("re-propose your current content, land what has a quorum, or abort the run".to_string())
            }
            Refusal::SelfEndorsement { .. } => Some(
                "ask another agent to endorse it, or allow it for this repository with `git config mas.allowSelfEndorse true`"
                    .to_string(),
            ),
            Refusal::EmptyCheck => Some("endorse by review alone with --no-check".to_string()),
            Refusal::NoCheck { .. } => {
                Some("pass --check CMD, set `git config mas.check CMD`, or endorse by review with --no-check".to_string())
            }
            Refusal::NoProposal { proposer, .. } => Some(format!("{proposer} proposes with `git mas propose` in its worktree")),
            Refusal::ProposalRefChanged { proposer, .. } => Some(format!("{proposer} re-proposes with `git mas propose`")),
            Refusal::NothingToPropose { .. } => Some(
                "change your slice's files and propose again, or say why it needs no change: `git mas propose --abstain -m \"<why>\"`"
                    .to_string(),
            ),
            Refusal::AbstainWithChanges { .. } => Some(
                "propose them (`git mas propose`), or put them back (`git checkout -- <path>`, `git clean`) and abstain again"
                    .to_string(),
            ),
            Refusal::Abstained { .. } => Some("endorse the proposals that change something (`git mas tally`)".to_string()),
            Refusal::CallerNotOnRoster { .. }
            | Refusal::NotOnRoster { .. }
            | Refusal::AbstainWithoutSlices { .. } => None,
        };
        let kind = if matches!(e, Refusal::EmptyCheck) { Kind::Usage } else { Kind::User };
        let err = CliError::new(kind, e);
        match hint {
            Some(h) => err.hinted(h),
            None => err,
        }
    }
}

/// A driver's sink failed: an error of ours that the sink gave (a stale lock while recording, a
/// hook that could not be installed in a worktree) keeps its own kind and hints; anything else is
/// internal, under `message`.
fn sink_error(message: &str, source: SinkError) -> CliError {
    fn take<E: Error + Send + Sync + 'static>(source: SinkError) -> Result<E, SinkError> {
        source.downcast::<E>().map(|e| *e)
    }
    let source = match take::<StoreError>(source) {
        Ok(e) => return CliError::from(e),
        Err(other) => other,
    };
    let source = match take::<RecordError>(source) {
        Ok(e) => return CliError::from(e),
        Err(other) => other,
    };
    let source = match take::<HostHookError>(source) {
        Ok(e) => return CliError::from(e),
        Err(other) => other,
    };
    match take::<HostMcpError>(source) {
        Ok(e) => CliError::from(e),
        Err(other) => CliError::with_message(Kind::Internal, message, other),
    }
}

impl From<TeamGateError> for CliError {
    fn from(e: TeamGateError) -> Self {
        use TeamGateError as E;
        match e {
            E::Caller(e) => CliError::from(e),
            E::Store(e) => CliError::from(e),
            e => {
                let hint = e.remedy();
                let mut err = CliError::new(Kind::User, e);
                err.extend_hints(hint);
                err
            }
        }
    }
}

impl From<DevError> for CliError {
    fn from(e: DevError) -> Self {
        match e {
            DevError::Run(r) => CliError::from(r),
            DevError::Pool(p) => CliError::from(p),
            DevError::Store(s) => CliError::from(s),
            DevError::Sink { source } => sink_error("the run's events could not be streamed", source),
            e @ DevError::SliceHeld { .. } => CliError::new(Kind::User, e).hinted(
                "wait for the holder to finish or ask it to release (`git mas release <glob>`); `git mas status` lists \
                 lanes and claims",
            ),
            DevError::Key { source, .. } => CliError::from(source),
            DevError::Team(t) => CliError::from(TeamGateError::from(t)),
        }
    }
}

impl From<DriverError> for CliError {
    fn from(e: DriverError) -> Self {
        match e {
            roster @ DriverError::Roster { .. } => CliError::new(Kind::User, roster),
            engine @ DriverError::Engine { .. } => CliError::new(Kind::Internal, engine),
            DriverError::Sink { source } => sink_error("the run's events could not be recorded", source),
        }
    }
}

impl From<ReplayError> for CliError {
    fn from(e: ReplayError) -> Self {
        match e {
            ReplayError::Store(s) => CliError::from(s),
            range @ ReplayError::Range { .. } => {
                CliError::new(Kind::User, range).hinted("name a range git knows, such as `origin/main..HEAD`")
            }
            internal @ (ReplayError::Spawn { .. } | ReplayError::Commit { .. } | ReplayError::Touched(_)) => {
                CliError::new(Kind::Internal, internal)
            }
        }
    }
}

impl From<SelectError> for CliError {
    fn from(e: SelectError) -> Self {
        match e {
            not_in @ SelectError::NotInFrame { .. } => {
                CliError::new(Kind::User, not_in).hinted("list the frame's targets with `git mas frame --top 50`")
            }
            escapes @ SelectError::Escapes { .. } => CliError::new(Kind::User, escapes),
            glob @ SelectError::BadGlob { .. } => CliError::new(Kind::Usage, glob),
        }
    }
}

impl From<SliceError> for CliError {
    fn from(e: SliceError) -> Self {
        match e {
            few @ SliceError::TooFewTargets { .. } => {
                CliError::new(Kind::User, few).hinted("run with fewer agents, or without --aggregate")
            }
            other => CliError::new(Kind::User, other),
        }
    }
}

impl From<ProposeError> for CliError {
    fn from(e: ProposeError) -> Self {
        match e {
            ProposeError::Refused(r) => CliError::from(r),
            ProposeError::Run(r) => CliError::from(r),
            ProposeError::Pool(p) => CliError::from(p),
            replay @ ProposeError::Replay { .. } => CliError::new(Kind::Internal, replay),
        }
    }
}

impl From<EndorseError> for CliError {
    fn from(e: EndorseError) -> Self {
        match e {
            EndorseError::Refused(r) => CliError::from(r),
            EndorseError::Run(r) => CliError::from(r),
            EndorseError::Pool(p) => CliError::from(p),
            internal @ (EndorseError::Replay { .. }
            | EndorseError::NotATree { .. }
            | EndorseError::BadTreeId { .. }
            | EndorseError::Output { .. }
            | EndorseError::NotAVerdict) => CliError::new(Kind::Internal, internal),
        }
    }
}

impl From<SetupError> for CliError {
    /// A team setup or undo refused (nothing was written) or failed midway (its record lets undo,
    /// or the setup run again, complete it).
    fn from(e: SetupError) -> Self {
        let e = match e {
            SetupError::Store(e) => return CliError::from(e),
            SetupError::Key(e) => return CliError::from(e),
            SetupError::Name(e) => return CliError::from(e),
            SetupError::Hook(e) => return CliError::from(e),
            SetupError::Mcp(e) => return CliError::from(e),
            SetupError::Frame(e) => return CliError::from(e),
            SetupError::Skills(conflicts @ SkillsError::Conflicts(_)) => {
                return CliError::new(Kind::User, conflicts).hinted(
                    "nothing was written; move those folders aside (or `git mas skills install --force`) and run it again",
                );
            }
            SetupError::Skills(e) => return CliError::from(e),
            other => other,
        };
        let hint = match &e {
            SetupError::NoName => "name the member: git mas init --team --name NAME".to_string(),
            SetupError::NotHeld { name } => format!(
                "name another member with --name NAME, or put the key of '{name}' in this machine's key directory \
                 ($GIT_MAS_KEY_DIR)"
            ),
            SetupError::Busy { lock, .. } => {
                format!("wait for it to finish; if no git mas is running here, remove {}", lock.display())
            }
            SetupError::NotText { .. } | SetupError::NoManifest { .. } => "nothing was changed".to_string(),
            SetupError::BadManifest { .. } => {
                "nothing was changed; the record is JSON, and the bytes each file had before are in its blobs/ folder"
                    .to_string()
            }
            SetupError::Changed { .. } => "nothing was undone; `git mas init --team --undo --force` restores them \
                                           too (the changes made since the setup are lost)"
                .to_string(),
            _ => "what was done is recorded: run the command again, or undo it with `git mas init --team --undo`"
                .to_string(),
        };
        let kind = match &e {
            SetupError::Io { .. } | SetupError::Git { .. } => Kind::Internal,
            _ => Kind::User,
        };
        CliError::new(kind, e).hinted(hint)
    }
}

#[cfg(test)]
#[path = "error_tests.rs"]
mod tests;

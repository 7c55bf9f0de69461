//! The tests of `error.rs`: every error variant rendered, with its hints and exit code.

use super::*;
use git_mas::attention::frame::InputKind;
use git_mas::attention::touched::TouchedError;
use git_mas::engines::EngineError;
use git_mas::hosts::skills::Conflict;
use std::io::{Error as IoError, ErrorKind};
use std::path::PathBuf;
use std::time::Duration;

/// One row of the table: an error as the user sees it.
struct Row {
    variant: &'static str,
    error: CliError,
    code: u8,
    text: String,
}

/// Rows for every variant of `$ty`: `Variant => sample, exit code, rendering;`. The match in
/// `listed` names each row's variant and has no wildcard, so a variant added to `$ty`
/// without a row here does not compile; each sample is checked to be the variant its row
/// names. `$into` makes the sample a `CliError`.
macro_rules! rows {
    ($ty:ident via $into:expr; $( $variant:ident => $sample:expr, $code:expr, $text:expr; )+) => {{
        #[allow(unreachable_patterns, dead_code)]
        fn listed(e: &$ty) {
            match e {
                $( $ty::$variant { .. } => {} )+
            }
        }
        let into: fn($ty) -> CliError = $into;
        vec![$({
            let sample: $ty = $sample;
            assert!(
                matches!(sample, $ty::$variant { .. }),
                "the {}::{} row's sample is another variant",
                stringify!($ty),
                stringify!($variant)
            );
            Row {
                variant: concat!(stringify!($ty), "::", stringify!($variant)),
                error: into(sample),
                code: $code,
                text: String::from($text),
            }
        }),+]
    }};
}

fn io(kind: ErrorKind, text: &str) -> IoError {
    IoError::new(kind, text.to_string())
}

fn key() -> PathBuf {
    PathBuf::from("/keys/alice.key")
}

const ROSTER_HINT: &str =
    "Hint: each roster line is `name did:key:z…`; fix the line, or remove it and run `git mas agent new`\n";

fn roster_encoding() -> RosterError {
    RosterError::Encoding { origin: "main:.mas/roster".into() }
}

fn store_git() -> StoreError {
    StoreError::Git { context: "reading the roster".into(), source: "object not found".into() }
}

fn incomplete() -> FrameError {
    FrameError::Incomplete { commit: "abc123".into(), what: "no snapshot.json".into() }
}

fn rejected(rejection: Rejection) -> CliError {
    CliError::from(PublishError::Rejected {
        agent: "alice".into(),
        refname: "refs/mas/focus/alice".into(),
        frame: "f00d".into(),
        rejection,
    })
}

fn table() -> Vec<Row> {
    let mut rows = Vec::new();
    rows.extend(rows!(StoreError via CliError::from;
        NotARepository => StoreError::NotARepository { path: "/tmp/x".into() }, 1,
            "Error: not a git repository (or any parent up to the file system root): /tmp/x\n\
             Hint: run this inside a git repository, or pass -C <path>; `git init` creates one\n";
        Bare => StoreError::Bare { path: "/srv/r.git".into() }, 1,
            "Error: this command needs a working tree, but /srv/r.git is a bare repository\n\
             Hint: run it in a clone or a worktree of this repository\n";
        BadRefName => StoreError::BadRefName { name: "refs/heads/main".into() }, 1,
            "Error: \"refs/heads/main\" is not a valid ref under refs/mas/\n";
        Roster => StoreError::Roster(roster_encoding()), 1,
            format!("Error: invalid roster: main:.mas/roster is not UTF-8 text\n{ROSTER_HINT}");
        TooManyRetries => StoreError::TooManyRetries { refname: "refs/mas/journal/alice".into(), attempts: 64 }, 3,
            "Error: gave up appending to refs/mas/journal/alice after 64 lost races\n";
        SeqOverflow => StoreError::SeqOverflow { refname: "refs/mas/journal/alice".into() }, 1,
            "Error: sequence number overflow in refs/mas/journal/alice\n";
        StaleLock => StoreError::StaleLock {
            refname: "refs/mas/journal/alice".into(),
            lock: "/repo/.git/refs/mas/journal/alice.lock".into(),
            age: Duration::from_secs(120),
        }, 1,
            "Error: /repo/.git/refs/mas/journal/alice.lock blocks updating refs/mas/journal/alice: it was left \
             120 s ago by a process that did not finish\n\
             Hint: if no git-mas or git command is still running here, remove it: `git mas doctor --fix` \
             (or `rm /repo/.git/refs/mas/journal/alice.lock`)\n";
        UnreadableRef => StoreError::UnreadableRef { name: "refs/mas/journal/alice".into(), content: "junk".into() }, 1,
            "Error: ref refs/mas/journal/alice is unreadable: it holds \"junk\"\n\
             Hint: inspect it with `git show-ref refs/mas/journal/alice`; \
             `git update-ref -d refs/mas/journal/alice` removes it\n";
        MissingObject => StoreError::MissingObject {
            record: gix::ObjectId::from_hex(b"1111111111111111111111111111111111111111").unwrap(),
            missing: gix::ObjectId::from_hex(b"2222222222222222222222222222222222222222").unwrap(),
            what: git_mas::store::damage::Part::Blob,
        }, 1,
            "Error: record 1111111111111111111111111111111111111111 cannot be read: its record blob \
             2222222222222222222222222222222222222222 is missing from the object database\n\
             Hint: `git mas doctor` names the damaged chain; `git mas doctor --fix` cuts it back to its last \
             whole record\n";
        Git => store_git(), 3,
            "Error: git: reading the roster\nCaused by: object not found\n";
        Io => StoreError::Io { path: "/repo/.mas/roster".into(), source: io(ErrorKind::PermissionDenied, "permission denied") }, 3,
            "Error: cannot access /repo/.mas/roster\nCaused by: permission denied\n";
        Encode => StoreError::Encode { what: "a focus".into(), source: serde_json::from_str::<u8>("x").unwrap_err() }, 3,
            "Error: cannot encode a focus\nCaused by: expected value at line 1 column 1\n";
    ));
    rows.extend(rows!(RosterError via CliError::from;
        Shape => RosterError::Shape { origin: "main:.mas/roster".into(), line: 3, text: "alice".into() }, 1,
            format!("Error: invalid roster: main:.mas/roster line 3: expected `name did:key`, found \"alice\"\n{ROSTER_HINT}");
        Name => RosterError::Name { origin: "main:.mas/roster".into(), line: 2, reason: NameError::Empty }, 1,
            format!("Error: invalid roster: main:.mas/roster line 2: agent name is empty\n{ROSTER_HINT}");
        Did => RosterError::Did { origin: "main:.mas/roster".into(), line: 4, did: "did:web:x".into() }, 1,
            format!("Error: invalid roster: main:.mas/roster line 4: \"did:web:x\" is not an ed25519 did:key\n{ROSTER_HINT}");
        Duplicate => RosterError::Duplicate { origin: "main:.mas/roster".into(), line: 5, name: "alice".into(), first: 1 }, 1,
            format!("Error: invalid roster: main:.mas/roster line 5: agent 'alice' is already listed on line 1\n{ROSTER_HINT}");
        Encoding => roster_encoding(), 1,
            format!("Error: invalid roster: main:.mas/roster is not UTF-8 text\n{ROSTER_HINT}");
    ));
    rows.extend(rows!(NameError via CliError::from;
        Empty => NameError::Empty, 1, "Error: agent name is empty\n";
        TooLong => NameError::TooLong { name: "a".repeat(64), len: 64 }, 1,
            format!("Error: agent name \"{}\" is 64 characters long; the limit is 63\n", "a".repeat(64));
        BadChar => NameError::BadChar { name: "Alice".into(), found: 'A', pos: 0 }, 1,
            "Error: agent name \"Alice\" contains 'A' at position 0; use lower-case letters, digits, '.', '_' \
             and '-' (starting with a letter or digit)\n";
        DotDot => NameError::DotDot { name: "a..b".into() }, 1, "Error: agent name \"a..b\" contains '..'\n";
        LockSuffix => NameError::LockSuffix { name: "a.lock".into() }, 1,
            "Error: agent name \"a.lock\" ends with '.lock', which git reserves\n";
    ));
    rows.extend(rows!(KeyError via CliError::from;
        Missing => KeyError::Missing { name: "alice".into(), path: key() }, 1,
            "Error: no private key for agent 'alice' at /keys/alice.key\n\
             Hint: this machine has no key for 'alice'; set GIT_MAS_KEY_DIR to where it is, or create a new \
             agent with `git mas agent new`\n";
        TooOpen => KeyError::TooOpen { path: key(), mode: 0o644 }, 1,
            "Error: private key /keys/alice.key is readable by others (mode 644); run `chmod 600 /keys/alice.key`\n\
             Hint: chmod 600 /keys/alice.key\n";
        Malformed => KeyError::Malformed { path: key() }, 1,
            "Error: private key /keys/alice.key is not 64 hex digits\n";
        Exists => KeyError::Exists { name: "alice".into(), path: key() }, 1,
            "Error: a private key for 'alice' already exists at /keys/alice.key\n\
             Hint: pass --reuse-key to put the existing key for 'alice' on this roster\n";
        NoKeyDir => KeyError::NoKeyDir, 1,
            "Error: cannot find a key directory: set GIT_MAS_KEY_DIR, XDG_CONFIG_HOME or HOME\n";
        Random => KeyError::Random("no entropy".into()), 3, "Error: the system random source failed: no entropy\n";
        Io => KeyError::Io { path: key(), source: io(ErrorKind::PermissionDenied, "permission denied") }, 3,
            "Error: cannot access key file /keys/alice.key\nCaused by: permission denied\n";
        BadDid => KeyError::BadDid { did: "did:key:zX".into() }, 1, "Error: \"did:key:zX\" is not an ed25519 did:key\n";
    ));
    rows.extend(rows!(RunError via CliError::from;
        BadId => RunError::BadId { id: "Bad/Id".into(), why: "it contains '/'".into() }, 1,
            "Error: run id \"Bad/Id\" is not valid: it contains '/'\n";
        NoSuchRun => RunError::NoSuchRun { id: "r9".into() }, 1,
            "Error: no run \"r9\" in this repository\nHint: list the runs with `git mas run list`\n";
        Exists => RunError::Exists { id: "r1".into() }, 1,
            "Error: a run \"r1\" already exists\nHint: choose another --id, or omit it\n";
        Unreadable => RunError::Unreadable { id: "r1".into(), why: "the meta chain is empty".into() }, 1,
            "Error: run \"r1\" has no readable, verified definition: the meta chain is empty\n";
        BadSetting => RunError::BadSetting { setting: SettingError::ZeroQuorum }, 2,
            "Error: --quorum must be at least 1\n";
        NoRun => RunError::NoRun, 1,
            "Error: no run named, no `mas.run` in git config, and no run in this repository: start one with \
             `git mas run start --goal …`\n";
        Ambiguous => RunError::Ambiguous { open: vec!["r1".into(), "r2".into()] }, 1,
            "Error: 2 runs are open (r1, r2); name one\nHint: name the run, or set it with `git config mas.run <id>`\n";
        NoBranch => RunError::NoBranch { branch: "main".into() }, 1,
            "Error: the integration branch \"main\" does not exist: a run starts from its tip\n\
             Hint: commit something on the integration branch first, or name it with `git config mas.branch`\n";
        Aborted => RunError::Aborted { id: "r1".into(), reason: "wrong goal".into() }, 1,
            "Error: run \"r1\" was aborted: wrong goal\nHint: start a new run for further work\n";
        Landed => RunError::Landed { id: "r1".into(), commit: "abc123".into(), by: "alice".into() }, 1,
            "Error: run \"r1\" already landed as abc123 (by alice)\nHint: start a new run for further work\n";
        Store => RunError::Store(store_git()), 3, "Error: git: reading the roster\nCaused by: object not found\n";
    ));
    rows.extend(rows!(SettingError via |s| CliError::from(RunError::from(s));
        EmptyGoal => SettingError::EmptyGoal, 2,
            "Error: the goal is empty; say what the team is to achieve with --goal\n";
        RosterName => SettingError::RosterName { source: NameError::DotDot { name: "a..b".into() } }, 2,
            "Error: --roster: agent name \"a..b\" contains '..'\n";
        NotOnRoster => SettingError::NotOnRoster { name: "zed".into() }, 1,
            "Error: --roster names 'zed', who is not on the repository's roster (.mas/roster)\n";
        EmptyRoster => SettingError::EmptyRoster, 1,
            "Error: the run's roster is empty: add agents with `git mas agent new` and commit .mas/roster\n";
        ZeroQuorum => SettingError::ZeroQuorum, 2, "Error: --quorum must be at least 1\n";
        ZeroMaxRounds => SettingError::ZeroMaxRounds, 2, "Error: --max-rounds must be at least 1\n";
        ZeroBudget => SettingError::ZeroBudget, 2, "Error: --budget must be longer than zero\n";
        EmptyCheck => SettingError::EmptyCheck, 2, "Error: --check is empty\n";
        EmptyReason => SettingError::EmptyReason, 2,
            "Error: the reason is empty; say why the run stops with --reason\n";
        SlicesRoster => SettingError::SlicesRoster { slices: vec!["alice".into()], roster: vec!["alice".into(), "bob".into()] }, 1,
            "Error: the plan's slices are for alice but the run's roster is alice, bob\n";
        Slices => SettingError::Slices { source: SliceError::Missing { agent: "bob".into() } }, 1,
            "Error: the plan is refused: no SLICE or REVIEW line for bob\n";
    ));
    rows.extend(rows!(PoolError via CliError::from;
        Git => PoolError::Git {
            args: "merge-tree --write-tree a b".into(),
            status: "exit status: 128".into(),
            stderr: "fatal: bad object".into(),
        }, 3,
            "Error: `git merge-tree --write-tree a b` failed (exit status: 128): fatal: bad object\n";
        Spawn => PoolError::Spawn(io(ErrorKind::NotFound, "no such file")), 3, "Error: cannot run git: no such file\n";
        Io => PoolError::Io { path: "/repo/.git/mas/x".into(), source: io(ErrorKind::PermissionDenied, "permission denied") }, 3,
            "Error: cannot access /repo/.git/mas/x\nCaused by: permission denied\n";
        MainMoved => PoolError::MainMoved { branch: "main".into() }, 3, "Error: the integration branch moved while landing\n";
        NotAnObjectId => PoolError::NotAnObjectId { text: "xyz".into() }, 3, "Error: \"xyz\" is not an object id\n";
        WriteTreeOutput => PoolError::WriteTreeOutput { printed: "oops".into() }, 3,
            "Error: git write-tree printed \"oops\", not a tree id\n";
        WorktreeExists => PoolError::WorktreeExists { agent: "alice".into(), run: "r1".into(), path: "/w/alice".into() }, 1,
            "Error: alice already has a worktree for run r1 at /w/alice\n\
             Hint: work in it, or remove it first: `git mas worktree remove alice --run r1`\n";
        PathNotEmpty => PoolError::PathNotEmpty { path: "/w/x".into() }, 1,
            "Error: /w/x already exists and is not empty\nHint: choose another path, or empty that directory first\n";
        PathNotUtf8 => PoolError::PathNotUtf8 { path: "/w/x".into() }, 1,
            "Error: /w/x is not UTF-8\nHint: use a path that is valid UTF-8\n";
        UnsafeTreeEntry => PoolError::UnsafeTreeEntry { tree: "abc".into(), name: ".git".into() }, 1,
            "Error: tree abc holds an entry named \".git\", which is not checked out\n\
             Hint: the proposal's tree cannot be checked out safely; re-propose it without that entry\n";
        CheckSpawn => PoolError::CheckSpawn { command: "make".into(), source: io(ErrorKind::NotFound, "no sh") }, 1,
            "Error: cannot start `sh -c make`: no sh\n";
        AggregateWaiting => PoolError::AggregateWaiting { run: "r1".into(), waiting: vec!["bob".into()] }, 1,
            "Error: an aggregate landing waits for every proposal to reach quorum or be judged against; still waiting for bob\n\
             Hint: wait for the remaining endorsements (`git mas tally`), or land the leader alone without --aggregate\n";
        NoProposalAtQuorum => PoolError::NoProposalAtQuorum { run: "r1".into(), quorum: 2 }, 1,
            "Error: no proposal has reached the quorum of 2\nHint: `git mas tally` shows each proposal's valid endorsements\n";
        QuorumNotReached => PoolError::QuorumNotReached { run: "r1".into(), quorum: 2, leader: None }, 1,
            format!("Error: {}\nHint: `git mas tally` shows each proposal's valid endorsements\n",
                PoolError::QuorumNotReached { run: "r1".into(), quorum: 2, leader: None });
        CheckFailed => PoolError::CheckFailed { run: "r1".into(), agent: "bob".into(), endorsers: vec!["carol".into()] }, 1,
            "Error: bob's proposal reached quorum, but the latest check by carol failed on it (test_failure); it lands \
             after a passing re-check or a re-proposal\n\
             Hint: re-check with `git mas endorse bob`, or re-propose with `git mas propose`\n";
        DependencyInconsistent => PoolError::DependencyInconsistent { run: "r1".into(), agent: "bob".into(), detail: "bob builds on a".into() }, 1,
            "Error: bob builds on a (dependency_inconsistency)\n\
             Hint: re-propose on the run's base, or land the proposal it depends on first\n";
        NoBranch => PoolError::NoBranch { branch: "main".into() }, 1,
            "Error: the branch main does not exist\n\
             Hint: commit something on the integration branch first, or name it with `git config mas.branch`\n";
        NothingToLand => PoolError::NothingToLand { run: "r1".into() }, 1, "Error: no proposal to land\n";
        LandingBlocked => PoolError::LandingBlocked { run: "r1".into() }, 3, "Error: the landing is blocked\n";
        CheckoutCannotFollow => PoolError::CheckoutCannotFollow { branch: "main".into(), path: "/r".into(), why: "dirty".into() }, 1,
            "Error: main is checked out at /r and cannot follow the landing: dirty\n\
             Hint: commit or stash the changes in that checkout, then land again\n";
        LandedRefExists => PoolError::LandedRefExists { refname: "refs/mas/runs/r1/landed".into(), existing: "abc".into() }, 1,
            "Error: refs/mas/runs/r1/landed already exists (at abc) although the run's meta chain records no landing; \
             it was written outside `git mas land`\n\
             Hint: inspect it with `git show-ref refs/mas/runs/r1/landed`; `git update-ref -d refs/mas/runs/r1/landed` removes it\n";
        NothingWritten => PoolError::NothingWritten { run: "r1".into() }, 3, "Error: the landing wrote nothing\n";
        Store => PoolError::Store(StoreError::Bare { path: "/srv/r.git".into() }), 1,
            "Error: this command needs a working tree, but /srv/r.git is a bare repository\n\
             Hint: run it in a clone or a worktree of this repository\n";
        Run => PoolError::Run(RunError::NoSuchRun { id: "r9".into() }), 1,
            "Error: no run \"r9\" in this repository\nHint: list the runs with `git mas run list`\n";
    ));
    rows.extend(rows!(Refusal via CliError::from;
        Ended => Refusal::Ended(RunError::Aborted { id: "r1".into(), reason: "wrong goal".into() }), 1,
            "Error: run \"r1\" was aborted: wrong goal\nHint: start a new run for further work\n";
        CallerNotOnRoster => Refusal::CallerNotOnRoster { agent: "zed".into(), run: "r1".into(), roster: vec!["alice".into(), "bob".into()] }, 1,
            "Error: you (zed) are not on run r1's roster (alice, bob)\n";
        NotOnRoster => Refusal::NotOnRoster { agent: "zed".into(), run: "r1".into(), roster: vec!["alice".into()] }, 1,
            "Error: 'zed' is not on run r1's roster (alice)\n";
        BudgetExhausted => Refusal::BudgetExhausted { run: "r1".into(), budget_ms: 60_000, used_ms: 61_000 }, 1,
            "Error: run r1's budget of 1m is exhausted\n\
             Hint: land what has a quorum with `git mas land`, or stop the run with `git mas run abort`\n";
        RoundLimit => Refusal::RoundLimit { run: "r1".into(), round: 4, max: 3 }, 1,
            "Error: this would be your round 4 in run r1, which allows 3: your proposal stays as it is\n\
             Hint: re-propose your current content, land what has a quorum, or abort the run\n";
        EmptyMessage => Refusal::EmptyMessage, 2, "Error: the message is empty\n";
        SelfEndorsement => Refusal::SelfEndorsement { agent: "alice".into() }, 1,
            "Error: you cannot endorse your own proposal: self-endorsement is off\n\
             Hint: ask another agent to endorse it, or allow it for this repository with \
             `git config mas.allowSelfEndorse true`\n";
        EmptyReason => Refusal::EmptyReason, 2, "Error: --reason is empty: say why you reject it\n";
        EmptyCheck => Refusal::EmptyCheck, 2,
            "Error: --check is empty: give the command to run, or omit --check for the run's own\n\
             Hint: endorse by review alone with --no-check\n";
        NoCheck => Refusal::NoCheck { run: "r1".into() }, 1,
            "Error: run r1 has no check command to endorse with\n\
             Hint: pass --check CMD, set `git config mas.check CMD`, or endorse by review with --no-check\n";
        NoProposal => Refusal::NoProposal { proposer: "bob".into(), run: "r1".into() }, 1,
            "Error: bob has no proposal in run r1\nHint: bob proposes with `git mas propose` in its worktree\n";
        ProposalRefChanged => Refusal::ProposalRefChanged { proposer: "bob".into(), tree: "0123456789abcdef".into(), found: "fe".into() }, 1,
            "Error: bob's proposal ref does not hold the content its latest proposal event names (tree 0123456789ab); \
             it was changed outside `git mas propose`\nHint: bob re-proposes with `git mas propose`\n";
        NothingToPropose => Refusal::NothingToPropose { run: "r1".into() }, 1,
            "Error: your worktree holds run r1's base unchanged: a slice that changes nothing is not a proposal\n\
             Hint: change your slice's files and propose again, or say why it needs no change: \
             `git mas propose --abstain -m \"<why>\"`\n";
        AbstainWithChanges => Refusal::AbstainWithChanges { run: "r1".into(), paths: vec!["a.py".into(), "b.py".into()] }, 1,
            "Error: you abstain, but your worktree changes 2 path(s) from run r1's base: a.py, b.py\n\
             Hint: propose them (`git mas propose`), or put them back (`git checkout -- <path>`, `git clean`) and abstain again\n";
        AbstainWithoutSlices => Refusal::AbstainWithoutSlices { run: "r1".into() }, 1,
            "Error: run r1 is not an aggregate run: abstaining is a slice's answer (a best-of-N agent with nothing to propose proposes nothing)\n";
        Abstained => Refusal::Abstained { proposer: "bob".into(), run: "r1".into() }, 1,
            "Error: bob abstained in run r1 (its slice needs no change): there is nothing to endorse\n\
             Hint: endorse the proposals that change something (`git mas tally`)\n";
    ));
    let stale_lock = || StoreError::StaleLock {
        refname: "refs/mas/journal/alice".into(),
        lock: "/repo/.git/refs/mas/journal/alice.lock".into(),
        age: Duration::from_secs(120),
    };
    let stale_lock_text = "Error: /repo/.git/refs/mas/journal/alice.lock blocks updating refs/mas/journal/alice: it \
                           was left 120 s ago by a process that did not finish\n\
                           Hint: if no git-mas or git command is still running here, remove it: `git mas doctor \
                           --fix` (or `rm /repo/.git/refs/mas/journal/alice.lock`)\n";
    rows.extend(rows!(DevError via CliError::from;
        Run => DevError::Run(RunError::NoSuchRun { id: "r9".into() }), 1,
            "Error: no run \"r9\" in this repository\nHint: list the runs with `git mas run list`\n";
        Pool => DevError::Pool(PoolError::NoBranch { branch: "main".into() }), 1,
            "Error: the branch main does not exist\n\
             Hint: commit something on the integration branch first, or name it with `git config mas.branch`\n";
        Store => DevError::Store(stale_lock()), 1, stale_lock_text;
        Sink => DevError::Sink { source: Box::new(stale_lock()) }, 1, stale_lock_text;
        SliceHeld => DevError::SliceHeld {
            agent: "alice".into(), holder: "carol".into(), what: "lane src/**".into(), example: "src/lib.rs".into()
        }, 1, "Error: alice's slice overlaps carol's lane src/** (both hold src/lib.rs): no run was started\n\
               Hint: wait for the holder to finish or ask it to release (`git mas release <glob>`); `git mas \
               status` lists lanes and claims\n";
        Key => DevError::Key {
            agent: "alice".into(),
            source: git_mas::identity::key::KeyError::Missing { name: "alice".into(), path: "/keys/alice".into() },
        }, 1, "Error: no private key for agent 'alice' at /keys/alice\n\
               Hint: this machine has no key for 'alice'; set GIT_MAS_KEY_DIR to where it is, or create a new \
               agent with `git mas agent new`\n";
        Team => DevError::Team(git_mas::attention::team::TeamError::Lock {
            path: "/repo/.git/mas/claims.lock".into(), why: "is held".into()
        }), 1, "Error: the claims lock /repo/.git/mas/claims.lock is held\n";
    ));
    rows.extend(rows!(DriverError via CliError::from;
        Roster => DriverError::Roster { why: "bob is not a peer".into() }, 1,
            "Error: the peers do not match the run's roster: bob is not a peer\n";
        Engine => DriverError::Engine { pattern: git_mas::runtime::PatternKind::Preference, source: EngineError::EmptyRoster }, 3,
            "Error: cannot start the preference engine\nCaused by: the roster is empty\n";
        Sink => DriverError::Sink { source: Box::new(io(ErrorKind::Other, "disk full")) }, 3,
            "Error: the run's events could not be recorded\nCaused by: disk full\n";
    ));
    rows.extend(rows!(ReplayError via CliError::from;
        Spawn => ReplayError::Spawn { detail: "no git".into() }, 3, "Error: cannot run git: no git\n";
        Range => ReplayError::Range { args: "rev-list x..y".into(), detail: "bad revision".into() }, 1,
            "Error: git rev-list x..y failed: bad revision\nHint: name a range git knows, such as `origin/main..HEAD`\n";
        Commit => ReplayError::Commit { commit: "c1".into(), detail: "gone".into() }, 3,
            "Error: cannot read commit c1: gone\n";
        Touched => ReplayError::Touched(TouchedError::Git { args: "diff".into(), reason: "boom".into() }), 3,
            "Error: git diff failed: boom\n";
        Store => ReplayError::Store(StoreError::SeqOverflow { refname: "refs/mas/journal/alice".into() }), 1,
            "Error: sequence number overflow in refs/mas/journal/alice\n";
    ));
    rows.extend(rows!(SelectError via CliError::from;
        Escapes => SelectError::Escapes { pattern: "../x".into() }, 1, "Error: target \"../x\" escapes the repository\n";
        BadGlob => SelectError::BadGlob { pattern: "[".into(), detail: "unclosed".into() }, 2,
            "Error: \"[\" is neither a target nor a valid glob: unclosed\n";
        NotInFrame => SelectError::NotInFrame { pattern: "x.rs".into() }, 1,
            "Error: target \"x.rs\" is not in the current frame's snapshot\n\
             Hint: list the frame's targets with `git mas frame --top 50`\n";
    ));
    rows.extend(rows!(SliceError via CliError::from;
        TooFewTargets => SliceError::TooFewTargets { files: 1, agents: 3 }, 1,
            "Error: the frame ranks 1 file(s) a slice could hold, too few for 3 agent(s): every slice needs a top target of its own\n\
             Hint: run with fewer agents, or without --aggregate\n";
        UnknownTarget => SliceError::UnknownTarget { agent: "bob".into(), target: "x".into() }, 1,
            "Error: SLICE bob: \"x\" is not a file of the frame\n";
        SharedTop => SliceError::SharedTop { first: "a".into(), second: "b".into(), target: "f".into() }, 1,
            "Error: SLICE a and SLICE b share their top target f: the rule would serialize them\n";
        Agent => SliceError::Agent { agent: "zed".into(), why: "not in the team".into() }, 1,
            "Error: SLICE zed: not in the team\n";
        Missing => SliceError::Missing { agent: "bob".into() }, 1, "Error: no SLICE or REVIEW line for bob\n";
        Unreadable => SliceError::Unreadable { line: "SLICE".into() }, 1,
            "Error: unreadable SLICE line \"SLICE\": expected `SLICE <agent> <target>…`\n";
    ));
    rows.extend(rows!(ProposeError via CliError::from;
        Refused => ProposeError::Refused(Refusal::EmptyMessage), 2, "Error: the message is empty\n";
        Run => ProposeError::Run(RunError::NoSuchRun { id: "r9".into() }), 1,
            "Error: no run \"r9\" in this repository\nHint: list the runs with `git mas run list`\n";
        Pool => ProposeError::Pool(PoolError::NothingToLand { run: "r1".into() }), 1, "Error: no proposal to land\n";
        Replay => ProposeError::Replay { run: "r1".into(), source: EngineError::EmptyRoster }, 3,
            "Error: run r1: the roster is empty\n";
    ));
    rows.extend(rows!(EndorseError via CliError::from;
        Refused => EndorseError::Refused(Refusal::EmptyReason), 2, "Error: --reason is empty: say why you reject it\n";
        Run => EndorseError::Run(RunError::NoSuchRun { id: "r9".into() }), 1,
            "Error: no run \"r9\" in this repository\nHint: list the runs with `git mas run list`\n";
        Pool => EndorseError::Pool(PoolError::NoBranch { branch: "main".into() }), 1,
            "Error: the branch main does not exist\n\
             Hint: commit something on the integration branch first, or name it with `git config mas.branch`\n";
        Replay => EndorseError::Replay { run: "r1".into(), source: EngineError::EmptyRoster }, 3,
            "Error: run r1: the roster is empty\n";
        NotATree => EndorseError::NotATree { kind: "blob".into() }, 3, "Error: the accepted proposal is not a tree\n";
        BadTreeId => EndorseError::BadTreeId { tree: "xyz".into() }, 3, "Error: \"xyz\" is not a tree id\n";
        Output => EndorseError::Output { why: "disk full".into() }, 3, "Error: storing the check's output: disk full\n";
        NotAVerdict => EndorseError::NotAVerdict, 3, "Error: the endorsement to record is not a verdict\n";
    ));
    rows.extend(rows!(GateIoError via CliError::from;
        Roster => GateIoError::Roster { source: StoreError::Roster(roster_encoding()) }, 7,
            format!("Error: the focus board cannot be read: main:.mas/roster is not UTF-8 text\n{ROSTER_HINT}");
        Roster => GateIoError::Roster { source: store_git() }, 7,
            "Error: the focus board cannot be read: git: reading the roster\nCaused by: object not found\n";
        CurrentFrame => GateIoError::CurrentFrame { source: incomplete() }, 7,
            "Error: the focus board cannot be read: frame abc123 is incomplete: no snapshot.json\n\
             Hint: publish a new frame with `git mas snapshot --publish`\n";
        Board => GateIoError::Board {
            source: StoreError::UnreadableRef { name: "refs/mas/focus/bob".into(), content: "junk".into() },
        }, 7,
            "Error: the focus board cannot be read: ref refs/mas/focus/bob is unreadable: it holds \"junk\"\n\
             Hint: inspect it with `git show-ref refs/mas/focus/bob`; `git update-ref -d refs/mas/focus/bob` removes it\n";
        Frame => GateIoError::Frame { commit: "abc123".into(), source: incomplete() }, 7,
            "Error: the focus board cannot be read: frame abc123 is incomplete: no snapshot.json\n\
             Hint: publish a new frame with `git mas snapshot --publish`\n";
        Touched => GateIoError::Touched(TouchedError::Git {
            args: "diff --cached --name-only".into(),
            reason: "fatal: bad revision".into(),
        }), 7,
            "Error: git diff --cached --name-only failed: fatal: bad revision\n";
    ));
    rows.extend(rows!(PublishError via CliError::from;
        Rejected => PublishError::Rejected {
            agent: "alice".into(),
            refname: "refs/mas/focus/alice".into(),
            frame: "f00d".into(),
            rejection: Rejection::BadLease { detail: "ttl 0s is outside 1s..86400s".into() },
        }, 1,
            "Error: bad lease: ttl 0s is outside 1s..86400s\n";
        Store => PublishError::Store(StoreError::SeqOverflow { refname: "refs/mas/focus/alice".into() }), 1,
            "Error: sequence number overflow in refs/mas/focus/alice\n";
    ));
    rows.extend(rows!(Rejection via rejected;
        Unverified => Rejection::Unverified { verdict: "spoofed".into() }, 1, "Error: the record is spoofed\n";
        Malformed => Rejection::Malformed { detail: "missing field `ttl_secs`".into() }, 1,
            "Error: not a focus or release record: missing field `ttl_secs`\n";
        TooManyTargets => Rejection::TooManyTargets { count: 9 }, 1,
            "Error: a focus holds at most 8 targets; 9 given\nHint: name fewer targets, or take fewer with --top K\n";
        PathEscapes => Rejection::PathEscapes { target: "../x".into() }, 1,
            "Error: target \"../x\" escapes the repository\n\
             Hint: name a path inside the repository: relative, without `..`\n";
        UnknownTarget => Rejection::UnknownTarget { target: "src/zz.rs".into() }, 1,
            "Error: target \"src/zz.rs\" is not in the current frame's snapshot\n\
             Hint: list the frame's targets with `git mas frame --top 50`\n";
        BadLease => Rejection::BadLease { detail: "published in the future".into() }, 1,
            "Error: bad lease: published in the future\n";
        Flood => Rejection::Flood, 1,
            "Error: the board already holds 4096 live agents (flood cap)\n\
             Hint: wait for a focus to lapse, or for its agent to run `git mas focus release`\n";
        PrincipalFlood => Rejection::PrincipalFlood { principal: "alice".into() }, 1,
            "Error: alice already has 64 live agents on the board (the per-principal flood cap)\n\
             Hint: wait for a focus to lapse, or for its agent to run `git mas focus release`\n";
    ));
    rows.extend(rows!(RecordError via CliError::from;
        BadRunId => RecordError::BadRunId { run: "a/b".into() }, 1,
            "Error: \"a/b\" is not a run id (letters, digits, '.', '_' and '-'; no '/')\n";
        Exists => RecordError::Exists { run: "r1".into() }, 3, "Error: run r1 already exists\n";
        NotFound => RecordError::NotFound { run: "r1".into() }, 1,
            "Error: no run r1 in this repository\n\
             Hint: runs are recorded under refs/mas/runs/<run>/; `git mas log` lists every chain, run ids included\n";
        Unverified => RecordError::Unverified {
            refname: "refs/mas/runs/r1/meta".into(),
            commit: "abc123".into(),
            verdict: "spoofed".into(),
        }, 4,
            "Error: refs/mas/runs/r1/meta: record abc123 is spoofed; a run is rendered only from verified records\n\
             Hint: inspect the chain with `git mas log <ref>`; a run is rendered only from verified records\n";
        Malformed => RecordError::Malformed {
            refname: "refs/mas/runs/r1/meta".into(),
            commit: "abc123".into(),
            why: "no run id".into(),
        }, 4,
            "Error: refs/mas/runs/r1/meta: record abc123 is not a run record: no run id\n\
             Hint: inspect the chain with `git mas log <ref>`; a run is rendered only from verified records\n";
        Store => RecordError::Store(StoreError::TooManyRetries { refname: "refs/mas/runs/r1/meta".into(), attempts: 3 }), 3,
            "Error: gave up appending to refs/mas/runs/r1/meta after 3 lost races\n";
        Serialize => RecordError::Serialize(serde_json::from_str::<u8>("x").unwrap_err()), 3,
            "Error: cannot serialize a run record: expected value at line 1 column 1\n";
    ));
    rows.extend(rows!(FrameError via CliError::from;
        Store => FrameError::Store(StoreError::Bare { path: "/srv/r.git".into() }), 1,
            "Error: this command needs a working tree, but /srv/r.git is a bare repository\n\
             Hint: run it in a clone or a worktree of this repository\n";
        ReadInput => FrameError::ReadInput { path: "task.md".into(), source: io(ErrorKind::NotFound, "no such file") }, 1,
            "Error: cannot read task.md\nCaused by: no such file\n";
        InputTooLarge => FrameError::InputTooLarge { path: "task.md".into(), kind: InputKind::Task }, 1,
            "Error: the task file task.md is larger than 1 MiB, the most a snapshot reads from a task file; \
             check the path; a task is a short text\n";
        Scip => FrameError::Scip { origin: "index.scip".into(), reason: "truncated".into() }, 1,
            "Error: the SCIP index index.scip cannot be read: truncated\n";
        Diagnostics => FrameError::Diagnostics { origin: "d.sarif".into(), reason: "only SARIF 2.1.0".into() }, 1,
            "Error: the diagnostics file d.sarif cannot be read: only SARIF 2.1.0\n";
        Git => FrameError::Git { context: "reading HEAD".into(), reason: "bad object".into() }, 3,
            "Error: git: reading HEAD: bad object\n";
        NoFrame => FrameError::NoFrame, 1,
            "Error: no frame has been published yet (refs/mas/frame is empty)\n\
             Hint: publish one with `git mas snapshot --publish`\n";
        Incomplete => incomplete(), 1, "Error: frame abc123 is incomplete: no snapshot.json\n";
    ));
    rows.extend(rows!(SyncError via CliError::from;
        BadRemote => SyncError::BadRemote { remote: "-x".into(), why: "it starts with '-' (git would read it as an option)" }, 2,
            "Error: remote \"-x\" is not a usable remote name or URL: it starts with '-' (git would read it as an option)\n\
             Hint: name a remote `git remote` lists, or give a URL or a path\n";
        Spawn => SyncError::Spawn { source: io(ErrorKind::NotFound, "no such file") }, 3,
            "Error: cannot run git\nCaused by: no such file\n";
        Fetch => SyncError::Fetch { remote: "origin".into(), stderr: "fatal: unreachable".into() }, 1,
            "Error: git fetch from origin failed: fatal: unreachable\nHint: check the remote with `git remote -v`\n";
        Push => SyncError::Push { remote: "origin".into(), stderr: "fatal: denied".into() }, 1,
            "Error: git push to origin failed: fatal: denied\nHint: check the remote with `git remote -v`\n";
        Mutex => SyncError::Mutex { path: "/repo/.git/mas-sync.lock".into(), source: io(ErrorKind::PermissionDenied, "permission denied") }, 3,
            "Error: cannot lock /repo/.git/mas-sync.lock\nCaused by: permission denied\n";
        Busy => SyncError::Busy { path: "/repo/.git/mas-sync.lock".into(), waited: Duration::from_secs(120) }, 1,
            "Error: another git mas sync of this repository is still running (waited 120s for /repo/.git/mas-sync.lock)\n\
             Hint: wait for the other sync to finish\n";
        Sweep => SyncError::Sweep { path: "/repo/.git/x.lock".into(), source: io(ErrorKind::PermissionDenied, "permission denied") }, 3,
            "Error: cannot remove the stale lock /repo/.git/x.lock\nCaused by: permission denied\n";
        Store => SyncError::Store(StoreError::SeqOverflow { refname: "refs/mas/journal/alice".into() }), 1,
            "Error: sequence number overflow in refs/mas/journal/alice\n";
    ));
    rows.extend(rows!(HostHookError via CliError::from;
        Invalid => HostHookError::Invalid { path: ".claude/settings.json".into(), syntax: "JSON", reason: "trailing comma".into() }, 1,
            "Error: .claude/settings.json is not valid JSON: trailing comma\n\
             Hint: fix the file (or move it aside) and run the command again; nothing was written\n";
        Shape => HostHookError::Shape { path: ".claude/settings.json".into(), what: "`hooks` is not an object".into() }, 1,
            "Error: .claude/settings.json: `hooks` is not an object\n\
             Hint: fix the file (or move it aside) and run the command again; nothing was written\n";
        NotOurs => HostHookError::NotOurs { path: ".github/hooks/git-mas.json".into() }, 1,
            "Error: .github/hooks/git-mas.json exists and is not the file git-mas writes\n\
             Hint: move that file aside to let git-mas write its own; nothing was written\n";
        NoHome => HostHookError::NoHome { host: "codex" }, 1,
            "Error: cannot find codex's user configuration: HOME is not set\n\
             Hint: set HOME (or the host's own directory variable)\n";
        Git => HostHookError::Git { worktree: "/w".into(), command: "config --worktree mas.gate enforce".into(), reason: "locked".into() }, 1,
            "Error: in /w: `git config --worktree mas.gate enforce` failed: locked\n";
        Io => HostHookError::Io { action: "write", path: ".mcp.json".into(), reason: "permission denied".into() }, 1,
            "Error: cannot write .mcp.json: permission denied\n";
    ));
    rows.extend(rows!(HostMcpError via CliError::from;
        Unsupported => HostMcpError::Unsupported { host: "goose", reason: "run `goose configure`".into() }, 1,
            "Error: goose's MCP servers cannot be registered by git-mas: run `goose configure`\n";
        File => HostMcpError::File(HostHookError::NoHome { host: "opencode" }), 1,
            "Error: cannot find opencode's user configuration: HOME is not set\n\
             Hint: set HOME (or the host's own directory variable)\n";
    ));
    rows.extend(rows!(SkillsError via CliError::from;
        NoHome => SkillsError::NoHome, 1,
            "Error: HOME is not set, so the host's user-wide skills directory is unknown\n\
             Hint: set HOME, or name the directory with --dir DIR\n";
        Conflicts => SkillsError::Conflicts(vec![Conflict {
            skill: "converge".into(),
            path: ".claude/skills/converge".into(),
            differing: vec!["SKILL.md".into()],
            extra: Vec::new(),
            not_a_directory: false,
        }]), 1,
            "Error: one skill folder already holds different content: .claude/skills/converge (differs in SKILL.md)\n\
             Hint: nothing was changed; look at the differences, then run again with --force to overwrite them\n";
        Io => SkillsError::Io { action: "write", path: "/h/.claude/skills".into(), source: io(ErrorKind::PermissionDenied, "permission denied") }, 1,
            "Error: cannot write /h/.claude/skills: permission denied\n";
    ));
    const AGAIN: &str =
        "Hint: what was done is recorded: run the command again, or undo it with `git mas init --team --undo`\n";
    rows.extend(rows!(SetupError via CliError::from;
        Store => SetupError::Store(StoreError::Bare { path: "/srv/r.git".into() }), 1,
            "Error: this command needs a working tree, but /srv/r.git is a bare repository\n\
             Hint: run it in a clone or a worktree of this repository\n";
        Key => SetupError::Key(KeyError::Malformed { path: key() }), 1,
            "Error: private key /keys/alice.key is not 64 hex digits\n";
        Name => SetupError::Name(NameError::Empty), 1, "Error: agent name is empty\n";
        Hook => SetupError::Hook(HostHookError::NotOurs { path: ".github/hooks/git-mas.json".into() }), 1,
            "Error: .github/hooks/git-mas.json exists and is not the file git-mas writes\n\
             Hint: move that file aside to let git-mas write its own; nothing was written\n";
        Mcp => SetupError::Mcp(HostMcpError::File(HostHookError::Invalid { path: ".mcp.json".into(), syntax: "JSON", reason: "EOF".into() })), 1,
            "Error: .mcp.json is not valid JSON: EOF\n\
             Hint: fix the file (or move it aside) and run the command again; nothing was written\n";
        Skills => SetupError::Skills(SkillsError::Conflicts(vec![Conflict {
            skill: "git-mas".into(),
            path: ".claude/skills/git-mas".into(),
            differing: vec!["SKILL.md".into()],
            extra: Vec::new(),
            not_a_directory: false,
        }])), 1,
            "Error: one skill folder already holds different content: .claude/skills/git-mas (differs in SKILL.md)\n\
             Hint: nothing was written; move those folders aside (or `git mas skills install --force`) and run it again\n";
        Frame => SetupError::Frame(incomplete()), 1,
            CliError::from(incomplete()).render(false);
        NoName => SetupError::NoName, 1,
            "Error: cannot name this machine's roster member: no --name, no `git config mas.agent`, and no usable \
             name in $USER, $LOGNAME, git's user.email or user.name, or this OS account\n\
             Hint: name the member: git mas init --team --name NAME\n";
        NotHeld => SetupError::NotHeld { name: "alice".into() }, 1,
            "Error: agent 'alice' is on the roster, but this machine holds no key for it\n\
             Hint: name another member with --name NAME, or put the key of 'alice' in this machine's key \
             directory ($GIT_MAS_KEY_DIR)\n";
        NotText => SetupError::NotText { path: "/r/.git/hooks/pre-commit".into() }, 1,
            "Error: /r/.git/hooks/pre-commit is not UTF-8 text\nHint: nothing was changed\n";
        Io => SetupError::Io { action: "write", path: "/r/.mcp.json".into(), source: io(ErrorKind::StorageFull, "no space left on device") }, 3,
            format!("Error: cannot write /r/.mcp.json\nCaused by: no space left on device\n{AGAIN}");
        Git => SetupError::Git { command: "config --local mas.gate enforce".into(), reason: "could not lock config file".into() }, 3,
            format!("Error: `git config --local mas.gate enforce` failed: could not lock config file\n{AGAIN}");
        Busy => SetupError::Busy { pid: 42, lock: "/r/.git/mas-setup/lock".into() }, 1,
            "Error: another git mas init --team of this repository is running (process 42, /r/.git/mas-setup/lock)\n\
             Hint: wait for it to finish; if no git mas is running here, remove /r/.git/mas-setup/lock\n";
        NoManifest => SetupError::NoManifest { path: "/r/.git/mas-setup/manifest.json".into() }, 1,
            "Error: there is no team setup to undo here: /r/.git/mas-setup/manifest.json does not exist\n\
             Hint: nothing was changed\n";
        BadManifest => SetupError::BadManifest { path: "/r/.git/mas-setup/manifest.json".into(), reason: "EOF".into() }, 1,
            "Error: the record of the team setup, /r/.git/mas-setup/manifest.json, cannot be used: EOF\n\
             Hint: nothing was changed; the record is JSON, and the bytes each file had before are in its blobs/ folder\n";
        Changed => SetupError::Changed { changed: vec![
            git_mas::ops::setup::Changed { what: "/r/.claude/settings.json".into() },
            git_mas::ops::setup::Changed { what: "config mas.gate".into() },
        ] }, 1,
            "Error: changed since the team setup, so not undone: /r/.claude/settings.json, config mas.gate\n\
             Hint: nothing was undone; `git mas init --team --undo --force` restores them too (the changes made \
             since the setup are lost)\n";
    ));
    rows
}

#[test]
fn every_error_variant_renders_its_message_hints_and_exit_code() {
    let mut failures = Vec::new();
    for row in table() {
        let (code, text) = (row.error.exit_code(), row.error.render(false));
        if code != row.code || text != row.text {
            failures
                .push(format!("{}: exit {code} (want {}), rendered\n{text}want\n{}", row.variant, row.code, row.text));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn hints_accumulate_and_several_causes_are_numbered() {
    let err = CliError::with_message(Kind::Internal, "landing failed", store_git())
        .hinted("run it again")
        .hinted("`git mas doctor` lists what was left");
    assert_eq!(err.exit_code(), 3);
    assert_eq!(
        err.render(false),
        "Error: landing failed\nCaused by:\n1: git: reading the roster\n2: object not found\n\
         Hint: run it again\nHint: `git mas doctor` lists what was left\n"
    );
    let usage = CliError::usage("--goal must be between 1 and 4096 bytes");
    assert_eq!((usage.kind(), usage.exit_code()), (Kind::Usage, 2));
    assert_eq!(usage.render(false), "Error: --goal must be between 1 and 4096 bytes\n");
    assert_eq!(CliError::user("nothing to land").exit_code(), 1);
    assert_eq!(CliError::internal("git crashed").exit_code(), 3);
}

#[test]
fn color_paints_the_headings_only() {
    let err = CliError::with_message(Kind::User, "refused", IoError::other("gone")).hinted("retry");
    assert_eq!(
        err.render(true),
        "\x1b[1;31mError:\x1b[0m refused\n\x1b[1mCaused by:\x1b[0m gone\n\x1b[1;36mHint:\x1b[0m retry\n"
    );
}

#[test]
fn a_closed_pipe_is_a_quiet_exit_141_and_other_io_errors_are_internal() {
    let pipe = CliError::from(io(ErrorKind::BrokenPipe, "broken pipe"));
    assert!(pipe.is_broken_pipe());
    assert_eq!(pipe.exit_code(), 141);
    let full = CliError::from(io(ErrorKind::StorageFull, "no space left on device"));
    assert!(!full.is_broken_pipe());
    assert_eq!((full.exit_code(), full.render(false)), (3, "Error: i/o error: no space left on device\n".into()));
}

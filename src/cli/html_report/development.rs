//! A development run's page: the run read whole ([`RunView`]) and its convergence report, told
//! as a story — goal, roster and plan, the rounds, the conflicts, the landing, the report.

use super::pictures::{self, Column, Holding, Mark, Tone};
use super::{duration, esc, facts, oid, page, timestamp, trailers};
use git_mas::convergence::{ConvergenceReport, SliceStatus, Status};
use git_mas::devrun::Phase;
use git_mas::devrun::events::{ENDORSEMENT_KIND, PROPOSAL_KIND};
use git_mas::devrun::slices::SlicePlan;
use git_mas::devrun::view::RunView;
use git_mas::engines::development::Judgement;
use git_mas::runtime::exit::{exit_words, signal_of};
use std::fmt::Write as _;

/// One recorded proposal or endorsement.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The event id.
    pub id: String,
    /// The agent who recorded it.
    pub agent: String,
    /// Its round.
    pub round: u64,
    /// When it was recorded (ms since the Unix epoch).
    pub at_ms: u64,
    /// The record's commit.
    pub record: String,
    /// The proposal's commit (for an endorsement: the commit of the proposal it judged).
    pub commit: String,
    /// The proposal's tree, or the tree an endorsement judged.
    pub tree: Option<String>,
    /// For an endorsement: whose proposal, and its verdict.
    pub endorsement: Option<(Option<String>, Judgement)>,
    /// A proposal's message; a failed check's output tail.
    pub note: Option<String>,
    /// Why the engine did not count it, when it did not.
    pub refused: Option<String>,
}

/// A landing attempt a conflict blocked.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockedStep {
    /// Who tried.
    pub by: String,
    /// When (ms since the Unix epoch).
    pub at_ms: u64,
    /// The integration branch's tip it saw.
    pub main: String,
    /// What blocked it, in words.
    pub conflicts: Vec<String>,
}

/// The landing (or the landing under way).
#[derive(Debug, Clone, PartialEq)]
pub struct Landing {
    /// The commit on the integration branch.
    pub commit: String,
    /// The landing record's commit.
    pub record: String,
    /// Who landed it.
    pub by: String,
    /// When (ms since the Unix epoch).
    pub at_ms: u64,
    /// The proposals that landed, in merge order, with their trees.
    pub winners: Vec<(String, String)>,
    /// Whether the branch holds it (false: under way, `git mas land` completes it).
    pub complete: bool,
    /// The check of the merged tree: command, exit status (none: killed), duration.
    pub merged_check: Option<(String, Option<i32>, u64)>,
    /// The commit's trailers.
    pub trailers: Vec<(String, String)>,
}

/// Everything a development run's page shows, as plain values.
#[derive(Debug, Clone, PartialEq)]
pub struct DevStory {
    /// The run id.
    pub run: String,
    /// The goal.
    pub goal: String,
    /// The class.
    pub class: String,
    /// The roster, in order.
    pub roster: Vec<String>,
    /// Valid endorsements a proposal needs.
    pub quorum: u32,
    /// The quorum asked, when the roster's size capped it.
    pub requested_quorum: Option<u32>,
    /// The integration branch and the base commit.
    pub branch: String,
    /// The base commit.
    pub base: String,
    /// The team's check command.
    pub check: Option<String>,
    /// Who started it, and when (ms since the Unix epoch).
    pub started: (String, u64),
    /// An aggregate run's plan.
    pub plan: Option<SlicePlan>,
    /// Proposals and endorsements, in replay order.
    pub steps: Vec<Step>,
    /// Blocked landing attempts, oldest first.
    pub blocked: Vec<BlockedStep>,
    /// The landing.
    pub landing: Option<Landing>,
    /// Who aborted the run, and why.
    pub aborted: Option<(String, String)>,
    /// The convergence report.
    pub report: ConvergenceReport,
}

/// A run's proposals and endorsements as the story's steps, oldest first.
fn steps_of(view: &RunView) -> Vec<Step> {
    let def = &view.meta.def;
    let refused = |record: &str| view.refused.iter().find(|r| r.record == record).map(|r| r.reason.clone());
    view.events
        .events
        .iter()
        .filter(|s| s.kind == PROPOSAL_KIND || s.kind == ENDORSEMENT_KIND)
        .map(|s| {
            let payload = &s.record.event.payload;
            let endorsement = (s.kind == ENDORSEMENT_KIND)
                .then(|| Judgement::of(payload, def.slices.is_some()).map(|j| (s.record.proposer.clone(), j)))
                .flatten();
            let tree = match payload {
                git_mas::runtime::SemanticPayload::ExternalBytes { digest, .. } => Some(digest.clone()),
                git_mas::runtime::SemanticPayload::ToolResult { subject, .. }
                | git_mas::runtime::SemanticPayload::Review { subject, .. } => Some(subject.clone()),
                _ => None,
            };
            Step {
                id: s.record.event.metadata.event_id.clone(),
                agent: s.agent.clone(),
                // Events count epochs from 0: a proposal's first round is epoch 0.
                round: s.record.event.metadata.epoch + 1,
                at_ms: s.record.at_ms,
                record: s.record_commit.clone(),
                commit: s.record.commit.clone(),
                tree,
                endorsement,
                note: s.record.note.clone(),
                refused: refused(&s.record_commit),
            }
        })
        .collect()
}

impl DevStory {
    /// The story of `view`, with its `report` and the landing commit's message (for its
    /// trailers) when the run landed.
    pub fn of(view: &RunView, report: ConvergenceReport, landing_message: Option<&str>) -> DevStory {
        let def = &view.meta.def;
        let steps = steps_of(view);
        let blocked = view
            .meta
            .blocked
            .iter()
            .map(|(by, b)| BlockedStep {
                by: by.clone(),
                at_ms: b.at_ms,
                main: b.main.clone(),
                conflicts: b.conflicts.iter().map(|c| format!("{}: {}", c.kind.name(), c.detail)).collect(),
            })
            .collect();
        let (landing, aborted) = match &view.meta.phase {
            Phase::Open => (None, None),
            Phase::Aborted { by, abort } => (None, Some((by.clone(), abort.reason.clone()))),
            Phase::Landed { by, record, landing } | Phase::Landing { by, record, landing } => (
                Some(Landing {
                    commit: landing.commit.clone(),
                    record: record.clone(),
                    by: by.clone(),
                    at_ms: landing.at_ms,
                    winners: landing.winners.clone(),
                    complete: matches!(view.meta.phase, Phase::Landed { .. }),
                    merged_check: landing
                        .merged_check
                        .as_ref()
                        .map(|c| (c.command.clone(), c.exit_status, c.duration_ms)),
                    trailers: landing_message.map(trailers).unwrap_or_default(),
                }),
                None,
            ),
        };
        DevStory {
            run: def.id.clone(),
            goal: def.goal.clone(),
            class: def.class.to_string(),
            roster: def.roster.clone(),
            quorum: def.quorum,
            requested_quorum: def.requested_quorum,
            branch: def.branch.clone(),
            base: def.base.clone(),
            check: def.check.clone(),
            started: (def.started_by.clone(), def.created_at_ms),
            plan: def.slices.clone(),
            steps,
            blocked,
            landing,
            aborted,
            report,
        }
    }

    /// The rounds that hold a step, in order.
    fn rounds(&self) -> Vec<u64> {
        let mut rounds: Vec<u64> = self.steps.iter().map(|s| s.round).collect();
        rounds.sort_unstable();
        rounds.dedup();
        rounds
    }
}

fn judgement_tone(j: &Judgement) -> Tone {
    if j.endorses() { Tone::Pass } else { Tone::Fail }
}

/// A verdict in words.
fn verdict_text(j: &Judgement) -> String {
    match j {
        Judgement::Passed { command, duration_ms, .. } => {
            format!("check <code>{}</code> passed in {}", esc(command), duration(*duration_ms))
        }
        Judgement::Failed { command, exit_status, duration_ms, .. } => {
            format!("check <code>{}</code> {} in {}", esc(command), esc(&failed(*exit_status)), duration(*duration_ms))
        }
        Judgement::Improved { command, exit_status, duration_ms, delta, .. } => format!(
            "check <code>{}</code> {} in {}, but the proposal improves the base: it makes {} failing test(s) pass and breaks none ({} still fail)",
            esc(command),
            esc(&failed(*exit_status)),
            duration(*duration_ms),
            delta.fixed.len(),
            delta.still_failing
        ),
        Judgement::Sound { command, exit_status, duration_ms, delta, .. } => format!(
            "check <code>{}</code> {} in {}, and the slice breaks nothing the base passed: a part, it makes {} failing test(s) pass alone ({} still fail)",
            esc(command),
            esc(&failed(*exit_status)),
            duration(*duration_ms),
            delta.fixed.len(),
            delta.still_failing
        ),
        Judgement::Accepted { reason } => format!("accepted by review: {}", esc(reason)),
        Judgement::Rejected { reason } => format!("rejected by review: {}", esc(reason)),
    }
}

/// A failed check's end: `failed (exit 1)`, or `was killed (SIGKILL: out of memory or killed;
/// exit 137)` ([`git_mas::runtime::exit`]).
fn failed(exit_status: Option<i32>) -> String {
    match exit_status {
        Some(code) if signal_of(code).is_none() => format!("failed (exit {code})"),
        code => format!("was {}", exit_words(code)),
    }
}

fn slice_tone(status: SliceStatus) -> Tone {
    match status {
        SliceStatus::Landed => Tone::Pass,
        SliceStatus::AtQuorum => Tone::Info,
        SliceStatus::JudgedAgainst | SliceStatus::Untouched => Tone::Fail,
        SliceStatus::Waiting | SliceStatus::Missing | SliceStatus::Abstained => Tone::Neutral,
    }
}

fn status_badge(status: Status) -> String {
    let class = match status {
        Status::Converged => "ok",
        Status::Failed | Status::Blocked => "bad",
        Status::Running => "warn",
    };
    format!("<span class=\"badge {class}\">{}</span>", status.name())
}

/// The development run's page.
pub fn dev_page(story: &DevStory) -> String {
    let mut o = String::new();
    let r = &story.report;
    let _ = writeln!(o, "<header>\n<h1>Run <code>{}</code></h1>", esc(&story.run));
    let _ = writeln!(o, "<p class=\"goal\" id=\"goal\">{}</p>", esc(&story.goal));
    let _ = writeln!(
        o,
        "<p id=\"ending\" data-ending=\"{}\">{} {}</p>\n</header>",
        r.ending.map_or("", |e| e.name()),
        status_badge(r.status),
        esc(&crate::cli::reports::headline(r))
    );
    roster(&mut o, story);
    plan(&mut o, story);
    timeline(&mut o, story);
    conflicts(&mut o, story);
    landing(&mut o, story);
    changes(&mut o, r);
    report(&mut o, r);
    let _ = writeln!(
        o,
        "<footer>Rendered by <code>git mas report {} --html</code> from <code>refs/mas/runs/{}/</code>. The page \
         loads nothing: no script, font or image comes from anywhere else.</footer>",
        esc(&story.run),
        esc(&story.run)
    );
    page(&format!("git mas run {} — {}", story.run, story.goal.lines().next().unwrap_or_default()), &o)
}

fn roster(o: &mut String, s: &DevStory) {
    let _ = writeln!(o, "<section id=\"roster\">\n<h2>Team</h2>");
    let names: Vec<String> = s.roster.iter().map(|a| format!("<span data-agent=\"{0}\">{0}</span>", esc(a))).collect();
    o.push_str(&facts(&[
        ("class", esc(&s.class)),
        ("roster", names.join(", ")),
        (
            "quorum",
            match s.requested_quorum {
                Some(asked) if asked != s.quorum => format!(
                    "{asked} valid endorsements asked, capped at {} (the roster's size: never more endorsements than \
                     agents)",
                    s.quorum
                ),
                _ => format!("{} valid endorsement{}", s.quorum, if s.quorum == 1 { "" } else { "s" }),
            },
        ),
        ("base", format!("{} on <code>{}</code>", oid(&s.base), esc(&s.branch))),
        ("check", s.check.as_deref().map_or("none recorded".into(), |c| format!("<code>{}</code>", esc(c)))),
        ("started", format!("by {} at {}", esc(&s.started.0), timestamp(s.started.1))),
    ]));
    o.push_str("</section>\n");
}

fn plan(o: &mut String, s: &DevStory) {
    let _ = writeln!(o, "<section id=\"plan\">\n<h2>Plan</h2>");
    let Some(plan) = &s.plan else {
        o.push_str("<p>Best of N: every agent worked on the whole goal, and the proposal with the most valid endorsements lands.</p>\n</section>\n");
        return;
    };
    let _ = writeln!(
        o,
        "<p>The goal in {} slice{}, from {} (frame {}), merged in this order:</p>",
        plan.slices.len(),
        if plan.slices.len() == 1 { "" } else { "s" },
        match plan.source {
            git_mas::devrun::slices::SliceSource::Frame => "the frame's ranking",
            git_mas::devrun::slices::SliceSource::Concerns => "what the goal concerns",
            git_mas::devrun::slices::SliceSource::Agents => "the agents' own split",
        },
        oid(&plan.frame)
    );
    o.push_str(
        "<table class=\"rows\"><thead><tr><th>agent</th><th>slice</th><th>files</th><th>status</th><th>endorsed \
         by</th></tr></thead><tbody>\n",
    );
    let mut holdings = Vec::new();
    for slice in &plan.slices {
        let reported = s.report.slices.iter().find(|r| r.agent == slice.agent);
        let status = reported.map_or("unknown", |r| r.status.name());
        let tone = reported.map_or(Tone::Neutral, |r| slice_tone(r.status));
        let endorsers = reported.map(|r| r.endorsers.join(", ")).unwrap_or_default();
        let files: Vec<String> = slice.targets.iter().map(|t| format!("<code>{}</code>", esc(t))).collect();
        let _ = writeln!(
            o,
            "<tr data-slice=\"{0}\"><td data-label=\"agent\">{0}</td><td data-label=\"slice\">{1}</td><td \
             data-label=\"files\">{2}</td><td data-label=\"status\"><span class=\"swatch\" \
             style=\"background:{3}\"></span>{4}</td><td data-label=\"endorsed by\">{5}</td></tr>",
            esc(&slice.agent),
            esc(&slice.subgoal),
            files.join(", "),
            tone.color(),
            esc(status),
            esc(&endorsers)
        );
        holdings.push(Holding {
            agent: slice.agent.clone(),
            files: slice.targets.clone(),
            status: status.to_owned(),
            tone,
        });
    }
    o.push_str("</tbody></table>\n");
    plan_reviewers(o, s);
    o.push_str("<figure id=\"board\">\n");
    o.push_str(&pictures::board(&holdings));
    o.push_str("<figcaption>The board: who held which files, colored by where each slice ended.</figcaption>\n");
    legend(
        o,
        &[
            (Tone::Pass, "landed"),
            (Tone::Info, "at quorum"),
            (Tone::Fail, "judged against"),
            (Tone::Neutral, "waiting"),
        ],
    );
    o.push_str("</figure>\n</section>\n");
}

/// The plan's reviewers (agents with no slice of their own) and what each endorsed.
fn plan_reviewers(o: &mut String, s: &DevStory) {
    let Some(plan) = &s.plan else { return };
    if !plan.reviewers.is_empty() {
        o.push_str("<p id=\"reviewers\">Reviewers, with no slice of their own (they endorse the slices):</p>\n<ul>\n");
        for r in &plan.reviewers {
            let endorsed = s
                .report
                .reviewers
                .iter()
                .find(|x| x.agent == r.agent)
                .map(|x| {
                    if x.endorsed.is_empty() {
                        "endorsed none".to_owned()
                    } else {
                        format!("endorsed {}", x.endorsed.join(", "))
                    }
                })
                .unwrap_or_default();
            let _ = writeln!(
                o,
                "<li data-reviewer=\"{0}\">{0}: {1}{2}</li>",
                esc(&r.agent),
                esc(&r.why),
                if endorsed.is_empty() { String::new() } else { format!("; {}", esc(&endorsed)) }
            );
        }
        o.push_str("</ul>\n");
    }
}

fn legend(o: &mut String, items: &[(Tone, &str)]) {
    o.push_str("<div class=\"legend\">");
    for (tone, text) in items {
        let _ =
            write!(o, "<span><span class=\"swatch\" style=\"background:{}\"></span>{}</span>", tone.color(), esc(text));
    }
    o.push_str("</div>\n");
}

/// The timeline's columns: every step, the blocked attempts and the landing, by time.
fn columns(s: &DevStory, lanes: &[String]) -> Vec<Column> {
    let lane = |agent: &str| lanes.iter().position(|l| l == agent).unwrap_or(lanes.len() - 1);
    let main = lanes.len() - 1;
    let mut timed: Vec<(u64, Column)> = Vec::new();
    for step in &s.steps {
        let (mark, label) = match &step.endorsement {
            None => (Mark::Proposal, format!("round {}: {} proposes {}", step.round, step.agent, step.commit)),
            Some((proposer, j)) => (
                Mark::Endorsement {
                    proposer_lane: proposer.as_deref().map(lane),
                    tone: if step.refused.is_some() { Tone::Neutral } else { judgement_tone(j) },
                },
                format!(
                    "round {}: {} judges {}'s proposal: {}",
                    step.round,
                    step.agent,
                    proposer.as_deref().unwrap_or("?"),
                    j.name()
                ),
            ),
        };
        timed.push((
            step.at_ms,
            Column { round: step.round, lane: lane(&step.agent), mark, id: step.id.clone(), label },
        ));
    }
    for b in &s.blocked {
        let round = s.steps.iter().filter(|st| st.at_ms <= b.at_ms).map(|st| st.round).max().unwrap_or(0);
        let label = format!("{} tried to land; blocked: {}", b.by, b.conflicts.join("; "));
        timed.push((b.at_ms, Column { round, lane: main, mark: Mark::Blocked, id: b.main.clone(), label }));
    }
    if let Some(l) = &s.landing {
        let round = s.steps.iter().map(|st| st.round).max().unwrap_or(0);
        let label = format!("{} landed {} on {}", l.by, l.commit, s.branch);
        timed.push((l.at_ms, Column { round, lane: main, mark: Mark::Landed, id: l.commit.clone(), label }));
    }
    timed.sort_by_key(|(at, _)| *at);
    timed.into_iter().map(|(_, c)| c).collect()
}

fn timeline(o: &mut String, s: &DevStory) {
    let _ = writeln!(o, "<section id=\"timeline\">\n<h2>Rounds</h2>");
    let mut lanes = s.roster.clone();
    for step in &s.steps {
        if !lanes.contains(&step.agent) {
            lanes.push(step.agent.clone());
        }
    }
    lanes.push(s.branch.clone());
    if s.steps.is_empty() {
        o.push_str("<p>No proposal or endorsement was recorded.</p>\n");
    } else {
        o.push_str("<figure>\n");
        o.push_str(&pictures::timeline(&lanes, &columns(s, &lanes)));
        o.push_str(
            "<figcaption>Each column is one recorded step, in order: a square is a proposal, a dot an endorsement \
             joined to the proposal it judged, a cross a blocked landing, the diamond the landing.</figcaption>\n",
        );
        legend(
            o,
            &[
                (Tone::Info, "proposal"),
                (Tone::Pass, "passed / landed"),
                (Tone::Fail, "failed"),
                (Tone::Warn, "blocked"),
            ],
        );
        o.push_str("</figure>\n");
    }
    o.push_str(
        "<p class=\"muted\">The prompts of each hop are streamed to the agents, not recorded; what the agents \
         recorded follows.</p>\n",
    );
    for round in s.rounds() {
        let _ = writeln!(o, "<section class=\"round\" data-round=\"{round}\">\n<h3>Round {round}</h3>");
        for step in s.steps.iter().filter(|st| st.round == round) {
            step_html(o, step);
        }
        o.push_str("</section>\n");
    }
}

fn step_html(o: &mut String, step: &Step) {
    let refused = step
        .refused
        .as_deref()
        .map_or(String::new(), |why| format!("<div class=\"warn\">Not counted: {}</div>", esc(why)));
    let class_refused = if step.refused.is_some() { " refused" } else { "" };
    match &step.endorsement {
        None => {
            let _ = writeln!(
                o,
                "<article class=\"event proposal{class_refused}\" data-proposal=\"{}\" data-agent=\"{}\" \
                 data-commit=\"{}\"><strong>{}</strong> proposed {} (tree {}) at {}{}{}</article>",
                esc(&step.id),
                esc(&step.agent),
                esc(&step.commit),
                esc(&step.agent),
                oid(&step.commit),
                step.tree.as_deref().map_or("?".into(), oid),
                timestamp(step.at_ms),
                step.note.as_deref().map_or(String::new(), |m| format!("<pre class=\"message\">{}</pre>", esc(m))),
                refused
            );
        }
        Some((proposer, j)) => {
            let tone = if j.endorses() { "pass" } else { "fail" };
            let output = step.note.as_deref().map_or(String::new(), |n| {
                format!(
                    "<details open><summary>output (tail)</summary><pre class=\"output\">{}</pre></details>",
                    esc(n)
                )
            });
            let _ = writeln!(
                o,
                "<article class=\"event endorsement {tone}{class_refused}\" data-endorsement=\"{}\" data-agent=\"{}\" \
                 data-proposer=\"{}\" data-verdict=\"{}\"><strong>{}</strong> judged {}'s proposal {}: <span \
                 class=\"{}\">{}</span> at {}{output}{refused}</article>",
                esc(&step.id),
                esc(&step.agent),
                esc(proposer.as_deref().unwrap_or_default()),
                j.name(),
                esc(&step.agent),
                esc(proposer.as_deref().unwrap_or("?")),
                oid(&step.commit),
                if j.endorses() { "ok" } else { "bad" },
                verdict_text(j),
                timestamp(step.at_ms),
            );
        }
    }
}

fn conflicts(o: &mut String, s: &DevStory) {
    let _ = writeln!(o, "<section id=\"conflicts\">\n<h2>Conflicts</h2>");
    let r = &s.report;
    if r.conflicts.is_empty() {
        o.push_str("<p>None.</p>\n");
    } else {
        o.push_str(
            "<table class=\"rows\"><thead><tr><th>type</th><th>proposals</th><th>what happened</th><th>resolved</th>\
             </tr></thead><tbody>\n",
        );
        for c in &r.conflicts {
            let paths: Vec<String> = c.paths.iter().map(|p| format!("<code>{}</code>", esc(p))).collect();
            let _ = writeln!(
                o,
                "<tr class=\"conflict\" data-conflict=\"{}\" data-resolved=\"{}\"><td data-label=\"type\">{}</td><td \
                 data-label=\"proposals\">{}</td><td data-label=\"what happened\">{}{}</td><td \
                 data-label=\"resolved\"><span class=\"{}\">{}</span> {}</td></tr>",
                c.kind.name(),
                c.resolved,
                c.kind.name(),
                esc(&c.proposals.join(", ")),
                esc(&c.detail),
                if paths.is_empty() { String::new() } else { format!("<br>paths: {}", paths.join(", ")) },
                if c.resolved { "ok" } else { "bad" },
                if c.resolved { "resolved:" } else { "open:" },
                esc(&c.resolution)
            );
        }
        o.push_str("</tbody></table>\n");
    }
    for b in &s.blocked {
        let _ = writeln!(
            o,
            "<p class=\"blocked\">{} tried to land at {} on {}; blocked by: {}</p>",
            esc(&b.by),
            timestamp(b.at_ms),
            oid(&b.main),
            esc(&b.conflicts.join("; "))
        );
    }
    o.push_str("</section>\n");
}

fn landing(o: &mut String, s: &DevStory) {
    let Some(l) = &s.landing else {
        let _ = writeln!(o, "<section id=\"landing\" data-landed=\"false\">\n<h2>Landing</h2>");
        match &s.aborted {
            Some((by, why)) => {
                let _ = writeln!(o, "<p class=\"bad\">Not landed: aborted by {}: {}</p>", esc(by), esc(why));
            }
            None => o.push_str("<p>Not landed yet.</p>\n"),
        }
        o.push_str("</section>\n");
        return;
    };
    let _ = writeln!(
        o,
        "<section id=\"landing\" data-landed=\"{}\" data-commit=\"{}\">\n<h2>Landing</h2>",
        l.complete,
        esc(&l.commit)
    );
    let winners: Vec<String> = l.winners.iter().map(|(a, tree)| format!("{} (tree {})", esc(a), oid(tree))).collect();
    let mut rows = vec![
        ("commit", format!("<code class=\"commit\">{}</code> on <code>{}</code>", esc(&l.commit), esc(&s.branch))),
        (
            "landed",
            format!(
                "by {} at {}{}",
                esc(&l.by),
                timestamp(l.at_ms),
                if l.complete { "" } else { " (under way: `git mas land` completes it)" }
            ),
        ),
        ("winners", winners.join(", ")),
        ("record", oid(&l.record)),
    ];
    if let Some((command, exit, ms)) = &l.merged_check {
        let passed = *exit == Some(0);
        rows.push((
            "merged check",
            format!(
                "<code>{}</code> <span class=\"{}\">{}</span> in {} on the merged tree",
                esc(command),
                if passed { "ok" } else { "bad" },
                if passed { "passed".to_owned() } else { esc(&failed(*exit)) },
                duration(*ms)
            ),
        ));
    }
    o.push_str(&facts(&rows));
    if !l.trailers.is_empty() {
        o.push_str("<h3>Trailers</h3>\n<table class=\"trailers\"><tbody>\n");
        for (k, v) in &l.trailers {
            let _ = writeln!(o, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
        }
        o.push_str("</tbody></table>\n");
    }
    o.push_str("</section>\n");
}

/// What each proposal changed against the base (in an aggregate run, which paths lie outside its
/// slice, and whether it changed only those), and the gate's refusals of slice files.
fn changes(o: &mut String, r: &ConvergenceReport) {
    if r.changes.is_empty() && r.slice_refusals.is_empty() {
        return;
    }
    let _ = writeln!(o, "<section id=\"changes\">\n<h2>What each proposal changed</h2>");
    let code = |paths: &mut dyn Iterator<Item = &String>| -> String {
        paths.map(|p| format!("<code>{}</code>", esc(p))).collect::<Vec<_>>().join(", ")
    };
    if !r.changes.is_empty() {
        o.push_str(
            "<table class=\"rows\"><thead><tr><th>agent</th><th>changed against the base</th><th>outside its \
             slice</th></tr></thead><tbody>\n",
        );
        for c in &r.changes {
            let outside: Vec<String> = c
                .outside_slice
                .iter()
                .map(|x| match &x.slice_of {
                    Some(owner) => format!("<code>{}</code> ({}'s slice)", esc(&x.path), esc(owner)),
                    None => format!("<code>{}</code> (no slice)", esc(&x.path)),
                })
                .collect();
            let outside = match (c.slice_untouched, outside.is_empty()) {
                (true, _) => {
                    format!("<span class=\"bad\">changed only files outside its slice:</span> {}", outside.join(", "))
                }
                (false, true) => String::new(),
                (false, false) => outside.join(", "),
            };
            let paths = if c.paths.is_empty() { "nothing".to_owned() } else { code(&mut c.paths.iter()) };
            let _ = writeln!(
                o,
                "<tr data-changes=\"{0}\"{1}><td data-label=\"agent\">{0}</td><td data-label=\"changed\">{2}</td><td \
                 data-label=\"outside its slice\">{3}</td></tr>",
                esc(&c.agent),
                if c.slice_untouched { " data-slice-untouched=\"true\"" } else { "" },
                paths,
                outside
            );
        }
        o.push_str("</tbody></table>\n");
    }
    if !r.slice_refusals.is_empty() {
        o.push_str("<h3>The gate's slice refusals</h3>\n<ul id=\"slice-refusals\">\n");
        for f in &r.slice_refusals {
            let _ = writeln!(
                o,
                "<li data-refused=\"{0}\">the gate refused {0} an edit of <code>{1}</code>, in {2}'s slice ({3}, \
                 last at {4})</li>",
                esc(&f.agent),
                esc(&f.file),
                esc(&f.slice_of),
                if f.times == 1 { "once".to_owned() } else { format!("{} times", f.times) },
                timestamp(f.last_at.saturating_mul(1000))
            );
        }
        o.push_str("</ul>\n");
    }
    o.push_str("</section>\n");
}

fn report(o: &mut String, r: &ConvergenceReport) {
    let _ = writeln!(o, "<section id=\"report\">\n<h2>Convergence report</h2>");
    let consensus = match r.consensus_score {
        Some(score) => format!(
            "{score:.1} ({} of {} proposals in no conflict)<div class=\"bar\"><span style=\"width:{:.0}%\"></span></div>",
            r.proposals - r.implicated,
            r.proposals,
            score.clamp(0.0, 100.0)
        ),
        None => "unknown (no proposals)".into(),
    };
    let q = &r.quality_state;
    let quality = match (q.pass_rate, q.reached) {
        (Some(rate), Some(reached)) => format!(
            "{}/{} checks passed ({:.0}%, threshold {:.0}%) on {} — <span class=\"{}\">{}</span>",
            q.passed,
            q.total,
            rate * 100.0,
            q.threshold * 100.0,
            esc(&q.basis),
            if reached { "ok" } else { "bad" },
            if reached { "reached" } else { "not reached" }
        ),
        _ => format!("unknown — no check ran ({})", esc(&q.basis)),
    };
    let b = &r.budget_state;
    let budget = match (b.limit_ms, b.exhausted) {
        (Some(limit), Some(out)) => {
            format!("{} of {}{}", duration(b.used_ms), duration(limit), if out { " — exhausted" } else { "" })
        }
        _ => format!("none set ({} used)", duration(b.used_ms)),
    };
    let rounds = &r.rounds_state;
    let rounds = match rounds.max {
        Some(max) => {
            format!("{} of {max}{}", rounds.used, if rounds.reached == Some(true) { " — limit reached" } else { "" })
        }
        None => format!("{} (no limit)", rounds.used),
    };
    let mut rows = vec![
        ("ending", r.ending.map_or("unknown (a report stored before it was kept)".into(), |e| esc(e.name()))),
        ("status", status_badge(r.status)),
        ("termination", r.termination_reason.map_or("none (still running)".into(), |t| esc(t.name()))),
        ("consensus", consensus),
        ("quality", quality),
        ("budget", budget),
        ("rounds", rounds),
    ];
    if !r.winners.is_empty() {
        let label = if r.status == Status::Converged { "landed" } else { "leading" };
        rows.push((label, esc(&r.winners.join(", "))));
    }
    if let Some(passed) = r.merged_check_passed {
        rows.push(("merged tree", if passed { "the check passed".into() } else { "the check failed".into() }));
    }
    for risk in &r.unresolved_risks {
        rows.push(("risk", format!("<span class=\"bad\">{}</span>", esc(risk))));
    }
    o.push_str(&facts(&rows));
    o.push_str("</section>\n");
}

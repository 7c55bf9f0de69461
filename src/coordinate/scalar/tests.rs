//! The driver over in-process peers (the built-ins' replies without the processes, and scripted
//! replies), so that its decisions are tested fast; the processes are tested in `peers` and end to
//! end through the binary.

use super::*;
use crate::assembly::Verdict;
use crate::peers::builtin::{self, FAULTY_DRIFT_PER_EPOCH};
use crate::peers::{BuiltinKind, HopError, HopReply, PeerSpec};
use std::future::Future;

type Script = Box<dyn FnMut(&str) -> Result<String, HopError> + Send>;

struct InProcess {
    name: String,
    reply: Script,
    prompts: Vec<String>,
}

impl Peer for InProcess {
    fn name(&self) -> &str {
        &self.name
    }

    fn hop(&mut self, hop: &Hop) -> impl Future<Output = Result<HopReply, HopError>> + Send {
        self.prompts.push(hop.prompt.clone());
        let result = (self.reply)(&hop.prompt);
        async move { result.map(|text| HopReply { text, elapsed: Duration::ZERO, stderr: String::new() }) }
    }
}

fn builtin_peer(name: &str, kind: BuiltinKind) -> (PeerEntry, InProcess) {
    let entry = PeerEntry { name: name.into(), spec: PeerSpec::Builtin { kind } };
    let reply: Script = Box::new(move |prompt| Ok(builtin::reply(kind, prompt)));
    (entry, InProcess { name: name.into(), reply, prompts: Vec::new() })
}

fn scripted(
    name: &str,
    reply: impl FnMut(&str) -> Result<String, HopError> + Send + 'static,
) -> (PeerEntry, InProcess) {
    let entry = PeerEntry { name: name.into(), spec: PeerSpec::Cmd { command: "scripted".into() } };
    (entry, InProcess { name: name.into(), reply: Box::new(reply), prompts: Vec::new() })
}

fn meta(pattern: PatternKind, peers: Vec<PeerEntry>, limits: Limits) -> ConvergeDef {
    ConvergeDef {
        run: "r1".into(),
        goal: default_goal(pattern).into(),
        pattern,
        peers,
        driver: "alice".into(),
        limits,
        split: Vec::new(),
    }
}

struct Outcome {
    report: Report,
    events: Vec<RunEvent>,
    peers: Vec<InProcess>,
}

fn drive(pattern: PatternKind, team: Vec<(PeerEntry, InProcess)>, limits: Limits) -> Outcome {
    let (entries, mut peers): (Vec<PeerEntry>, Vec<InProcess>) = team.into_iter().unzip();
    let meta = meta(pattern, entries, limits);
    let mut events = Vec::new();
    let mut sink = |e: &RunEvent| -> Result<(), SinkError> {
        events.push(e.clone());
        Ok(())
    };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let report = rt.block_on(run(&meta, &mut peers, &mut sink)).expect("the run is driven");
    // The report is a function of the recorded events alone.
    let recorded: Vec<RunEvent> = events.iter().filter(|e| e.record_kind().is_some()).cloned().collect();
    assert_eq!(build_report(&meta, &recorded), report, "re-rendered from the recorded events");
    // …and survives the JSON it is stored as.
    let json = serde_json::to_string(&recorded).unwrap();
    let parsed: Vec<RunEvent> = serde_json::from_str(&json).unwrap();
    assert_eq!(build_report(&meta, &parsed), report, "re-rendered from stored JSON");
    Outcome { report, events, peers }
}

fn team(kinds: &[BuiltinKind]) -> Vec<(PeerEntry, InProcess)> {
    kinds.iter().enumerate().map(|(i, k)| builtin_peer(&format!("{}-{i}", k.name()), *k)).collect()
}

const REFERENCE3: [BuiltinKind; 3] = [BuiltinKind::Reference; 3];

#[test]
fn three_reference_peers_derive_and_reach_the_preference_optimum() {
    let out = drive(PatternKind::Preference, team(&REFERENCE3), Limits { max_rounds: 60, ..Limits::default() });
    let report = &out.report;
    assert_eq!(report.class, Some(PatternKind::Preference));
    assert!(report.derivation.iter().all(|d| d.verdict == Some(Verdict::Matches)), "{:?}", report.derivation);
    assert!(report.execution.iter().all(|e| e.faithful && e.max_own_gap == Some(0.0)), "{:?}", report.execution);
    let optimum = report.optimum.as_ref().expect("preference reports its optimum");
    assert!(optimum.distance < 1e-6, "{}", optimum.distance);
    for (z, want) in optimum.z_star.iter().zip([2.4, 4.0, 5.6]) {
        assert!((z - want).abs() < 1e-12);
    }
    assert!(matches!(report.halt, Some(ConvergeHalt::Plateau | ConvergeHalt::PaperHorizon)), "{:?}", report.halt);
    assert!(report.replay_matches);
    assert!(!report.incomplete());
    assert_eq!(report.epochs as usize, report.trajectory.len());
    assert_eq!(report.announcements.len(), 3 * report.trajectory.len());
    // Every hop is one call; ASSEMBLY once per peer, then once per peer per epoch.
    assert_eq!(report.hops, 3 + 3 * report.epochs);
}

#[test]
fn replaying_the_recorded_semantic_events_gives_the_recorded_outcomes() {
    let out = drive(PatternKind::Resource, team(&REFERENCE3), Limits::default());
    let mut events = Vec::new();
    let mut outcomes = Vec::new();
    for event in &out.events {
        if let RunEvent::Hop(hop) = event {
            events.extend(hop.events.iter().cloned());
            outcomes.extend(hop.outcomes.iter().cloned());
        }
    }
    let start = out
        .events
        .iter()
        .find_map(|e| match e {
            RunEvent::ConvergeStarted(s) => Some(s.clone()),
            _ => None,
        })
        .unwrap();
    let EngineSetup::Resource(config) = start.setup else { panic!("{:?}", start.setup) };
    let engine = Resource::engine(start.roster.clone(), config).unwrap();
    let replayed = MasRuntime::replay(engine, events);
    let got: Vec<EventOutcome> = replayed.history().iter().map(|t| t.outcome.clone()).collect();
    assert_eq!(got, outcomes);
    assert_eq!(replayed.counters(), out.report.counters.unwrap());
    assert_eq!(out.report.halt, Some(ConvergeHalt::PaperHorizon));
    assert_eq!(out.report.epochs, 12);
}

#[test]
fn a_faulty_peer_derives_the_rule_and_shows_an_execution_gap() {
    let kinds = [BuiltinKind::Reference, BuiltinKind::Faulty, BuiltinKind::Reference];
    let out = drive(PatternKind::Preference, team(&kinds), Limits { max_rounds: 20, ..Limits::default() });
    let report = &out.report;
    assert!(report.derivation.iter().all(|d| d.verdict == Some(Verdict::Matches)));
    let faulty = &report.execution[1];
    assert!(!faulty.faithful);
    let gap = faulty.max_own_gap.unwrap();
    assert!((gap - FAULTY_DRIFT_PER_EPOCH * report.epochs as f64).abs() < 1e-9, "{gap}");
    assert!(report.execution[0].faithful && report.execution[2].faithful);
    assert!(report.optimum.as_ref().unwrap().distance > 1e-3);
}

#[test]
fn greedy_peers_on_the_resource_keep_less_stock() {
    let stock = |kind| {
        let out = drive(PatternKind::Resource, team(&[kind; 3]), Limits::default());
        out.report.metric.unwrap().final_value
    };
    let (reference, greedy) = (stock(BuiltinKind::Reference), stock(BuiltinKind::Greedy));
    assert!(reference > greedy, "{reference} vs {greedy}");
}

#[test]
fn an_unreadable_peer_is_asked_once_more_with_the_reason_then_the_run_halts() {
    let mut team = team(&[BuiltinKind::Reference, BuiltinKind::Reference]);
    team.push(scripted("mumbler", |prompt| {
        Ok(if prompt.contains("phase=ASSEMBLY") {
            builtin::reply(BuiltinKind::Reference, prompt)
        } else {
            "I would say roughly four.\nANNOUNCE value=about-four".into()
        })
    }));
    let out = drive(PatternKind::Preference, team, Limits::default());
    let report = &out.report;
    assert_eq!(report.halt, Some(ConvergeHalt::UnreadableAnnouncement));
    assert_eq!(report.halt_peer.as_deref(), Some("mumbler"));
    assert!(report.incomplete());
    assert!(report.halt_detail.contains("about-four"), "{}", report.halt_detail);
    let prompts = &out.peers[2].prompts;
    assert_eq!(prompts.len(), 3, "ASSEMBLY once, CONVERGE twice");
    assert!(prompts[2].contains("attempt=2\nreason=line 2: \"about-four\" is not a finite number"), "{}", prompts[2]);
    assert!(!prompts[1].contains("reason="));
    assert_eq!(report.epochs, 0);
    assert!(report.announcements.len() == 2, "the others' announcements stand, nothing was substituted");
}

#[test]
fn announcements_for_another_peer_or_epoch_or_out_of_domain_are_asked_again() {
    for bad in
        ["ANNOUNCE value=1 agent=someone-else epoch=0", "ANNOUNCE value=1 agent=odd epoch=7", "ANNOUNCE value=-3"]
    {
        let bad = bad.to_owned();
        let mut team = team(&[BuiltinKind::Reference]);
        let mut calls = 0;
        team.push(scripted("odd", move |prompt| {
            if prompt.contains("phase=ASSEMBLY") {
                return Ok(builtin::reply(BuiltinKind::Reference, prompt));
            }
            calls += 1;
            Ok(if calls == 1 { bad.clone() } else { builtin::reply(BuiltinKind::Reference, prompt) })
        }));
        let out = drive(PatternKind::Cascade, team, Limits { max_rounds: 2, ..Limits::default() });
        assert_eq!(out.report.halt, Some(ConvergeHalt::PaperHorizon), "{:?}", out.report.halt_detail);
        let retry = &out.peers[1].prompts[2];
        assert!(retry.contains("attempt=2\nreason="), "{retry}");
        assert!(out.report.execution.iter().all(|e| e.faithful));
    }
}

#[test]
fn a_failed_call_counts_as_an_unreadable_reply() {
    let mut team = team(&[BuiltinKind::Reference]);
    team.push(scripted("crashy", |prompt| {
        if prompt.contains("phase=ASSEMBLY") {
            Ok(builtin::reply(BuiltinKind::Reference, prompt))
        } else {
            Err(HopError::Other { message: "the model service is down".into() })
        }
    }));
    let out = drive(PatternKind::Preference, team, Limits::default());
    assert_eq!(out.report.halt, Some(ConvergeHalt::UnreadableAnnouncement));
    assert!(out.peers[1].prompts[2].contains("reason=the model service is down"));
}

#[test]
fn no_update_line_halts_missing_update_rule_before_converge() {
    let mut team = team(&[BuiltinKind::Reference]);
    team.push(scripted("vague", |_| Ok("We should blend scores somehow.\nCLASS preference\nDONE".into())));
    let out = drive(PatternKind::Preference, team, Limits::default());
    let report = &out.report;
    assert_eq!(report.halt, Some(ConvergeHalt::MissingUpdateRule));
    assert_eq!(report.derivation[1].verdict, Some(Verdict::Missing));
    assert!(report.halt_detail.contains("vague: no UPDATE line"), "{}", report.halt_detail);
    assert!(report.metric.is_none() && report.trajectory.is_empty());
    assert_eq!(out.peers[1].prompts.len(), 1, "ASSEMBLY asks once");
    assert!(!out.events.iter().any(|e| matches!(e, RunEvent::ConvergeStarted(_))));
}

#[test]
fn an_unknown_class_halts_unmapped_and_names_it() {
    let team = vec![scripted("economist", |_| {
        Ok("Students and schools rank each other.\nCLASS matching-markets\nUPDATE state\nDONE".into())
    })];
    let out = drive(PatternKind::Unmapped, team, Limits::default());
    let report = &out.report;
    assert_eq!(report.halt, Some(ConvergeHalt::Unmapped));
    assert_eq!(report.class, Some(PatternKind::Unmapped));
    assert_eq!(report.class_token.as_deref(), Some("matching-markets"));
    assert!(report.halt_detail.contains("matching-markets"));
    assert!(!report.incomplete(), "naming an unimplemented class is a modelling outcome");
    assert_eq!(report.derivation[0].verdict, None);
}

#[test]
fn reference_peers_without_a_seed_follow_the_goal() {
    let (entries, mut peers): (Vec<PeerEntry>, Vec<InProcess>) = team(&REFERENCE3).into_iter().unzip();
    let mut meta = meta(PatternKind::Unmapped, entries, Limits::default());
    meta.goal = "Stages of a supply chain order from inventory along a pipeline".into();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let report = rt.block_on(run(&meta, &mut peers, &mut |_| Ok(()))).unwrap();
    assert_eq!(report.class, Some(PatternKind::Cascade));
    assert_eq!(report.halt, Some(ConvergeHalt::PaperHorizon));
    assert!(report.metric.unwrap().final_value > 0.0);
}

#[test]
fn the_budget_bounds_the_whole_run() {
    let slow = |name: &str| {
        let entry = PeerEntry { name: name.into(), spec: PeerSpec::Builtin { kind: BuiltinKind::Reference } };
        struct Slow(String);
        impl Peer for Slow {
            fn name(&self) -> &str {
                &self.0
            }
            fn hop(&mut self, hop: &Hop) -> impl Future<Output = Result<HopReply, HopError>> + Send {
                let text = builtin::reply(BuiltinKind::Reference, &hop.prompt);
                let timeout = hop.timeout;
                async move {
                    let pause = Duration::from_millis(20);
                    if timeout < pause {
                        tokio::time::sleep(timeout).await;
                        return Err(HopError::TimedOut { after: timeout, said: None });
                    }
                    tokio::time::sleep(pause).await;
                    Ok(HopReply { text, elapsed: pause, stderr: String::new() })
                }
            }
        }
        (entry, Slow(name.to_owned()))
    };
    let (entries, mut peers): (Vec<PeerEntry>, Vec<_>) = ["a", "b", "c"].into_iter().map(slow).unzip();
    let meta = meta(PatternKind::Preference, entries, Limits { max_rounds: 60, hop_timeout_ms: 1000, budget_ms: 300 });
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let started = Instant::now();
    let report = rt.block_on(run(&meta, &mut peers, &mut |_| Ok(()))).unwrap();
    assert_eq!(report.halt, Some(ConvergeHalt::BudgetExhausted), "{}", report.halt_detail);
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(report.epochs > 0 && report.epochs < 60);

    // A budget that runs out in ASSEMBLY halts there, not as a peer without a rule.
    let (entries, mut peers): (Vec<PeerEntry>, Vec<_>) = ["a", "b", "c"].into_iter().map(slow).unzip();
    let meta =
        self::meta(PatternKind::Preference, entries, Limits { max_rounds: 60, hop_timeout_ms: 1000, budget_ms: 30 });
    let report = rt.block_on(run(&meta, &mut peers, &mut |_| Ok(()))).unwrap();
    assert_eq!(report.halt, Some(ConvergeHalt::BudgetExhausted), "{}", report.halt_detail);
    assert!(report.metric.is_none() && report.epochs == 0);
}

#[test]
fn a_sink_failure_stops_the_run() {
    let (entries, mut peers): (Vec<PeerEntry>, Vec<InProcess>) = team(&REFERENCE3).into_iter().unzip();
    let meta = meta(PatternKind::Preference, entries, Limits::default());
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut seen = 0;
    let result = rt.block_on(run(&meta, &mut peers, &mut |_| {
        seen += 1;
        if seen > 7 { Err("disk full".into()) } else { Ok(()) }
    }));
    assert!(matches!(result, Err(DriverError::Sink { .. })));
    // Three ASSEMBLY hops, ASSEMBLY's summary, CONVERGE's start, then the third CONVERGE hop fails
    // to record: no peer is asked anything after that.
    assert_eq!(peers.iter().map(|p| p.prompts.len()).sum::<usize>(), 6);
}

#[test]
fn peers_must_match_the_roster() {
    let (entries, _) = builtin_peer("a", BuiltinKind::Reference);
    let (_, other) = builtin_peer("b", BuiltinKind::Reference);
    let meta = meta(PatternKind::Preference, vec![entries], Limits::default());
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let result = rt.block_on(run(&meta, &mut [other], &mut |_| Ok(())));
    assert!(matches!(result, Err(DriverError::Roster { .. })));
}

#[test]
fn read_announcement_table() {
    assert_eq!(read_announcement("ANNOUNCE value=-0 agent=a epoch=1\nVOTE STOP", "a", 1), Ok((0.0, Some(Vote::Stop))));
    assert!(read_announcement("ANNOUNCE value=-0", "a", 1).unwrap().0.is_sign_positive());
    assert_eq!(read_announcement("COMMIT proposal=2.5", "a", 0), Ok((2.5, None)));
    assert!(read_announcement("ANNOUNCE value=1 agent=b", "a", 0).unwrap_err().contains("write agent=a"));
    assert!(read_announcement("ANNOUNCE value=1 epoch=2", "a", 0).unwrap_err().contains("epoch 0 is open"));
    assert!(read_announcement("nothing", "a", 0).unwrap_err().contains("ANNOUNCE value="));
}

#[test]
fn the_plot_is_an_svg_with_lines() {
    let out = drive(PatternKind::Cascade, team(&[BuiltinKind::Reference; 4]), Limits::default());
    let svg = plot::render_svg(&out.report).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..80.min(svg.len())]);
    assert!(svg.contains("<polyline"));
    for peer in &out.report.peers {
        assert!(svg.contains(&peer.name), "legend names {}", peer.name);
    }
    let empty = drive(PatternKind::Unmapped, vec![scripted("x", |_| Ok("CLASS other".into()))], Limits::default());
    let svg = plot::render_svg(&empty.report).unwrap();
    assert!(svg.contains("no CONVERGE epochs"));
}

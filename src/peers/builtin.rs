//! git-mas's own peers: what `git-mas peer <kind>` replies to a hop prompt.
//!
//! They are real peers, run as processes like any other, and they read only what a hop shows them
//! (the prompt's header, [`PromptHeader`]). They exist so that a run can be measured against known
//! behaviour: a team of `reference` peers is the class's ideal, `greedy` the uncontrolled baseline,
//! `faulty` a peer that derives the right rule and then fails to apply it.
//!
//! - **ASSEMBLY.** The seeded class (`class=`), or, when the run was not seeded, the class the goal's
//!   keywords point to ([`infer_pattern`]). `reference` and `faulty` derive the class's reference
//!   rule; `greedy` derives [`GREEDY_RULE`] for the resource class (extract what it desires,
//!   ignoring the price) and the reference rule elsewhere. With no class it can derive a rule for,
//!   a peer says `CLASS unmapped` and gives no UPDATE line. Seeded with development, every kind
//!   says `CLASS development`, and when the prompt offers a split (`split=`, before an aggregate
//!   run) proposes it: the offered files dealt to the peers in ring order, one `SLICE` line each.
//! - **CONVERGE.** Every kind evaluates *its own* rule — the `rule=` of the prompt, whatever it is —
//!   on the quantities the prompt shows, and announces the result with `VOTE CONTINUE`. `faulty`
//!   then adds a drift of [`FAULTY_DRIFT_PER_EPOCH`] × (epoch + 1), so its execution gap grows
//!   epoch by epoch. When the rule cannot be evaluated the reply says why and announces nothing:
//!   a built-in never makes a value up either.

use super::prompt::PromptHeader;
use super::spec::BuiltinKind;
use crate::assembly::{infer_pattern, update_class};
use crate::engines::GREEDY_RULE;
use crate::runtime::{PatternKind, ProtocolPhase};

/// How far `faulty` drifts from its rule per epoch.
pub const FAULTY_DRIFT_PER_EPOCH: f64 = 0.05;

/// The rule a built-in derives in ASSEMBLY for `class` (`None` for classes without rules).
pub fn derived_rule(kind: BuiltinKind, class: PatternKind) -> Option<&'static str> {
    let class_rules = update_class(class)?;
    Some(match (kind, class) {
        (BuiltinKind::Greedy, PatternKind::Resource) => GREEDY_RULE,
        _ => class_rules.reference,
    })
}

/// How far `faulty` is from its rule in `epoch`.
pub fn faulty_drift(epoch: u64) -> f64 {
    FAULTY_DRIFT_PER_EPOCH * (epoch as f64 + 1.0)
}

/// The reply of built-in `kind` to `prompt`.
pub fn reply(kind: BuiltinKind, prompt: &str) -> String {
    let header = PromptHeader::parse(prompt);
    match header.phase() {
        Some(ProtocolPhase::Assembly) => assembly_reply(kind, &header),
        Some(ProtocolPhase::Converge) => converge_reply(kind, &header),
        None => "I cannot tell which phase this hop is in: the prompt has no phase=ASSEMBLY or phase=CONVERGE \
                 line in its header.\n"
            .to_owned(),
    }
}

fn handoff(header: &PromptHeader) -> String {
    match header.get("next") {
        Some(next) if next != "DONE" && !next.is_empty() => format!("NEXT {next}"),
        _ => "DONE".to_owned(),
    }
}

fn model(kind: BuiltinKind, class: PatternKind) -> &'static str {
    match (kind, class) {
        (_, PatternKind::Preference) => {
            "Each of us is a node on a line with a private score and a value; a quadratic penalty pulls our \
             values toward our own scores and toward our neighbours' values. I will move to the minimiser of \
             my own terms given my neighbours' current values (a simultaneous Jacobi step)."
        }
        (_, PatternKind::Cascade) => {
            "We are stages in a supply chain; each orders from the one above to cover the demand it faces. I \
             will order what brings my inventory position back to the order-up-to level, smoothed with the \
             previous demand and my previous order."
        }
        (BuiltinKind::Greedy, PatternKind::Resource) => {
            "We share a renewable stock. I will extract what I desire and ignore the price on extraction, \
             never more than the stock."
        }
        (_, PatternKind::Resource) => {
            "We share a renewable stock, and a price on extraction tracks the quota. I will step my extraction \
             toward what I desire less the price, within the stock."
        }
        _ => "",
    }
}

fn assembly_reply(kind: BuiltinKind, header: &PromptHeader) -> String {
    let seeded = header.get("class").map_or(PatternKind::Unmapped, PatternKind::from_token);
    if seeded == PatternKind::Development {
        return development_assembly(header);
    }
    let class = if seeded.is_converge_class() {
        Some(seeded)
    } else {
        header.get("goal").and_then(infer_pattern).map(|i| i.pattern()).filter(|p| p.is_converge_class())
    };
    let handoff = handoff(header);
    match class.and_then(|c| Some((c, derived_rule(kind, c)?))) {
        Some((class, rule)) => format!("{}\n\nCLASS {class}\nUPDATE {rule}\n{handoff}\n", model(kind, class)),
        None => format!(
            "The goal does not describe a class I can derive an update rule for, so I name none of the \
             implemented ones.\n\nCLASS unmapped\n{handoff}\n"
        ),
    }
}

fn converge_reply(kind: BuiltinKind, header: &PromptHeader) -> String {
    let handoff = handoff(header);
    let class_token = header.get("class").unwrap_or("");
    let Some(class) = update_class(PatternKind::from_token(class_token)) else {
        return format!(
            "Class {class_token:?} has no quantities I can apply a rule to, so I announce nothing.\n{handoff}\n"
        );
    };
    let Some(rule) = header.get("rule").filter(|r| !r.is_empty()) else {
        return format!(
            "The prompt shows no rule= line, so I have no rule to apply and announce nothing.\n{handoff}\n"
        );
    };
    let expr = match class.parse_rule(rule) {
        Ok(expr) => expr,
        Err(e) => return format!("My rule {rule} does not parse ({e}), so I announce nothing.\n{handoff}\n"),
    };
    let value = match expr.eval(&header.quantity_map()) {
        Ok(value) => value,
        Err(e) => {
            return format!(
                "My rule {rule} cannot be applied to these quantities ({e}), so I announce nothing.\n{handoff}\n"
            );
        }
    };
    let epoch_text = header.get("epoch").unwrap_or("0");
    let epoch: u64 = epoch_text.parse().unwrap_or(0);
    let value = match kind {
        BuiltinKind::Faulty => value + faulty_drift(epoch),
        BuiltinKind::Reference | BuiltinKind::Greedy => value,
    };
    let agent = header.get("agent").unwrap_or("");
    format!(
        "Applying my rule {rule} to the quantities shown gives {value}.\n\n\
         ANNOUNCE value={value} agent={agent} epoch={epoch_text}\nVOTE CONTINUE\n{handoff}\n"
    )
}

/// ASSEMBLY before a development run: the class is development (no update rule: the work is
/// code), and before an aggregate run (`split=`) the split of the offered files dealt to the peers
/// in ring order, one `SLICE` line each, as the frame's own split would deal them.
fn development_assembly(header: &PromptHeader) -> String {
    let list = |key: &str| -> Vec<String> {
        header
            .get(key)
            .map(|v| v.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect())
            .unwrap_or_default()
    };
    let (peers, files) = (list("peers"), list("split"));
    let mut out = String::from("The work is code: we change the repository and land it once.\n\n");
    if let Some(dealt) = crate::devrun::slices::deal(&files, &peers) {
        for (peer, targets) in peers.iter().zip(dealt) {
            out.push_str(&format!("SLICE {peer} {}\n", targets.join(" ")));
        }
    }
    out.push_str(&format!("CLASS development\n{}\n", handoff(header)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assembly::{Handoff, Verdict};
    use crate::assembly::{
        Quantities, RESOURCE, parse_announce, parse_class_line, parse_handoff, parse_update_line, parse_vote,
        score_rule,
    };
    use crate::peers::prompt::{AssemblyPrompt, ConvergePrompt};
    use crate::runtime::Vote;

    fn assembly(class: PatternKind, goal: &str, kind: BuiltinKind) -> String {
        let peers = vec!["a".to_owned(), "b".to_owned()];
        let prompt = AssemblyPrompt {
            run: "r",
            agent: "a",
            peers: &peers,
            next: Some("b"),
            goal,
            class,
            attempt: 1,
            reason: None,
            transcript: &[],
            split: &[],
        };
        reply(kind, &prompt.render())
    }

    #[test]
    fn before_development_every_kind_names_the_class_and_proposes_the_offered_split() {
        let peers = vec!["a".to_owned(), "b".to_owned()];
        let split: Vec<String> = ["x.rs", "y.py", "z.rs"].map(String::from).to_vec();
        for kind in [BuiltinKind::Reference, BuiltinKind::Greedy, BuiltinKind::Faulty] {
            let prompt = AssemblyPrompt {
                run: "r",
                agent: "a",
                peers: &peers,
                next: Some("b"),
                goal: "fix the bugs",
                class: PatternKind::Development,
                attempt: 1,
                reason: None,
                transcript: &[],
                split: &split,
            };
            let text = reply(kind, &prompt.render());
            assert!(text.contains("SLICE a x.rs z.rs\nSLICE b y.py\nCLASS development\nNEXT b"), "{kind:?}: {text}");
            let plain = AssemblyPrompt { split: &[], ..prompt };
            let text = reply(kind, &plain.render());
            assert!(!text.contains("SLICE") && text.contains("CLASS development"), "{text}");
        }
    }

    fn converge(kind: BuiltinKind, class: PatternKind, rule: &str, quantities: &Quantities, epoch: u64) -> String {
        let prompt = ConvergePrompt {
            run: "r",
            agent: "a",
            next: None,
            epoch,
            goal: "g",
            class,
            rule,
            quantities,
            attempt: 1,
            reason: None,
        };
        reply(kind, &prompt.render())
    }

    #[test]
    fn reference_derives_each_class_reference_rule() {
        for class in [PatternKind::Preference, PatternKind::Cascade, PatternKind::Resource] {
            let text = assembly(class, "g", BuiltinKind::Reference);
            assert_eq!(parse_class_line(&text).map(|c| c.pattern), Some(class), "{text}");
            let rule = parse_update_line(&text);
            assert_eq!(score_rule(class, rule.as_deref()), Verdict::Matches, "{text}");
            assert_eq!(parse_handoff(&text), Some(Handoff::Next("b".into())));
        }
    }

    #[test]
    fn greedy_ignores_the_price_only_where_the_class_has_a_baseline() {
        let text = assembly(PatternKind::Resource, "g", BuiltinKind::Greedy);
        assert_eq!(parse_update_line(&text).as_deref(), Some(GREEDY_RULE));
        assert!(matches!(RESOURCE.score(Some(GREEDY_RULE)), Verdict::Differs { .. }));
        let text = assembly(PatternKind::Cascade, "g", BuiltinKind::Greedy);
        assert_eq!(score_rule(PatternKind::Cascade, parse_update_line(&text).as_deref()), Verdict::Matches);
    }

    #[test]
    fn without_a_seed_the_goal_decides_or_the_class_is_unmapped() {
        let text =
            assembly(PatternKind::Unmapped, "keep the renewable stock alive under a quota", BuiltinKind::Reference);
        assert_eq!(parse_class_line(&text).map(|c| c.pattern), Some(PatternKind::Resource));
        let text = assembly(PatternKind::Unmapped, "match students to schools", BuiltinKind::Reference);
        assert_eq!(parse_class_line(&text).map(|c| c.token), Some("unmapped".to_owned()));
        assert_eq!(parse_update_line(&text), None);
    }

    #[test]
    fn converge_applies_the_prompt_rule_exactly() {
        let q: Quantities = [("state", 0.0), ("target", 4.0), ("beta", 0.75), ("degree", 2.0), ("neighbour_sum", 0.3)]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
        let rule = "(target + 2*beta*neighbour_sum) / (1 + 2*beta*degree)";
        let want = (4.0 + 2.0 * 0.75 * 0.3) / (1.0 + 2.0 * 0.75 * 2.0);
        let text = converge(BuiltinKind::Reference, PatternKind::Preference, rule, &q, 7);
        let announced = parse_announce(&text).unwrap();
        assert_eq!(announced.value, want, "bit for bit");
        assert_eq!(announced.agent.as_deref(), Some("a"));
        assert_eq!(announced.epoch, Some(7));
        assert_eq!(parse_vote(&text), Some(Vote::Continue));
        assert_eq!(parse_handoff(&text), Some(Handoff::Done));
        // Its own rule, whatever it is.
        let text = converge(BuiltinKind::Reference, PatternKind::Preference, "target", &q, 0);
        assert_eq!(parse_announce(&text).unwrap().value, 4.0);
        // Faulty drifts, more each epoch.
        let text = converge(BuiltinKind::Faulty, PatternKind::Preference, rule, &q, 7);
        assert_eq!(parse_announce(&text).unwrap().value, want + faulty_drift(7));
        assert!(faulty_drift(8) > faulty_drift(7));
    }

    #[test]
    fn an_unusable_rule_announces_nothing() {
        let q: Quantities = [("state".to_owned(), 1.0)].into_iter().collect();
        for rule in ["sqrt(state)", "state / (state - state)", ""] {
            let text = converge(BuiltinKind::Reference, PatternKind::Preference, rule, &q, 0);
            assert!(parse_announce(&text).is_err(), "{rule}: {text}");
        }
        assert!(parse_announce(&reply(BuiltinKind::Reference, "hello")).is_err());
        assert!(parse_announce(&converge(BuiltinKind::Reference, PatternKind::Unmapped, "state", &q, 0)).is_err());
    }
}

//! Admission: whether one member is called for one step, and if so by
//! when. The per-call policies that decide this are applied here, in this
//! order, once: intercept, the command hook's event list, the matcher and
//! `if` filter, the chain budget, the circuit breaker. To add or move a
//! policy that decides whether a call happens, edit [`admit`] and nothing
//! else.

use hookhost_protocol::{Chain, OnError, Stage};
use serde_json::Value;
use tokio::time::Instant;

use crate::members::Member;
use crate::observe::stats::MemberStats;
use crate::policy::breaker::{Clearance, Permit};
use crate::policy::budget::ChainBudget;
use crate::policy::filter::FilterVerdict;

use super::record::NoAnswer;

/// What admission decides about one member for one step.
pub(crate) enum Admission<'m> {
    /// It takes no part in this stage: it does not intercept it, or the
    /// lifecycle event is not one it lists. No step, nothing counted.
    Absent,
    /// It takes part, but this call is not for it: its filter said no
    /// (counted), or its `if` failed under an allow policy.
    Pass,
    /// It fails this step without being called; its policy answers.
    Skip(NoAnswer),
    /// Call it.
    Call(Admitted<'m>),
}

/// A call admission let through.
pub(crate) struct Admitted<'m> {
    /// Reports the call's result to the breaker.
    pub(crate) permit: Permit<'m>,
    /// When admission was decided: the call's clock starts here.
    pub(crate) begun: Instant,
    /// When the call is given up: its own deadline or the chain's.
    pub(crate) deadline: Instant,
}

/// The admission order, stated once; each line is one policy.
pub(crate) fn admit<'m>(
    m: &'m Member,
    stage: Stage,
    chain: &Chain,
    budget: &ChainBudget,
) -> Admission<'m> {
    if !m.intercepts(stage) {
        return Admission::Absent; // intercept: config ∩ hello
    }
    if chain.event().is_some_and(|event| !m.handles_event(event)) {
        return Admission::Absent; // a command hook's lifecycle events
    }
    if let Some(admission) = filter(m, stage, chain.params()) {
        return admission; // matcher and `if`
    }
    let begun = Instant::now();
    if let Err(spent) = budget.check(begun) {
        MemberStats::bump(&m.stats.budget_skips);
        return Admission::Skip(NoAnswer::Budget(spent)); // chain budget
    }
    let permit = match m.breaker.admit() {
        Clearance::Call(permit) => permit,
        Clearance::Skip(why) => {
            MemberStats::bump(&m.stats.breaker_skips);
            return Admission::Skip(NoAnswer::Breaker(why)); // circuit breaker
        }
    };
    let deadline = budget.deadline_for(begun, m.timeout(stage));
    Admission::Call(Admitted {
        permit,
        begun,
        deadline,
    })
}

/// Runs the member's `matcher` and `if`: `None` lets the call through.
/// An `if` that fails to evaluate (a key the model left out, a wrong type)
/// is the hook's failure: only a hook whose policy is allow is passed
/// over for it, so a model cannot walk past a fail-closed guard by shaping
/// the arguments.
fn filter<'m>(m: &Member, stage: Stage, params: &Value) -> Option<Admission<'m>> {
    if m.filter.is_empty() {
        return None;
    }
    match m.filter.evaluate(stage, params) {
        FilterVerdict::Run => None,
        FilterVerdict::Skip => {
            MemberStats::bump(&m.stats.filtered);
            Some(Admission::Pass)
        }
        FilterVerdict::Error(e) => {
            MemberStats::bump(&m.stats.filter_errors);
            match m.policy(stage) {
                OnError::Allow => {
                    tracing::debug!(hook = %m.name, %stage, "`if` failed to evaluate, hook skipped (on_error = allow): {e}");
                    Some(Admission::Pass)
                }
                OnError::Deny => Some(Admission::Skip(NoAnswer::Filter(e))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering::Relaxed;
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::config::{BuiltinConfig, Defaults};

    fn member(config: Value) -> Member {
        let config: BuiltinConfig = serde_json::from_value(config).unwrap();
        Member::builtin("m", &config, Err("gone".into()), &Defaults::default())
    }

    fn before_tool(tool: &str) -> Chain {
        Chain::new(Stage::BeforeTool, json!({"tool": tool, "arguments": {}})).unwrap()
    }

    #[tokio::test]
    async fn a_stage_it_does_not_intercept_leaves_it_absent() {
        let m = member(json!({"intercept": ["before_llm"]}));
        let admission = admit(
            &m,
            Stage::BeforeTool,
            &before_tool("ls"),
            &ChainBudget::start(0),
        );
        assert!(matches!(admission, Admission::Absent));
        assert_eq!(m.stats.budget_skips.load(Relaxed), 0);
    }

    #[tokio::test]
    async fn the_filter_comes_before_the_budget() {
        let m = member(json!({"matcher": "^shell$"}));
        let spent = ChainBudget::start(0);
        let admission = admit(&m, Stage::BeforeTool, &before_tool("ls"), &spent);
        assert!(matches!(admission, Admission::Pass));
        assert_eq!(m.stats.filtered.load(Relaxed), 1);
        assert_eq!(m.stats.budget_skips.load(Relaxed), 0);
    }

    #[tokio::test]
    async fn a_spent_budget_skips_before_the_breaker_is_asked() {
        let m = member(json!({"matcher": "^shell$"}));
        let spent = ChainBudget::start(0);
        match admit(&m, Stage::BeforeTool, &before_tool("shell"), &spent) {
            Admission::Skip(why) => assert_eq!(
                why.to_string(),
                "skipped: the chain budget of 0 ms was spent"
            ),
            _ => panic!("not skipped"),
        }
        assert_eq!(m.stats.budget_skips.load(Relaxed), 1);
        assert_eq!(m.stats.breaker_skips.load(Relaxed), 0);
    }

    #[tokio::test]
    async fn an_admitted_call_ends_by_its_own_deadline_or_the_chains() {
        let m = member(json!({"timeout_ms": 50}));
        let budget = ChainBudget::start(10_000);
        match admit(&m, Stage::BeforeTool, &before_tool("ls"), &budget) {
            Admission::Call(a) => {
                assert_eq!(a.deadline - a.begun, Duration::from_millis(50));
                a.permit.record(false);
            }
            _ => panic!("not admitted"),
        }
    }
}

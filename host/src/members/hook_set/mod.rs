//! A docker-agent hook group: the hooks one agent file lists for one event,
//! run as one member of the chain under docker-agent's merge rules.
//!
//! Within the group every hook that matches runs (no short-circuit), and
//! identical definitions run once, in the order of their first matching
//! entry. Rewrite events (pre_tool_use, tool_input_transform,
//! tool_response_transform, before_llm_call) run the hooks one after the
//! other, each seeing the input the previous ones rewrote; the others run
//! them all at once. Their answers are merged by [`merge`] into the one
//! answer the group gives the chain, which then treats it like any other
//! member's (priority, budget, `if`, the verdict fold).
//!
//! Each hook is a member of its own (a command hook of the docker-agent
//! dialect, or a builtin), so a failing hook follows exactly the failure
//! policy it would have alone: one that fails closed counts as a refusal.

mod join;
mod merge;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use hookhost_protocol::{LifecycleEvent, Stage};
use serde_json::{Value, json};

use crate::config::{BuiltinConfig, Defaults, FailurePolicy, HookSetConfig, HookSpec, SetHook};
use crate::dialect::Dialect;
use crate::dialect::matcher::Matcher;
use crate::dialect::spec::{Event, Matching, Target};
use crate::dialect::stdin::Call;
use crate::error::CallError;
use crate::members::builtin::{self, BuiltinRegistry};
use crate::members::command::CommandHook;
use crate::members::{Member, MemberKind};
use crate::policy::deadline::Deadline;
use merge::Merge;

/// The docker-agent events whose hooks form a pipeline (the events that
/// rewrite what they are given).
const SEQUENTIAL: [&str; 4] = [
    "pre_tool_use",
    "tool_input_transform",
    "tool_response_transform",
    "before_llm_call",
];

/// One group, ready to run.
pub(crate) struct HookSet {
    name: Arc<str>,
    event: &'static Event,
    sequential: bool,
    /// One member per distinct definition.
    hooks: Vec<Arc<Member>>,
    /// Each entry as written: its matcher and the hook it names.
    entries: Vec<(Matcher, usize)>,
    tool_names: Arc<BTreeMap<String, String>>,
}

impl std::fmt::Debug for HookSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookSet")
            .field("name", &self.name)
            .field("event", &self.event.native)
            .field("hooks", &self.hooks.len())
            .finish()
    }
}

/// What builds a group's hooks.
pub(crate) struct Tools<'a> {
    pub(crate) registry: &'a BuiltinRegistry,
    pub(crate) tool_names: &'a Arc<BTreeMap<String, String>>,
    pub(crate) defaults: &'a Defaults,
}

impl HookSet {
    /// Builds a group. A builtin the registry lacks is left out with a
    /// warning (docker-agent ships builtins hookhost may not have); a
    /// command that cannot be set up is an error naming it.
    pub(crate) fn build(
        name: &str,
        config: &HookSetConfig,
        t: &Tools<'_>,
    ) -> Result<HookSet, String> {
        let spec = Dialect::DockerAgent.spec();
        let event = spec
            .event(&config.event)
            .ok_or_else(|| format!("docker-agent has no `{}` event here", config.event))?;
        let mut hooks: Vec<Arc<Member>> = Vec::new();
        let mut seen = Vec::new();
        let mut entries = Vec::new();
        for (i, entry) in config.entries.iter().enumerate() {
            let index = match seen.iter().position(|d| *d == &entry.definition) {
                Some(k) => k,
                None => {
                    let hook_name = format!("{name}#{i}");
                    let Some(m) = inner(&hook_name, config, &entry.hook, t)? else {
                        continue;
                    };
                    seen.push(&entry.definition);
                    hooks.push(Arc::new(m));
                    hooks.len() - 1
                }
            };
            let matcher = Matcher::new(entry.matcher.as_deref(), Matching::Anchored, true)
                .map_err(|e| e.to_string())?;
            entries.push((matcher, index));
        }
        Ok(HookSet {
            name: name.into(),
            event,
            sequential: SEQUENTIAL.contains(&event.native),
            hooks,
            entries,
            tool_names: t.tool_names.clone(),
        })
    }

    /// Shares what its hooks keep across a gateway's replicas.
    pub(crate) fn share(&self, store: &Arc<dyn crate::policy::shared::StateStore>) {
        for hook in &self.hooks {
            hook.share(store);
        }
    }

    /// The stages it is called at: its event's stage, or lifecycle for a
    /// lifecycle event that waits on an answer.
    pub(crate) fn stages(&self) -> Vec<Stage> {
        match self.event.target {
            Target::Stage(s) => vec![s],
            Target::Lifecycle(n) => match n.parse::<LifecycleEvent>() {
                Ok(ev) if ev.is_request() => vec![Stage::Lifecycle],
                _ => Vec::new(),
            },
        }
    }

    /// Whether it runs for lifecycle event `event`.
    pub(crate) fn handles(&self, event: &str) -> bool {
        matches!(self.event.target, Target::Lifecycle(n) if n == event)
    }

    /// The longest of its hooks' deadlines: the group's own.
    pub(crate) fn timeout(&self, stage: Stage) -> Duration {
        let each = self.hooks.iter().map(|h| h.timeout(stage));
        if self.sequential {
            each.sum()
        } else {
            each.max().unwrap_or_default()
        }
    }

    /// The hooks this call runs: each distinct definition once, in the order
    /// of its first entry whose matcher selects the tool.
    fn selected(&self, params: &Value) -> Vec<&Arc<Member>> {
        let tool = self
            .event
            .is_about_a_tool()
            .then(|| self.native_tool(params));
        let mut out: Vec<usize> = Vec::new();
        for (m, i) in &self.entries {
            if !out.contains(i) && m.matches(tool.as_deref()) {
                out.push(*i);
            }
        }
        out.into_iter().map(|i| &self.hooks[i]).collect()
    }

    /// The call's tool as docker-agent names it.
    fn native_tool(&self, params: &Value) -> String {
        let call = Call {
            spec: Dialect::DockerAgent.spec(),
            event: self.event,
            params,
            dir: Path::new("."),
            names: &self.tool_names,
        };
        call.native_tool()
    }

    /// Whether this call is for its event.
    fn is_for(&self, stage: Stage, params: &Value) -> bool {
        match self.event.target {
            Target::Stage(s) => s == stage,
            Target::Lifecycle(n) => {
                stage == Stage::Lifecycle && params.get("event").and_then(Value::as_str) == Some(n)
            }
        }
    }

    /// Runs the group for one chain call and answers with the merged
    /// result. It never fails as a whole: each hook's failure is judged by
    /// that hook's own policy inside the merge.
    pub(crate) async fn call(
        &self,
        stage: Stage,
        params: &Value,
        deadline: Deadline,
    ) -> Result<Value, CallError> {
        if !self.is_for(stage, params) {
            return Ok(crate::members::neutral());
        }
        let hooks = self.selected(params);
        let event = lifecycle_event(stage, params);
        let mut merged = Merge::new(stage, event, params);
        if self.sequential {
            for h in hooks {
                let reply = h.call_one(stage, merged.params(), deadline).await;
                merged.add(h, reply);
            }
        } else {
            let runs = hooks.iter().map(|h| h.call_one(stage, params, deadline));
            for (h, reply) in hooks.iter().zip(join::all(runs.collect()).await) {
                merged.add(h, reply);
            }
        }
        Ok(merged.finish())
    }

    /// Runs its hooks for a lifecycle event nobody waits on, all at once;
    /// their output is only logged, as for a lone command hook, and the
    /// first block (in the group's order) is given back.
    pub(crate) async fn notify(&self, event: &str, payload: &Value) -> Option<String> {
        if !self.handles(event) {
            return None;
        }
        let params = json!({"event": event, "payload": payload});
        let runs: Vec<_> = self
            .selected(&params)
            .into_iter()
            .filter_map(|h| h.notification(event, payload, None))
            .collect();
        join::all(runs)
            .await
            .into_iter()
            .find_map(|(block, _)| block)
    }
}

/// Whether docker-agent's `event` is one of its gates, where a failure
/// refuses whatever `on_error` says; its event table marks them
/// (pre_tool_use, tool_guard).
fn is_gate(event: &str) -> bool {
    Dialect::DockerAgent
        .spec()
        .event(event)
        .is_some_and(|e| e.fails_closed())
}

/// What a failing builtin decides: docker-agent fails closed at its
/// gates, and warns and goes on elsewhere.
fn builtin_policy(event: &str) -> FailurePolicy {
    if is_gate(event) {
        FailurePolicy::Block
    } else {
        FailurePolicy::Warn
    }
}

/// The lifecycle event of a lifecycle call.
fn lifecycle_event(stage: Stage, params: &Value) -> Option<LifecycleEvent> {
    if stage != Stage::Lifecycle {
        return None;
    }
    params.get("event")?.as_str()?.parse().ok()
}

/// One hook of the group as a member of its own, or `None` for a builtin
/// this host does not have.
fn inner(
    name: &str,
    set: &HookSetConfig,
    hook: &SetHook,
    t: &Tools<'_>,
) -> Result<Option<Member>, String> {
    match hook {
        SetHook::Command(c) => {
            let dir = c.working_dir.clone().unwrap_or_default();
            let built = CommandHook::new(name, c, &dir, t.tool_names.clone())
                .map_err(|e| format!("hook `{name}`: {e}"))?;
            let spec = HookSpec::command(name, (**c).clone(), t.tool_names);
            let kind = MemberKind::Command(Arc::new(built));
            Ok(Some(Member::new(&spec, kind, t.defaults)))
        }
        SetHook::Builtin {
            name: builtin,
            args,
        } => {
            let config = builtin::docker_agent_config(builtin, args, &set.event);
            let Ok(built) = t.registry.build(builtin, &config) else {
                tracing::warn!(
                    "{}: agent `{}`, {}: hookhost has no builtin `{builtin}` (or not with these args); it is left out",
                    set.file.display(),
                    set.agent,
                    set.event
                );
                return Ok(None);
            };
            let mut b = BuiltinConfig::new(config);
            b.on_error = Some(builtin_policy(&set.event));
            b.breaker = Some(false);
            let kind = MemberKind::Builtin(built);
            Ok(Some(Member::new(
                &HookSpec::builtin(name, &b),
                kind,
                t.defaults,
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::group_fails_closed as fails_closed;

    /// Which docker-agent events fail closed, now read from its event
    /// table and the stage default: a group past its deadline refuses at
    /// its gates and at permission_request, a builtin only at its gates,
    /// as the lists these replaced said; every other event goes on.
    #[test]
    fn gates_and_the_approver_fail_closed_and_nothing_else() {
        let names = Dialect::DockerAgent.spec().event_names();
        let names: Vec<&str> = names.split(", ").collect();
        assert!(names.len() > 20, "{names:?}");
        for event in names {
            let gate = matches!(event, "pre_tool_use" | "tool_guard");
            assert_eq!(
                fails_closed(event),
                gate || event == "permission_request",
                "{event}"
            );
            let want = if gate {
                FailurePolicy::Block
            } else {
                FailurePolicy::Warn
            };
            assert_eq!(builtin_policy(event), want, "{event}");
        }
        assert!(!fails_closed("no_such_event"));
    }
}

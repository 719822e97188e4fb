//! The agent's own event, kept beside the chain's params while hookhost
//! answers it (`hookhost relay`, an agent's HTTP hook), so that a command
//! hook written for that agent gets exactly what the agent would have
//! sent it, and what it answers beyond the protocol's words reaches the
//! agent unchanged.
//!
//! Both directions hold only for hooks of the event's own dialect and
//! event: a Claude Code hook answering a Claude Code event. A hook of
//! another dialect gets hookhost's translation (spec/dialects.md §2), which
//! is an addition hookhost makes, not the agent's behaviour.
//!
//! In: the agent's input, verbatim, except where an earlier hook in the
//! chain rewrote something (the tool's input, its result, the model
//! call): those keys are written anew from the chain's params, as
//! [`Handoff`] says (Gemini CLI's failed hooks and sequential groups).
//!
//! Out: the [`Notes`] of every hook that answered, in chain order: the
//! messages for the user (`systemMessage` and its spellings, from any
//! dialect), and the same-dialect answer keys hookhost's protocol has no
//! word for (`suppressOutput`, `continue: false` where it stops the agent,
//! Gemini's `tailToolCallRequest`, `clearContext`, `llm_request`, ...).
//! The first hook to give a key wins it.

use std::sync::{Mutex, OnceLock};

use hookhost_protocol::{Chain, LifecycleEvent, OnError, Stage};
use serde_json::{Map, Value};

use super::Dialect;
use super::handoff::{Handoff, rewrite};
use super::reply::{Permission, Reply};
use super::spec::{Event, Spec, Target};
use super::stdin::Call;

/// One agent event being answered.
#[derive(Debug)]
pub(crate) struct Origin {
    dialect: Dialect,
    event: &'static Event,
    /// What the agent sent, as it sent it.
    input: Value,
    /// The chain's params as read from `input`.
    params: Value,
    /// Those params as the chain starts from them (the keys the protocol
    /// always sends filled in): what an earlier hook changed is what
    /// differs from these. Made when an own hook first needs them.
    base: OnceLock<Value>,
    /// The variables the agent set for this hook run that only it knows
    /// (`CLAUDE_ENV_FILE`), handed to its own hooks.
    env: Vec<(&'static str, String)>,
    notes: Mutex<Notes>,
    /// What the own hooks hand on beyond the chain's params.
    handoff: Mutex<Handoff>,
}

/// What the hooks said that the chain's verdict does not carry.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Notes {
    /// Messages for the user, in chain order.
    pub(crate) messages: Vec<String>,
    /// The context the event's own hooks gave, in chain order: written
    /// when the verdict carries none (a refusal keeps no context in the
    /// chain, but the agent keeps a refusing hook's context).
    pub(crate) contexts: Vec<String>,
    /// Top-level answer keys of the event's own dialect, first hook wins.
    pub(crate) top: Map<String, Value>,
    /// `hookSpecificOutput` keys of the event's own dialect, first hook
    /// wins.
    pub(crate) specific: Map<String, Value>,
    /// The reasons the event's own hooks gave, in chain order: their
    /// refusals, and at Gemini CLI every reason (it joins them all).
    pub(crate) reasons: Vec<String>,
    /// The first own hook's block by exit 2, with its stderr as written.
    pub(crate) exit_block: Option<String>,
    /// The first own hook's failure that its agent shows as a warning
    /// (Gemini CLI's exit 1 with text), with that text.
    pub(crate) exit_warning: Option<String>,
    /// An own hook failed while its answer is used (Gemini CLI's non-zero
    /// exit with JSON): the agent tells its user a hook failed.
    pub(crate) failed: bool,
    /// Every context of the event's own hooks was plain stdout.
    pub(crate) plain: bool,
    /// Where the agent lets a later hook's permission answer win over an
    /// earlier one's (Copilot CLI's permissionRequest merges its hooks'
    /// answers in order), the own hooks' answers, in chain order.
    pub(crate) approvals: Vec<Permission>,
    /// The chain's verdict is the agent's own hooks' alone (an own hook's
    /// answer, with no other hook left unasked after it), so the agent's
    /// rule for its own hooks may decide it.
    pub(crate) own_verdict: bool,
    /// At a permission request, the first own hook's allow with a new
    /// input (Claude Code's `decision.updatedInput`), which the agent runs
    /// in place of the call: the protocol's approval carries no input.
    pub(crate) approved_input: Option<Value>,
}

impl Notes {
    /// Nothing to add to the answer.
    pub(crate) fn is_empty(&self) -> bool {
        self.messages.is_empty()
            && self.contexts.is_empty()
            && self.reasons.len() < 2
            && self.top.is_empty()
            && self.specific.is_empty()
            && self.approved_input.is_none()
            && self.exit_block.is_none()
            && !self.failed
            && !self.overturned()
    }

    /// The own hooks' refusal that a later own hook's allow overturns, as
    /// their agent merges their answers: the verdict is theirs alone, one
    /// of them denied, and the last of them to answer allowed.
    pub(crate) fn overturned(&self) -> bool {
        let denied = self.approvals.contains(&Permission::Deny);
        let last_allows = self.approvals.last() == Some(&Permission::Allow);
        self.own_verdict && denied && last_allows
    }
}

/// Adds one hook's `key` to what earlier hooks gave, as Gemini CLI merges
/// its hooks' answers (hookAggregator.ts): a later hook's value wins, an
/// object is merged key by key, reasons are joined with newlines, and
/// `toolConfig` is merged by its own rule.
fn merge(into: &mut Map<String, Value>, key: &str, value: &Value) {
    let merged = match (into.get(key), value) {
        (Some(Value::Object(old)), Value::Object(new)) if key == "toolConfig" => {
            tool_config(old, new)
        }
        (Some(Value::Object(old)), Value::Object(new)) => {
            let mut both = old.clone();
            both.extend(new.clone());
            Value::Object(both)
        }
        (Some(Value::String(old)), Value::String(new)) if REASONS.contains(&key) => {
            Value::from(format!("{old}\n{new}"))
        }
        _ => value.clone(),
    };
    into.insert(key.to_string(), merged);
}

/// The texts joined rather than replaced.
const REASONS: [&str; 3] = ["stopReason", "stop_reason", "reason"];

/// Gemini CLI's merge of two tool configs: `NONE` beats `ANY` beats
/// `AUTO`; the allowed function names are the sorted union (none under
/// `NONE`).
fn tool_config(old: &Map<String, Value>, new: &Map<String, Value>) -> Value {
    let mode = |m: &Map<String, Value>| {
        m.get("mode")
            .and_then(Value::as_str)
            .unwrap_or("AUTO")
            .to_string()
    };
    let modes = [mode(old), mode(new)];
    let mode = ["NONE", "ANY"]
        .into_iter()
        .find(|m| modes.iter().any(|x| x == m))
        .unwrap_or("AUTO");
    let mut names: Vec<String> = [old, new]
        .iter()
        .filter_map(|m| m.get("allowedFunctionNames")?.as_array())
        .flatten()
        .filter_map(|n| n.as_str().map(str::to_string))
        .collect();
    names.sort();
    names.dedup();
    if mode == "NONE" {
        names.clear();
    }
    serde_json::json!({"mode": mode, "allowedFunctionNames": names})
}

/// Whether the agent takes context from a hook at `event`: at a tool
/// event, at a lifecycle event that builds a model request, and where the
/// dialect reads plain output as context (Codex's SubagentStart).
fn takes_context(spec: &Spec, event: &Event) -> bool {
    match event.target {
        Target::Stage(Stage::BeforeTool | Stage::AfterTool) => true,
        Target::Stage(_) => false,
        Target::Lifecycle(name) => {
            let ev: Option<LifecycleEvent> = name.parse().ok();
            ev.is_some_and(LifecycleEvent::takes_context) || spec.plain_is_context(event)
        }
    }
}

impl Origin {
    /// The agent's dialect, for the hook point's span.
    pub(crate) fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The event's name as the agent writes it (`PreToolUse`), for the
    /// hook point's span.
    pub(crate) fn event_name(&self) -> &'static str {
        self.event.native
    }

    /// An event of `dialect`, as the agent sent it (`input`) and as the
    /// chain receives it (`params`).
    pub(crate) fn new(
        dialect: Dialect,
        event: &'static Event,
        input: Value,
        params: Value,
    ) -> Self {
        Origin {
            dialect,
            event,
            input,
            params,
            base: OnceLock::new(),
            env: Vec::new(),
            notes: Mutex::new(Notes::default()),
            handoff: Mutex::new(Handoff::default()),
        }
    }

    /// Says whether the agent runs this event's own hooks as a sequential
    /// group (Gemini CLI: any matching definition with `sequential: true`).
    pub(crate) fn set_sequential(&self, sequential: bool) {
        self.handoff().sequential = sequential;
    }

    fn handoff(&self) -> std::sync::MutexGuard<'_, Handoff> {
        self.handoff.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The stage a call of `event` runs at.
    fn stage(event: &Event) -> Stage {
        match event.target {
            Target::Stage(s) => s,
            Target::Lifecycle(_) => Stage::Lifecycle,
        }
    }

    /// The same, with the variables the agent set for this hook run.
    pub(crate) fn with_env(mut self, env: Vec<(&'static str, String)>) -> Self {
        self.env = env;
        self
    }

    /// The agent's value of variable `name` for this hook run, if it set
    /// one.
    pub(crate) fn agent_var(&self, name: &str) -> Option<&str> {
        self.env
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// [`Origin::base`]'s params, made once.
    fn base(&self, stage: Stage) -> &Value {
        self.base.get_or_init(|| {
            Chain::new(stage, self.params.clone())
                .map_or_else(|_| self.params.clone(), |c| c.params().clone())
        })
    }

    /// Whether a hook of `spec` listed under `event` is written for this
    /// very event.
    pub(crate) fn owns(&self, spec: &Spec, event: &Event) -> bool {
        spec.dialect == self.dialect && event.native == self.event.native
    }

    /// The agent's input as sent, for a hook of its own dialect and event
    /// at an event nobody waits on, where no hook rewrites anything.
    pub(crate) fn input_as_sent(&self, call: &Call<'_>) -> Option<Value> {
        self.owns(call.spec, call.event).then(|| self.input.clone())
    }

    /// The input a hook of this event's own dialect gets: where the last
    /// own hook left it ([`Handoff`]; at first the agent's input), with
    /// each key whose source a hook rewrote since written anew
    /// (`tool_input` after a rewrite, `tool_response` after a redaction).
    /// `None` for a hook of another dialect or event, which gets the
    /// translation.
    pub(crate) fn input_for(&self, call: &Call<'_>) -> Option<Value> {
        if !self.owns(call.spec, call.event) {
            return None;
        }
        let handoff = self.handoff();
        let (mut input, before) = match handoff.start() {
            Some((input, before)) => (input.clone(), before.clone()),
            None => {
                let base = self.base(Self::stage(call.event));
                if call.params == base {
                    return Some(self.input.clone());
                }
                let before = Call {
                    params: base,
                    ..*call
                }
                .input();
                (self.input.clone(), before)
            }
        };
        rewrite(&mut input, &before, &call.input());
        Some(input)
    }

    /// Records what an own hook hands the next own hook: it got `handed`,
    /// answered `reply`, and the chain takes `result` from it. Nothing for
    /// a hook of another dialect or event, nor where the chain's params
    /// alone say it.
    pub(crate) fn hand_on(&self, call: &Call<'_>, handed: &Value, reply: &Reply, result: &Value) {
        if !self.owns(call.spec, call.event) {
            return;
        }
        let mut handoff = self.handoff();
        if !handoff.follows(reply) {
            return;
        }
        let stage = Self::stage(call.event);
        let Ok(mut chain) = Chain::new(stage, call.params.clone()) else {
            return;
        };
        chain.step("", OnError::default_for(stage), Ok(result));
        let after = Call {
            params: chain.params(),
            ..*call
        }
        .input();
        handoff.record(call.event.native, handed, reply, &call.input(), after);
    }

    /// Keeps what `reply` (the answer of a hook of `spec` listed under
    /// `event`) says beyond the verdict: its message for the user, and,
    /// from a hook of this event's own dialect, the answer keys the agent
    /// reads that the chain cannot carry.
    pub(crate) fn note(&self, spec: &Spec, event: &Event, reply: &Reply) {
        let mut notes = self.notes.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(msg) = &reply.system_message {
            notes.messages.push(msg.clone());
        }
        if !self.owns(spec, event) {
            return;
        }
        let reason = match (reply.refusal(), spec.dialect) {
            (Some(r), _) => r,
            (None, Dialect::GeminiCli) => reply.permission_reason.clone(),
            (None, _) => None,
        };
        notes.reasons.extend(reason.filter(|r| !r.is_empty()));
        if notes.exit_block.is_none() {
            notes.exit_block.clone_from(&reply.by_exit);
        }
        if notes.exit_warning.is_none() {
            notes.exit_warning.clone_from(&reply.warned);
        }
        notes.failed |= reply.failed;
        if self.later_answer_wins() {
            notes.approvals.extend(reply.permission);
        }
        if takes_context(spec, self.event) {
            if let Some(ctx) = &reply.additional_context {
                notes.plain = (notes.contexts.is_empty() || notes.plain) && reply.plain;
                notes.contexts.push(ctx.clone());
            }
        }
        if reply.permission == Some(Permission::Allow) && notes.approved_input.is_none() {
            let approval = matches!(event.target, Target::Stage(Stage::ApproveTool));
            notes.approved_input = reply
                .updated_input
                .clone()
                .filter(|_| approval)
                .map(Value::Object);
        }
        for (k, v) in &reply.native_top {
            merge(&mut notes.top, k, v);
        }
        for (k, v) in &reply.native_specific {
            merge(&mut notes.specific, k, v);
        }
    }

    /// Whether the agent lets a later hook's permission answer override an
    /// earlier one's at this event: Copilot CLI at permissionRequest
    /// (its hooks' outputs are merged in order, later keys winning).
    pub(crate) fn later_answer_wins(&self) -> bool {
        self.dialect == Dialect::Copilot
            && matches!(self.event.target, Target::Stage(Stage::ApproveTool))
    }

    /// Records whether the chain's verdict was the agent's own hooks'
    /// alone ([`Notes::own_verdict`]).
    pub(crate) fn verdict_by_own(&self, own: bool) {
        self.notes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .own_verdict = own;
    }

    /// What the hooks noted, to add to the agent's answer.
    pub(crate) fn notes(&self) -> Notes {
        self.notes.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::Path;

    use serde_json::json;

    use super::*;

    /// A Gemini CLI BeforeTool of `run_shell_command` being answered.
    struct Run {
        origin: Origin,
        params: Value,
        names: BTreeMap<String, String>,
    }

    impl Run {
        fn new() -> Run {
            let params = json!({"tool": "shell",
                "arguments": {"command": "ls", "description": "list"}});
            let names = BTreeMap::new();
            let spec = Dialect::GeminiCli.spec();
            let event = spec.event("BeforeTool").expect("an event");
            let input = Run::call_of(&params, &names).input();
            let origin = Origin::new(Dialect::GeminiCli, event, input, params.clone());
            Run {
                origin,
                params,
                names,
            }
        }

        fn call_of<'a>(params: &'a Value, names: &'a BTreeMap<String, String>) -> Call<'a> {
            let spec = Dialect::GeminiCli.spec();
            Call {
                spec,
                event: spec.event("BeforeTool").expect("an event"),
                params,
                dir: Path::new("/p"),
                names,
            }
        }

        /// One own hook: it gets its input, answers `reply` (which the
        /// chain takes as `result`), and the chain moves on. What it got.
        fn hook(&mut self, reply: Reply, result: Value) -> Value {
            let call = Run::call_of(&self.params, &self.names);
            let handed = self.origin.input_for(&call).expect("an own hook");
            self.origin.hand_on(&call, &handed, &reply, &result);
            self.other(result);
            handed
        }

        /// The chain takes `result` from a hook of another dialect.
        fn other(&mut self, result: Value) {
            let mut chain = Chain::new(Stage::BeforeTool, self.params.clone()).expect("params");
            chain.step("h", OnError::default_for(Stage::BeforeTool), Ok(&result));
            self.params = chain.params().clone();
        }

        /// What the next own hook gets.
        fn next(&self) -> Value {
            let call = Run::call_of(&self.params, &self.names);
            self.origin.input_for(&call).expect("an own hook")
        }
    }

    /// A Gemini answer `{"hookSpecificOutput": {"tool_input": {"command":
    /// ...}}}`, as it reaches the chain (a whole new input).
    fn rewrite_to(command: &str, failed: bool) -> (Reply, Value) {
        let reply = Reply {
            updated_input: json!({"command": command}).as_object().cloned(),
            failed,
            ..Reply::default()
        };
        let result = json!({"action": "modify",
            "call": {"arguments": {"command": command, "description": null}}});
        (reply, result)
    }

    #[test]
    fn a_failed_hooks_rewrite_is_answered_but_not_handed_to_the_next_hook() {
        for sequential in [false, true] {
            let mut run = Run::new();
            run.origin.set_sequential(sequential);
            let (reply, result) = rewrite_to("changed", true);
            run.hook(reply, result);
            assert_eq!(run.params["arguments"], json!({"command": "changed"}));
            assert_eq!(
                run.next()["tool_input"],
                json!({"command": "ls", "description": "list"}),
                "sequential: {sequential}"
            );
        }
    }

    #[test]
    fn a_sequential_group_merges_a_rewrite_over_the_arguments_for_the_next_hook() {
        let mut run = Run::new();
        run.origin.set_sequential(true);
        let (reply, result) = rewrite_to("seq", false);
        run.hook(reply, result);
        let seen = json!({"command": "seq", "description": "list"});
        assert_eq!(run.next()["tool_input"], seen);
        let (reply, result) = rewrite_to("again", false);
        assert_eq!(run.hook(reply, result)["tool_input"], seen);
        let again = json!({"command": "again", "description": "list"});
        assert_eq!(run.next()["tool_input"], again);
        // A rewrite by a hook of another dialect is handed on as the chain
        // has it.
        run.other(json!({"action": "modify", "call": {"arguments": {"command": "other"}}}));
        assert_eq!(run.next()["tool_input"], json!({"command": "other"}));
    }

    #[test]
    fn outside_a_sequential_group_the_next_hook_gets_the_chains_rewrite() {
        let mut run = Run::new();
        let (reply, result) = rewrite_to("changed", true);
        run.hook(reply, result);
        let (reply, result) = rewrite_to("composed", false);
        run.hook(reply, result);
        assert_eq!(run.next()["tool_input"], json!({"command": "composed"}));
    }
}

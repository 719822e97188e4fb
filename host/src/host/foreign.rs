//! An agent's own hook event, run through the whole chain and answered in
//! that agent's format: what `hookhost relay` (and an agent's HTTP hook)
//! stands on.

use std::sync::Arc;

use hookhost_protocol::{LifecycleEvent, Stage};
use serde_json::{Map, Value};

use crate::chain::{HookTrace, NoAnswer};
use crate::dialect::Dialect;
use crate::dialect::agent::{self, EventError, Incoming, NativeAnswer};
use crate::dialect::notes;
use crate::dialect::origin::Origin;
use crate::dialect::spec::Target;
use crate::error::CallError;

use super::{DecisionRecord, Host, decision};
use crate::observe::audit::{AuditRecord, Who};
use crate::observe::observer::AnsweredEvent;

/// One event as an agent sent it to a command hook, read in its dialect.
#[derive(Debug, Clone)]
pub struct ForeignEvent {
    dialect: Dialect,
    incoming: Incoming,
    /// The event as the agent sent it: what its own command hooks read.
    input: Value,
    /// The variables the agent set for this hook run that only it knows
    /// ([`Dialect::agent_vars`]), as the relay found them.
    agent_env: Vec<(&'static str, String)>,
}

impl ForeignEvent {
    /// Reads `input` (the JSON agent `dialect` writes to a command hook's
    /// stdin). `event` names the event when the payload does not (Copilot
    /// CLI's camelCase payloads), and otherwise must agree with it.
    pub fn read(
        dialect: Dialect,
        input: &Value,
        event: Option<&str>,
    ) -> Result<ForeignEvent, EventError> {
        let incoming = agent::read_event(dialect.spec(), input, event)?;
        Ok(ForeignEvent {
            dialect,
            incoming,
            input: input.clone(),
            agent_env: Vec::new(),
        })
    }

    /// Takes the values of the variables the agent sets for a hook run
    /// ([`Dialect::agent_vars`]) from `lookup`: the relay's own
    /// environment, or what a relay sent along with the event. The
    /// event's own command hooks get them as the agent would have given
    /// them; no other name is taken, so a caller cannot set any other
    /// variable of a hook.
    pub fn with_agent_env(mut self, lookup: impl Fn(&str) -> Option<String>) -> Self {
        self.agent_env = self
            .dialect
            .agent_vars()
            .filter_map(|k| Some((k, lookup(k)?)))
            .collect();
        self
    }

    /// Writes `identity` (a gateway's caller, from the credential) into
    /// the event's `meta`, over what the event claimed: the chain's scopes
    /// then hold against the credential.
    pub fn with_identity(mut self, identity: &super::Identity) -> Self {
        identity.stamp(&mut self.incoming.params);
        self
    }

    /// The session it belongs to (`""` when the agent named none).
    fn session(&self) -> &str {
        self.incoming
            .params
            .get("meta")
            .and_then(|m| m.get("session_key"))
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// What the chain keeps of the agent's event while answering it.
    fn origin(&self) -> Origin {
        let origin = Origin::new(
            self.dialect,
            self.incoming.event,
            self.input.clone(),
            self.incoming.params.clone(),
        );
        origin.with_env(self.agent_env.clone())
    }

    /// The agent whose event it is.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The event's native name (`PreToolUse`).
    pub fn name(&self) -> &'static str {
        self.incoming.event.native
    }

    /// hookhost's params for it, as the chain receives them.
    pub fn params(&self) -> &Value {
        &self.incoming.params
    }

    /// Whether a refusal is possible here: a tool call, an approval, or a
    /// lifecycle event that can be blocked. What fails at such an event
    /// must refuse.
    pub fn can_refuse(&self) -> bool {
        self.incoming.event.can_block()
    }

    /// The refusal this event's agent reads whatever its dialect: exit 2
    /// with the reason on stderr. For when the chain could not be asked.
    pub fn refusal(&self, reason: &str) -> NativeAnswer {
        NativeAnswer::block(reason)
    }

    /// The answer when hookhost itself could not answer (no daemon or
    /// gateway, a chain that could not run), under a fail-closed policy:
    /// the refusal ([`ForeignEvent::refusal`]) wherever refusing stops
    /// something. At a stop (`Stop`, `SubagentStop`) a block is the
    /// opposite, the agent told to keep working, and with hookhost down it
    /// would be told so for ever: there the agent stops, shown `why` as a
    /// warning. hookhost never turns an agent's stop into a continue that
    /// no hook asked for.
    pub fn unanswered(&self, why: &str) -> NativeAnswer {
        let stop = match self.incoming.event.target {
            Target::Lifecycle(name) => name.parse::<LifecycleEvent>().is_ok_and(|e| e.is_stop()),
            Target::Stage(_) => false,
        };
        match stop {
            true => notes::warning(
                self.dialect.spec(),
                &format!("{why}; at a stop that would keep the agent working, so it stops instead"),
            ),
            false => self.refusal(why),
        }
    }

    /// `answer` as the body of an HTTP hook's response. An agent reads
    /// that body as it reads a command hook's stdout, but there is no exit
    /// code to carry a refusal, so an exit-2 answer becomes the event's
    /// refusal in JSON, with the same reason. Never an empty body where a
    /// refusal was meant.
    pub fn http_body(&self, answer: NativeAnswer) -> String {
        let spec = self.dialect.spec();
        let answer = match answer.code {
            0 => answer,
            // A hook's failure its agent shows as a warning (exit 1); an
            // answer used though its hook failed is the answer.
            1 if answer.stdout.is_empty() => notes::warning(spec, answer.stderr.trim()),
            1 => answer,
            _ => agent::write_refusal(spec, &self.incoming, &answer.stderr),
        };
        match answer.stdout.is_empty() {
            true => "{}".to_string(),
            false => answer.stdout,
        }
    }
}

impl Host {
    /// Runs a foreign event through the whole chain (every kind of hook,
    /// in any dialect) and answers as its agent expects from a command
    /// hook. An event nobody waits on is announced (observers, command
    /// hooks listing it) and answered with nothing to say. Params the chain
    /// refuses are refused (exit 2) where the event can be refused.
    pub async fn answer_foreign(&self, event: &ForeignEvent) -> NativeAnswer {
        self.answer_foreign_with(event, false).await.0
    }

    /// [`Host::answer_foreign`], and what decided the answer: the
    /// [`DecisionRecord`] (verdict, deciding hook, reason, the hooks that
    /// failed open, the policy in force), also written to the audit log as
    /// the event's `"kind": "decision"` record. What a team's gateway
    /// returns with every answer.
    pub async fn answer_foreign_recorded(
        &self,
        event: &ForeignEvent,
    ) -> (NativeAnswer, DecisionRecord) {
        self.answer_foreign_with(event, true).await
    }

    /// The answer and its record, shown to the embedder's observer once.
    async fn answer_foreign_with(
        &self,
        event: &ForeignEvent,
        recorded: bool,
    ) -> (NativeAnswer, DecisionRecord) {
        let (answer, record) = self.answer_foreign_run(event, recorded).await;
        if let Some(observer) = self.observer() {
            observer.event_answered(&AnsweredEvent {
                dialect: event.dialect.as_str(),
                record: &record,
            });
        }
        (answer, record)
    }

    async fn answer_foreign_run(
        &self,
        event: &ForeignEvent,
        recorded: bool,
    ) -> (NativeAnswer, DecisionRecord) {
        let params = event.incoming.params.clone();
        let stage = match event.incoming.event.target {
            Target::Stage(s) => s,
            Target::Lifecycle(name) => match name.parse::<LifecycleEvent>() {
                Ok(ev) if ev.is_request() => Stage::Lifecycle,
                _ => {
                    let (answer, record) = self.answer_announced(event, name).await;
                    if recorded {
                        let id = self.next_request_id();
                        self.audit_decision(Stage::Lifecycle, id, &event.incoming.params, &record);
                    }
                    return (answer, record);
                }
            },
        };
        let origin = event.origin();
        // Traced when recorded (to name the hooks that failed open) or when
        // the chain holds an untrusted hook (to name it); the common path
        // builds no trace.
        let mut trace = Vec::new();
        let traced = recorded || self.chain().iter().any(|m| m.is_untrusted());
        let id = self.next_request_id();
        let run = self
            .run_from(
                (stage, params),
                traced.then_some(&mut trace),
                &origin,
                id.clone(),
            )
            .await;
        let (answer, record) = self.answered(event, stage, run, &origin, &trace);
        if recorded {
            self.audit_decision(stage, id, &event.incoming.params, &record);
        }
        (answer, record)
    }

    /// The agent's answer to a chain's run, and its decision record.
    fn answered(
        &self,
        event: &ForeignEvent,
        stage: Stage,
        run: Result<hookhost_protocol::Outcome, hookhost_protocol::chain::ParamsError>,
        origin: &Origin,
        trace: &[HookTrace],
    ) -> (NativeAnswer, DecisionRecord) {
        let spec = event.dialect.spec();
        match run {
            Ok(outcome) => {
                let answer = agent::write_answer(spec, &event.incoming, &outcome.to_wire(stage));
                let mut notes = origin.notes();
                notes.messages.extend(untrusted_notice(trace));
                let record = decision::record(&outcome, trace, self.policy());
                (
                    notes::add_notes(spec, &event.incoming, answer, notes),
                    record,
                )
            }
            Err(e) => {
                let why = format!("hookhost refused the event: {e}");
                let record = DecisionRecord::error(why.clone(), self.policy());
                if event.can_refuse() {
                    return (event.unanswered(&why), record);
                }
                tracing::error!(
                    event = event.name(),
                    "hookhost could not run the event: {e}"
                );
                let answer = agent::write_answer(spec, &event.incoming, &Value::Object(Map::new()));
                (answer, record)
            }
        }
    }

    /// The audit log's record of what decided an answered event.
    fn audit_decision(
        &self,
        stage: Stage,
        request_id: String,
        params: &Value,
        record: &DecisionRecord,
    ) {
        let Some(audit) = self.inner.audit.as_ref() else {
            return;
        };
        audit.record(AuditRecord {
            ts: std::time::SystemTime::now(),
            hook: record.hook.clone().unwrap_or_default(),
            stage,
            request_id,
            session: params["meta"]["session_key"].as_str().map(str::to_string),
            who: Who::of(params),
            duration: std::time::Duration::ZERO,
            outcome: record.decision.to_string(),
            reason: record.reason.clone(),
            error: None,
            model: None,
            decision: Some(Box::new(record.clone())),
        });
    }

    /// A lifecycle event nobody waits on, by name (hookhost's own or an
    /// open one such as `cwd_changed`): observers get it, and the command
    /// hooks that list it run, all at once. The answer is their first
    /// block in chain order, where their agent lets a hook block the event
    /// (Claude Code's `config_change`), else nothing, with what they said
    /// beside it (messages, the agent's own keys) either way.
    async fn answer_announced(
        &self,
        event: &ForeignEvent,
        name: &str,
    ) -> (NativeAnswer, DecisionRecord) {
        let params = &event.incoming.params;
        let payload = params
            .get("payload")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let meta = params
            .get("meta")
            .and_then(|m| serde_json::from_value(m.clone()).ok())
            .unwrap_or_default();
        if let Ok(ev) = name.parse::<LifecycleEvent>() {
            if ev == LifecycleEvent::SessionEnd {
                self.session_ended(event.session()).await;
            }
        }
        let origin = Arc::new(event.origin());
        let blocked = self
            .announce(name, payload, meta, Some(origin.clone()))
            .await;
        let spec = event.dialect.spec();
        let record = DecisionRecord::announced(blocked.clone(), self.policy());
        if event.incoming.event.is_literal() {
            return (literal_answer(&origin.notes().contexts), record);
        }
        let answer = match blocked {
            Some(reason) if event.can_refuse() => event.refusal(&reason),
            _ => {
                let answer = agent::write_answer(spec, &event.incoming, &Value::Object(Map::new()));
                notes::add_notes(spec, &event.incoming, answer, origin.notes())
            }
        };
        (answer, record)
    }
}

/// The answer at an event whose answer is text (Codex's UserInstructions):
/// the texts its own hooks gave, in chain order, a paragraph each, and
/// nothing else, since the agent takes every byte of stdout as that text
/// (a message or a key written beside it would become instructions).
fn literal_answer(texts: &[String]) -> NativeAnswer {
    NativeAnswer {
        stdout: texts.join("\n\n"),
        stderr: String::new(),
        code: 0,
    }
}

/// What the agent shows its user about the project's hooks that were due
/// at this event but did not run because the user has not trusted them:
/// each one's sentence (it names the file and how to trust it), so a
/// skipped hook is never silent. `None` when there were none.
fn untrusted_notice(trace: &[HookTrace]) -> Option<String> {
    let lines: Vec<&str> = trace
        .iter()
        .filter_map(|t| match &t.answer {
            Err(NoAnswer::Call(CallError::Untrusted(why))) => Some(why.as_str()),
            _ => None,
        })
        .collect();
    (!lines.is_empty()).then(|| format!("hookhost: {}", lines.join("\nhookhost: ")))
}

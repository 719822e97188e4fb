//! [`Host`]: what an agent embeds. It starts the configured hooks, runs
//! each stage through the chain, fans runtime events out to observers, and
//! shuts everything down.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use hookhost_protocol::chain::{ParamsError, Step, StepOutcome};
use hookhost_protocol::event::RuntimeEvent;
use hookhost_protocol::params::{AfterLlmParams, AfterToolParams, BeforeLlmParams, ToolCall};
use hookhost_protocol::stage::method;
use hookhost_protocol::{Chain, Flow, Outcome, Stage};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

use crate::config::Config;
use crate::hook::{HookEntry, HookState, forward_events};
use crate::outcome::{Approval, StageOutcome, ToolOutcome};
use crate::supervisor::{Started, supervise};

/// A hook that did not come up at start. It stays configured: its
/// supervisor keeps retrying with backoff, and meanwhile its `on_error`
/// policy answers for it, so a fail-closed guard that cannot start keeps
/// failing closed.
#[derive(Debug, Clone)]
pub struct StartFailure {
    /// The hook's name.
    pub hook: String,
    /// Why, with the tail of its stderr.
    pub error: String,
}

/// A hook that came up at start.
#[derive(Debug, Clone)]
pub struct StartedHook {
    /// The hook's name.
    pub hook: String,
    /// Process id, protocol version and handshake time.
    pub info: Started,
}

/// One hook's part in one stage, for `--trace` output and debugging.
#[derive(Debug, Clone)]
pub struct HookTrace {
    /// The hook.
    pub hook: String,
    /// Its raw result, or how the call failed.
    pub answer: Result<Value, String>,
    /// From sending the request to having the answer (or giving up).
    pub elapsed: std::time::Duration,
    /// What the chain did with it.
    pub outcome: StepOutcome,
}

/// The hook host. Cheap to clone; all clones share the same hooks.
#[derive(Clone)]
pub struct Host {
    inner: Arc<Inner>,
}

struct Inner {
    /// In chain order: priority, then name.
    hooks: Vec<Arc<HookEntry>>,
    shutdown: watch::Sender<bool>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    started: Vec<StartedHook>,
    failures: Vec<StartFailure>,
    event_seq: AtomicU64,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Supervisors stop their hooks gracefully if the runtime lives on;
        // if it is going away too, each process's guard SIGKILLs its group.
        self.shutdown.send_replace(true);
    }
}

impl Host {
    /// Starts every enabled hook and waits for each handshake (each bounded
    /// by `hello_timeout_ms`). Hooks that fail are reported in
    /// [`Host::start_failures`] and logged; the others run.
    pub async fn start(config: Config) -> Host {
        let (shutdown, _) = watch::channel(false);
        let mut hooks = Vec::new();
        let mut tasks = Vec::new();
        let mut firsts = Vec::new();
        if config.enabled {
            for (name, process) in &config.processes {
                if !process.enabled {
                    continue;
                }
                let mut process = process.clone();
                process.dir = Some(config.hook_dir(&process));
                let (entry, events) = HookEntry::new(name, process, config.defaults.clone());
                let (tx, rx) = oneshot::channel();
                tasks.push(tokio::spawn(supervise(
                    entry.clone(),
                    shutdown.subscribe(),
                    tx,
                )));
                tasks.push(tokio::spawn(forward_events(
                    entry.clone(),
                    events,
                    shutdown.subscribe(),
                )));
                firsts.push((name.clone(), rx));
                hooks.push(entry);
            }
        }
        hooks.sort_by(|a, b| (a.config.priority, &*a.name).cmp(&(b.config.priority, &*b.name)));
        let mut started = Vec::new();
        let mut failures = Vec::new();
        for (hook, rx) in firsts {
            match rx.await {
                Ok(Ok(info)) => started.push(StartedHook { hook, info }),
                Ok(Err(error)) => failures.push(StartFailure { hook, error }),
                Err(_) => failures.push(StartFailure {
                    hook,
                    error: "its supervisor ended before the handshake".into(),
                }),
            }
        }
        Host {
            inner: Arc::new(Inner {
                hooks,
                shutdown,
                tasks: Mutex::new(tasks),
                started,
                failures,
                event_seq: AtomicU64::new(0),
            }),
        }
    }

    /// Hooks that did not come up at start.
    pub fn start_failures(&self) -> &[StartFailure] {
        &self.inner.failures
    }

    /// Hooks that came up at start.
    pub fn started(&self) -> &[StartedHook] {
        &self.inner.started
    }

    /// The configured hooks in chain order.
    pub fn hooks(&self) -> &[Arc<HookEntry>] {
        &self.inner.hooks
    }

    /// Runs one stage over raw JSON params and returns the merged verdict;
    /// what `hookhost call` prints is `outcome.to_wire(stage)`.
    pub async fn run_stage(&self, stage: Stage, params: Value) -> Result<Outcome, ParamsError> {
        Ok(self.run_stage_traced(stage, params).await?.0)
    }

    /// Like [`Host::run_stage`], also returning each hook's part: what it
    /// answered, how long it took, and what the chain made of it.
    pub async fn run_stage_traced(
        &self,
        stage: Stage,
        params: Value,
    ) -> Result<(Outcome, Vec<HookTrace>), ParamsError> {
        let mut chain = Chain::new(stage, params)?;
        let mut trace = Vec::new();
        for hook in &self.inner.hooks {
            if !hook.intercepts(stage) {
                continue;
            }
            let begun = std::time::Instant::now();
            let reply = hook.call(stage, chain.params()).await;
            let elapsed = begun.elapsed();
            let policy = hook.policy(stage);
            let flow = chain.step(
                &hook.name,
                policy,
                reply.as_ref().map_err(ToString::to_string),
            );
            if let Some(Step {
                outcome: StepOutcome::Failed { error, policy },
                ..
            }) = chain.steps().last()
            {
                tracing::warn!(
                    hook = %hook.name,
                    %stage,
                    on_error = %policy,
                    "hook failed: {error}"
                );
            }
            if let Some(step) = chain.steps().last() {
                trace.push(HookTrace {
                    hook: hook.name.to_string(),
                    answer: reply.map_err(|e| e.to_string()),
                    elapsed,
                    outcome: step.outcome.clone(),
                });
            }
            if flow == Flow::Stop {
                break;
            }
        }
        Ok((chain.finish(), trace))
    }

    async fn run_typed<P: Serialize + DeserializeOwned>(
        &self,
        stage: Stage,
        params: P,
    ) -> (Outcome, P) {
        let value = match serde_json::to_value(&params) {
            Ok(v) => v,
            Err(e) => {
                tracing::error!(%stage, "params did not serialize ({e}); hooks skipped");
                return (continue_unchanged(), params);
            }
        };
        match self.run_stage(stage, value).await {
            Ok(outcome) => (outcome, params),
            Err(e) => {
                tracing::error!(%stage, "{e}; hooks skipped");
                (continue_unchanged(), params)
            }
        }
    }

    /// Runs before_tool: the chain may rewrite the call, answer it, deny
    /// it, or abort.
    pub async fn before_tool(&self, call: ToolCall) -> ToolOutcome<ToolCall> {
        let (outcome, original) = self.run_typed(Stage::BeforeTool, call).await;
        match outcome {
            Outcome::Continue { params, .. } => ToolOutcome::Continue(decode_or(params, original)),
            Outcome::Respond { result, .. } => ToolOutcome::Respond(result),
            Outcome::DenyTool { reason, .. } | Outcome::Refused { reason, .. } => {
                ToolOutcome::Deny { reason }
            }
            Outcome::Abort { hard, reason, .. } => ToolOutcome::Abort { hard, reason },
        }
    }

    /// Runs before_llm.
    pub async fn before_llm(&self, request: BeforeLlmParams) -> StageOutcome<BeforeLlmParams> {
        self.stage_outcome(Stage::BeforeLlm, request).await
    }

    /// Runs after_llm.
    pub async fn after_llm(&self, response: AfterLlmParams) -> StageOutcome<AfterLlmParams> {
        self.stage_outcome(Stage::AfterLlm, response).await
    }

    /// Runs after_tool.
    pub async fn after_tool(&self, result: AfterToolParams) -> StageOutcome<AfterToolParams> {
        self.stage_outcome(Stage::AfterTool, result).await
    }

    async fn stage_outcome<P: Serialize + DeserializeOwned>(
        &self,
        stage: Stage,
        params: P,
    ) -> StageOutcome<P> {
        let (outcome, original) = self.run_typed(stage, params).await;
        match outcome {
            Outcome::Continue { params, .. } => StageOutcome::Continue(decode_or(params, original)),
            Outcome::Abort { hard, reason, .. } => StageOutcome::Abort { hard, reason },
            // Not reachable for these stages (the chain rejects respond and
            // deny_tool there); treated as an abort rather than ignored.
            Outcome::Respond { by, .. } => StageOutcome::Abort {
                hard: false,
                reason: format!("hook `{by}` answered respond at {stage}"),
            },
            Outcome::DenyTool { reason, .. } | Outcome::Refused { reason, .. } => {
                StageOutcome::Abort {
                    hard: false,
                    reason,
                }
            }
        }
    }

    /// Runs approve_tool: every approver must approve.
    pub async fn approve_tool(&self, call: ToolCall) -> Approval {
        let (outcome, _) = self.run_typed(Stage::ApproveTool, call).await;
        match outcome {
            Outcome::Continue { .. } => Approval::Approved,
            Outcome::Refused { reason, .. }
            | Outcome::DenyTool { reason, .. }
            | Outcome::Abort { reason, .. } => Approval::Refused { reason },
            Outcome::Respond { by, .. } => Approval::Refused {
                reason: format!("hook `{by}` answered respond at approve_tool"),
            },
        }
    }

    /// Hands a runtime event to every hook that observes its kind. Never
    /// blocks: each hook has a bounded queue, and a full queue drops the
    /// event for that hook, counted and logged.
    pub fn emit(&self, event: RuntimeEvent) {
        let targets: Vec<&Arc<HookEntry>> = self
            .inner
            .hooks
            .iter()
            .filter(|h| h.observes(&event.kind))
            .collect();
        if targets.is_empty() {
            return;
        }
        let line = notification_line(method::RUNTIME_EVENT, &event);
        for hook in targets {
            hook.offer_event(&line);
        }
    }

    /// A fresh event id, unique within this host, for callers that build
    /// events without ids of their own.
    pub fn next_event_id(&self) -> String {
        let n = self.inner.event_seq.fetch_add(1, Ordering::Relaxed) + 1;
        format!("evt-{}-{n}", std::process::id())
    }

    /// Stops every hook: close stdin, wait, SIGTERM the group, wait,
    /// SIGKILL. Returns when all are gone. Calls made afterwards resolve by
    /// each hook's policy.
    pub async fn shutdown(&self) {
        self.inner.shutdown.send_replace(true);
        let tasks =
            std::mem::take(&mut *self.inner.tasks.lock().unwrap_or_else(|p| p.into_inner()));
        for t in tasks {
            let _ = t.await;
        }
    }

    /// Process ids of the hooks that are running now.
    pub fn pids(&self) -> Vec<(String, Option<u32>)> {
        self.inner
            .hooks
            .iter()
            .map(|h| {
                let pid = match h.state() {
                    HookState::Ready(_) => h.pid(),
                    _ => None,
                };
                (h.name.to_string(), pid)
            })
            .collect()
    }
}

fn continue_unchanged() -> Outcome {
    Outcome::Continue {
        params: Value::Null,
        modified: false,
    }
}

/// The chain validated every patched params object against the stage's
/// type, so decoding cannot fail; if it ever did, the caller's own params
/// are returned rather than anything half-made.
fn decode_or<P: DeserializeOwned>(value: Value, original: P) -> P {
    if value.is_null() {
        return original;
    }
    match serde_json::from_value(value) {
        Ok(p) => p,
        Err(e) => {
            tracing::error!("merged params did not decode ({e}); using the caller's params");
            original
        }
    }
}

fn notification_line<T: Serialize>(method: &str, params: &T) -> Arc<[u8]> {
    let mut line = Vec::with_capacity(256);
    line.extend_from_slice(br#"{"jsonrpc":"2.0","method":"#);
    let _ = serde_json::to_writer(&mut line, method);
    line.extend_from_slice(br#","params":"#);
    let _ = serde_json::to_writer(&mut line, params);
    line.push(b'}');
    line.into()
}

//! Command hooks: the one-shot scripts of Claude Code, Codex, Gemini CLI,
//! Cursor, Copilot and docker-agent, run unchanged as members of
//! hookhost's chain.
//!
//! Such a script is spawned once per event, reads the event as JSON on
//! stdin, and answers with its exit code and output. Everything that
//! differs between agents (event names, stdin keys, tool names, env vars,
//! matchers, how an answer reads) comes from the hook's
//! [`Dialect`](crate::dialect::Dialect); this module only finds the event
//! the hook listed, spawns it (`run`), and turns the answer into the
//! stage's protocol result (`answer`), so the chain sees the same shapes a
//! process hook would answer.
//!
//! Each run gets the isolation of a process hook: a clean environment
//! (`PATH`, the user's identity and locale variables, `inherit_env`, `env`,
//! the agent's own variables), its own process group, and a deadline after
//! which the whole group is killed. An imported hook runs where its agent
//! would run it: in the agent's working directory, the event's `cwd`.

mod answer;
#[cfg(feature = "remote")]
mod http;
mod run;
#[cfg(feature = "conformance")]
mod trial;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use hookhost_protocol::Stage;
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::config::command::expand_project;
use crate::config::{CommandConfig, CommandConfigError, FailurePolicy, Runner};
use crate::dialect::contract;
use crate::dialect::matcher::{Matcher, Rule};
use crate::dialect::origin::Origin;
use crate::dialect::reply::{self, ReadError, Reply};
use crate::dialect::spec::{Caps, EnvValue, Event, Spec, Target};
use crate::dialect::stdin::{Call, meta};
use crate::dialect::tools;
use crate::error::CallError;
use crate::members::neutral;
#[cfg(feature = "remote")]
use crate::members::prompt::Evaluator;
use crate::observe::usage::Answer;
use crate::policy::deadline::Deadline;
use answer::{Answering, LOG_TAIL, tail};
pub(crate) use run::Finished;
use run::{Place, Program};

#[cfg(any(test, feature = "conformance"))]
pub(crate) use run::OUTPUT_CAP;

/// A command hook ready to run: its config resolved once (dialect, events,
/// program, folder, matcher), so each call only spawns.
#[derive(Debug)]
pub(crate) struct CommandHook {
    name: Arc<str>,
    spec: &'static Spec,
    /// The variables its agent sets (the dialect's, or a family member's).
    agent_env: &'static [(&'static str, EnvValue)],
    /// What answers its calls.
    run: Run,
    /// The configured working directory.
    dir: PathBuf,
    /// Whether its agent runs it in the agent's working directory (the
    /// event's `cwd`) rather than in `dir`.
    in_session_cwd: bool,
    /// A run's own time limit.
    timeout: Duration,
    events: Vec<&'static Event>,
    matcher: Matcher,
    rule: Option<Rule>,
    on_error: Option<FailurePolicy>,
    loop_limit: Option<u32>,
    /// docker-agent's `strict_output`.
    strict: bool,
    /// Gemini CLI's `sequential` definition.
    sequential: bool,
    tool_names: Arc<BTreeMap<String, String>>,
    /// Why it must not run: a project's command the user has not trusted
    /// (`config::trust`). Every selected call fails with this, as a hook
    /// that could not start, and nothing is spawned, posted or asked.
    untrusted: Option<String>,
}

/// What answers a command hook's calls, from its config's
/// [`Runner`]: a program spawned per call, the event POSTed, or a model
/// asked.
#[derive(Debug)]
enum Run {
    /// `command` or `args`.
    Spawn(Program),
    /// `url`: an HTTP hook or a webhook (boxed: its client is large).
    #[cfg(feature = "remote")]
    Post(Box<http::Target>),
    /// A prompt hook (boxed: the evaluator's cache and caps are large).
    #[cfg(feature = "remote")]
    Ask(Box<Evaluator>),
}

/// A hook's answer at an event nobody waits on, kept for the agent's own
/// answer: what [`Origin::note`] takes.
#[derive(Debug)]
pub(crate) struct Heard {
    pub(crate) spec: &'static Spec,
    pub(crate) event: &'static Event,
    pub(crate) reply: Reply,
}

/// How the script ended, for error reports.
fn describe_status(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        (None, None) => "an unknown exit status".to_string(),
    }
}

impl CommandHook {
    /// Resolves a config, checking it first. `dir` is the working
    /// directory (the config's [`command_dir`](crate::Config::command_dir)).
    /// A relative program path in `args` that contains a slash is resolved
    /// against it; a bare name is looked up on `PATH`.
    pub(crate) fn new(
        name: &str,
        config: &CommandConfig,
        dir: &Path,
        tool_names: Arc<BTreeMap<String, String>>,
    ) -> Result<CommandHook, CommandConfigError> {
        config.validate()?;
        let spec = config.dialect.spec();
        let events: Vec<&'static Event> =
            config.events.iter().filter_map(|e| spec.event(e)).collect();
        let tool_event = events.iter().any(|e| matches!(e.target, Target::Stage(_)));
        let matcher = Matcher::new(config.matcher.as_deref(), spec.matching, tool_event)?;
        let rule = config.rule.as_deref().map(Rule::new).transpose()?;
        Ok(CommandHook {
            name: name.into(),
            spec,
            agent_env: config.agent_env(),
            run: run(name, config, dir)?,
            dir: dir.to_path_buf(),
            in_session_cwd: config.in_session_cwd(),
            timeout: config.timeout(),
            events,
            matcher,
            rule,
            on_error: config.on_error,
            loop_limit: config.loop_limit,
            strict: config.strict_output,
            sequential: config.sequential,
            tool_names,
            untrusted: config.source.as_ref().and_then(|s| s.untrusted(name)),
        })
    }

    /// A prompt hook's model figures; `None` for a command.
    #[cfg(feature = "remote")]
    pub(crate) fn model_counters(&self) -> Option<&crate::members::prompt::ModelCounters> {
        match &self.run {
            Run::Ask(m) => Some(&m.counters),
            _ => None,
        }
    }

    /// Shares a prompt hook's session spend and cache through `store`.
    pub(crate) fn share(&self, store: &std::sync::Arc<dyn crate::policy::shared::StateStore>) {
        #[cfg(feature = "remote")]
        if let Run::Ask(m) = &self.run {
            m.share(store);
        }
        #[cfg(not(feature = "remote"))]
        let _ = store;
    }

    /// Whether a model answers for it rather than a program.
    pub(crate) fn is_prompt(&self) -> bool {
        #[cfg(feature = "remote")]
        return matches!(self.run, Run::Ask(_));
        #[cfg(not(feature = "remote"))]
        false
    }

    /// Whether a start failure is decided by `on_error` like any other
    /// failure, as docker-agent decides it for its own hooks (a handler
    /// that cannot run follows the hook's policy, warn by default), rather
    /// than by hookhost's rule that a gate that never ran refuses.
    pub(crate) fn start_failure_follows_on_error(&self) -> bool {
        self.spec.dialect == crate::dialect::Dialect::DockerAgent
    }

    /// Why it must not run, when it is a project's untrusted command.
    pub(crate) fn untrusted(&self) -> Option<&str> {
        self.untrusted.as_deref()
    }

    /// Whether this hook runs for lifecycle event `event` (by hookhost's
    /// snake_case name, request or not), so the host can skip building an
    /// input nobody reads.
    pub(crate) fn handles(&self, event: &str) -> bool {
        self.events
            .iter()
            .any(|e| matches!(e.target, Target::Lifecycle(n) if n == event))
    }

    /// The native event this call is for, when the hook listed one that
    /// applies (the stage, the lifecycle event, the tool for events of one
    /// tool, failure or success at after_tool).
    fn event_for(&self, stage: Stage, params: &Value) -> Option<&'static Event> {
        let lifecycle = params.get("event").and_then(Value::as_str);
        if stage == Stage::Lifecycle && lifecycle.is_none() {
            return None;
        }
        let tool = params
            .get("tool")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let failed = params
            .get("result")
            .and_then(|r| r.get("is_error"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        self.events.iter().copied().find(|e| {
            let same = match e.target {
                Target::Lifecycle(n) => stage == Stage::Lifecycle && Some(n) == lifecycle,
                Target::Stage(s) => s == stage,
            };
            same && (e.tools.is_empty() || tools::in_set(tool, e.tools))
                && e.failed.is_none_or(|f| f == failed)
        })
    }

    /// Whether the matcher and the permission rule select this call.
    fn selects(&self, call: &Call<'_>) -> bool {
        match call.event.target {
            Target::Stage(Stage::BeforeLlm | Stage::AfterLlm) => true,
            Target::Stage(_) => {
                let tool = call.native_tool();
                self.spec
                    .matcher_names(&tool)
                    .any(|name| self.matcher.matches(Some(name)))
                    && self
                        .rule
                        .as_ref()
                        .is_none_or(|r| r.matches(&tool, &Value::Object(call.native_args())))
            }
            Target::Lifecycle(name) => self.matcher.matches(matched_field(call.params, name)),
        }
    }

    /// Where and with what one call runs: its folder (the agent's working
    /// directory for a hook its agent runs there), the project folder,
    /// and the agent's variables. A value only the agent knows comes from
    /// the event being answered (`origin`, what the relay was given), or,
    /// with none, from hookhost's own environment.
    fn place(&self, call: &Call<'_>, origin: Option<&Origin>) -> Place {
        let dir = self.folder(meta(call.params, "cwd"));
        let project = dir.clone();
        let env = self
            .agent_env
            .iter()
            .filter_map(|(k, v)| {
                let value = match v {
                    EnvValue::ProjectDir => project.display().to_string(),
                    EnvValue::SessionId => call.session(),
                    EnvValue::Cwd => call.cwd(),
                    EnvValue::FromAgent => match origin {
                        Some(o) => o.agent_var(k)?.to_string(),
                        None => std::env::var(k).ok()?,
                    },
                };
                Some((*k, value))
            })
            .collect();
        Place { dir, project, env }
    }
}

/// The payload field a lifecycle matcher is matched on (Claude Code's
/// per-event targets); `None` where the event has none.
fn matched_field<'v>(params: &'v Value, event: &str) -> Option<&'v str> {
    let key = match event {
        "session_start" => "source",
        "session_end" => "reason",
        "pre_compact" | "after_compaction" => "trigger",
        "notification" => "notification_type",
        "subagent_start" | "subagent_stop" => "agent_type",
        "file_changed" => "file_path",
        "config_change" => "source",
        "stop_failure" => "error_type",
        _ => return None,
    };
    params.get("payload")?.get(key)?.as_str()
}

impl CommandHook {
    /// Runs the command for one chain call and answers in the stage's
    /// protocol shape, as a process hook would, so the chain treats both
    /// kinds alike. A call the hook did not list, or that its matcher or
    /// rule does not select, gets the neutral answer without a spawn.
    ///
    /// The run ends at `deadline` or after the configured `timeout`,
    /// whichever is first. A spawn failure, a timeout, an exit the dialect
    /// counts as an error, or an answer that cannot be read is a
    /// [`CallError`], which the chain resolves with
    /// [`CommandConfig::policy`]: never a silent allow.
    pub(crate) async fn call(
        &self,
        stage: Stage,
        params: &Value,
        deadline: Instant,
    ) -> Result<Value, CallError> {
        self.call_from(stage, params, deadline, None).await.reply
    }

    /// Whether it is written for the agent event `origin` answers: that
    /// agent's dialect, listed under that event.
    pub(crate) fn is_own_hook(&self, origin: &Origin, stage: Stage, params: &Value) -> bool {
        self.event_for(stage, params)
            .is_some_and(|row| origin.owns(self.spec, row))
    }

    /// One call of native `event` with the chain's `params`, as this hook
    /// reads it.
    fn call_for<'a>(&'a self, event: &'static Event, params: &'a Value) -> Call<'a> {
        Call {
            spec: self.spec,
            event,
            params,
            dir: &self.dir,
            names: &self.tool_names,
        }
    }

    /// Whether it is an own hook of `origin`'s event, selected for this
    /// call and written in a sequential definition: one is enough for its
    /// agent to run all of the event's hooks in sequence (Gemini CLI's
    /// `hookPlanner.ts`).
    pub(crate) fn makes_sequential(&self, origin: &Origin, stage: Stage, params: &Value) -> bool {
        if !self.sequential {
            return false;
        }
        let Some(event) = self.event_for(stage, params) else {
            return false;
        };
        let call = self.call_for(event, params);
        origin.owns(self.spec, event) && self.selects(&call)
    }

    /// [`CommandHook::call`] for a run answering an agent's own event
    /// (`origin`): a hook of that agent's dialect and event reads the
    /// event as the agent sent it, and every hook notes what it says
    /// beyond the verdict (its message for the user; for the agent's own
    /// hooks, the keys the protocol has no word for). A prompt hook's
    /// answer carries what its model spent.
    pub(crate) async fn call_from(
        &self,
        stage: Stage,
        params: &Value,
        deadline: Instant,
        origin: Option<&Origin>,
    ) -> Answer {
        let Some(event) = self.event_for(stage, params) else {
            return Answer::from(Ok(neutral()));
        };
        let call = self.call_for(event, params);
        if !self.selects(&call) {
            return Answer::from(Ok(neutral()));
        }
        let input = origin
            .and_then(|o| o.input_for(&call))
            .unwrap_or_else(|| call.input());
        let answer = self.respond(&call, &input, deadline, origin).await;
        if let Err(e) = &answer.reply {
            self.log_failure(event, e);
        }
        answer
    }

    /// The stage's protocol result for one selected call: the model's
    /// decision for a prompt hook, the run's answer for a command.
    async fn respond(
        &self,
        call: &Call<'_>,
        input: &Value,
        deadline: Instant,
        origin: Option<&Origin>,
    ) -> Answer {
        if let Some(why) = &self.untrusted {
            return Answer::from(Err(CallError::Untrusted(why.clone())));
        }
        #[cfg(feature = "remote")]
        if let Run::Ask(model) = &self.run {
            let limit = self.limit(deadline).at();
            let Answer { reply, usage } = model
                .decide(call.event, input, &call.session(), limit)
                .await;
            let reply = reply.and_then(|reply| self.answer(call, reply, input, origin));
            return Answer { reply, usage };
        }
        let done = self.execute(input, call, deadline, origin).await;
        Answer::from(done.and_then(|done| self.read(call, &done, input, origin)))
    }

    /// Reads a finished run into the stage's protocol result.
    fn read(
        &self,
        call: &Call<'_>,
        done: &Finished,
        input: &Value,
        origin: Option<&Origin>,
    ) -> Result<Value, CallError> {
        let (stdout, stderr) = (done.stdout.text(), done.stderr.text());
        let ending = done.ending(&stdout, &stderr);
        let caps = call.event.caps;
        let protocol =
            |why: String| CallError::Protocol(format!("command hook `{}`: {why}", self.name));
        if let (Some(c), true, 0) = (caps, self.strict, ending.code) {
            contract::check_strict(&c, call.event.native, &stdout).map_err(protocol)?;
        }
        // A hook the user made fail closed fails on any other exit, whatever
        // its agent would read into the run.
        if self.on_error == Some(FailurePolicy::Block) && !matches!(ending.code, 0 | 2) {
            return Err(self.exit_error(done));
        }
        let plain = self.spec.plain_is_context(call.event);
        let reply =
            reply::read(self.spec, call.event.native, ending, plain).map_err(|e| match e {
                ReadError::Exit => self.exit_error(done),
                ReadError::Invalid(why) => protocol(why),
            })?;
        self.answer(call, reply, input, origin)
    }

    /// A reply, limited to what its event can use, as the stage's
    /// protocol result.
    fn answer(
        &self,
        call: &Call<'_>,
        mut reply: Reply,
        input: &Value,
        origin: Option<&Origin>,
    ) -> Result<Value, CallError> {
        let protocol =
            |why: String| CallError::Protocol(format!("command hook `{}`: {why}", self.name));
        if let Some(c) = call.event.caps {
            contract::limit(&c, &mut reply, &self.name, call.event.native);
        }
        let loop_count = input.get("loop_count").and_then(Value::as_u64);
        let answering = Answering {
            name: &self.name,
            spec: self.spec,
            event: call.event,
            tool: call.tool(),
            seen: call.native_args(),
            original: call.params.get("arguments").and_then(Value::as_object),
            loop_count,
            loop_limit: self.loop_limit,
        };
        let noted = origin.map(|o| (o, reply.clone()));
        let result = answering.answer(reply).map_err(protocol)?;
        if let Some((o, noted)) = noted {
            o.note(call.spec, call.event, &noted);
            o.hand_on(call, input, &noted, &result);
        }
        Ok(result)
    }

    /// Runs the command for a lifecycle event hookhost's protocol does not
    /// wait on (session_end, an agent's own `config_change`, ...). Its
    /// output is read and logged; at an event the agent lets a hook block
    /// ([`Event::can_block`]) its block, or its failure under a policy that
    /// fails closed, is returned as the reason, so the agent gets the block
    /// it would get from the hook itself. Elsewhere nothing is used.
    /// For an agent's own event (`origin`) a hook of that agent reads it
    /// as sent, and the answer read is given back beside the block, for
    /// the agent's answer ([`Origin::note`]).
    pub(crate) async fn notify_from(
        &self,
        event: &str,
        payload: &Value,
        origin: Option<&Origin>,
    ) -> (Option<String>, Option<Heard>) {
        let mut payload = payload.clone();
        let meta = payload.as_object_mut().and_then(|p| p.remove("meta"));
        let params = json!({"event": event, "meta": meta, "payload": payload});
        let Some(row) = self.event_for(Stage::Lifecycle, &params) else {
            return (None, None);
        };
        if self.is_prompt() && !row.can_block() {
            // Nobody reads the answer: asking the model would only spend.
            tracing::debug!(hook = %self.name, event, "prompt hook not asked: the event takes no answer");
            return (None, None);
        }
        let call = self.call_for(row, &params);
        if !self.selects(&call) {
            return (None, None);
        }
        let done = match &self.untrusted {
            Some(why) => Err(CallError::Untrusted(why.clone())),
            None => {
                let deadline = Instant::now() + self.timeout;
                let input = origin
                    .and_then(|o| o.input_as_sent(&call))
                    .unwrap_or_else(|| call.input());
                self.execute(&input, &call, deadline, origin).await
            }
        };
        let failure = match done {
            Ok(done) if matches!(done.status.code(), Some(0) | Some(2)) => {
                match self.strict_failure(row, &done) {
                    None => {
                        let heard = origin.and_then(|_| self.heard(row, &done));
                        return (self.notified_answer(row, &done), heard);
                    }
                    Some(e) => e,
                }
            }
            Ok(done) => self.exit_error(&done),
            Err(e) => e,
        };
        self.log_failure(row, &failure);
        let closed = self.on_error == Some(FailurePolicy::Block);
        let block = (row.can_block() && closed).then(|| {
            format!(
                "command hook `{}` failed (on_error = block): {failure}",
                self.name
            )
        });
        (block, None)
    }

    /// What a run said at an event nobody waits on, read for the agent's
    /// answer (its message, its own keys); `None` when it cannot be read.
    fn heard(&self, row: &'static Event, done: &Finished) -> Option<Heard> {
        let (stdout, stderr) = (done.stdout.text(), done.stderr.text());
        let plain = self.spec.plain_is_context(row);
        let reply =
            reply::read(self.spec, row.native, done.ending(&stdout, &stderr), plain).ok()?;
        Some(Heard {
            spec: self.spec,
            event: row,
            reply: reply.clone(),
        })
    }

    /// Under `strict_output`, an exit-0 answer to an event hookhost does
    /// not wait on that breaks docker-agent's rules for it: a failure of
    /// the hook (docker-agent's runHook marks it failed), not an answer
    /// logged as ignored.
    fn strict_failure(&self, row: &Event, done: &Finished) -> Option<CallError> {
        let caps = row
            .caps
            .filter(|_| self.strict && done.status.code() == Some(0))?;
        let stdout = done.stdout.text();
        let why = contract::check_strict(&caps, row.native, &stdout).err()?;
        Some(CallError::Protocol(format!(
            "command hook `{}`: {why}",
            self.name
        )))
    }

    /// The answer to an event hookhost does not wait on: its block where
    /// the agent lets a hook block the event, else logged as unused.
    fn notified_answer(&self, row: &Event, done: &Finished) -> Option<String> {
        if !row.can_block() {
            self.unused_answer(row, done);
            return None;
        }
        let (stdout, stderr) = (done.stdout.text(), done.stderr.text());
        let ending = done.ending(&stdout, &stderr);
        let reply = match reply::read(self.spec, row.native, ending, false) {
            Ok(reply) => reply,
            Err(e) => {
                let why = match e {
                    ReadError::Exit => self.exit_error(done),
                    ReadError::Invalid(why) => CallError::Protocol(why),
                };
                self.log_failure(row, &why);
                return None;
            }
        };
        let reason = reply.halt.clone().or_else(|| reply.refusal())?;
        Some(reason.unwrap_or_else(|| format!("blocked by command hook `{}`", self.name)))
    }

    /// The answer to an event nobody waits on: logged, and a warning for
    /// each thing it asked for (a block, context, ...), since its author
    /// thinks it mattered.
    fn unused_answer(&self, row: &Event, done: &Finished) {
        let (stdout, stderr) = (done.stdout.text(), done.stderr.text());
        tracing::debug!(
            hook = %self.name,
            event = row.native,
            status = %describe_status(done.status),
            stdout = %tail(&stdout, LOG_TAIL),
            stderr = %tail(&stderr, LOG_TAIL),
            "command hook ran for an event that takes no answer; its output is not used"
        );
        let ending = done.ending(&stdout, &stderr);
        let plain = row.caps.is_some_and(|c| c.context);
        if let Ok(mut reply) = reply::read(self.spec, row.native, ending, plain) {
            contract::limit(&Caps::OBSERVE, &mut reply, &self.name, row.native);
        }
    }

    /// One run: a spawn, or a POST for an HTTP hook, within the hook's
    /// own timeout. A prompt hook is asked ([`CommandHook::respond`]), never
    /// run: its events all take an answer.
    async fn execute(
        &self,
        input: &Value,
        call: &Call<'_>,
        deadline: Instant,
        origin: Option<&Origin>,
    ) -> Result<Finished, CallError> {
        let limit = self.limit(deadline);
        match &self.run {
            Run::Spawn(program) => program.run(input, &self.place(call, origin), limit).await,
            #[cfg(feature = "remote")]
            Run::Post(target) => target.post(input, limit.at()).await,
            #[cfg(feature = "remote")]
            Run::Ask(_) => Err(CallError::Unavailable(
                "a prompt hook is asked for a decision, never run".into(),
            )),
        }
    }

    /// One run's limit from now: its own timeout, or `deadline` when that
    /// is sooner.
    fn limit(&self, deadline: Instant) -> Deadline {
        let now = Instant::now();
        Deadline::between(now, deadline.min(now + self.timeout))
    }

    /// The folder one call runs in: the agent's working directory `cwd`
    /// (the event's) when its agent runs it there and it is a folder,
    /// else the configured one.
    fn folder(&self, cwd: Option<&str>) -> PathBuf {
        cwd.filter(|_| self.in_session_cwd)
            .map(Path::new)
            .filter(|c| c.is_absolute() && c.is_dir())
            .map_or_else(|| self.dir.clone(), Path::to_path_buf)
    }

    fn exit_error(&self, done: &Finished) -> CallError {
        let stderr = done.stderr.text();
        let stderr = tail(&stderr, LOG_TAIL);
        let mut text = describe_status(done.status);
        if !stderr.is_empty() {
            text.push_str("; stderr: ");
            text.push_str(stderr);
        }
        CallError::Crashed(text)
    }

    /// Logs a failure: at debug level under `ignore`, except an untrusted
    /// hook and a spawn failure, which are always warnings (the gate never
    /// ran, which is never a silent allow), unless the hook is
    /// docker-agent's, whose `ignore` is silent for every failure; at warn
    /// level otherwise.
    fn log_failure(&self, row: &Event, error: &CallError) {
        let event = row.native;
        let loud = match error {
            CallError::Untrusted(_) => true,
            CallError::Unavailable(_) => !self.start_failure_follows_on_error(),
            _ => false,
        };
        let quiet =
            self.on_error.is_some_and(FailurePolicy::is_quiet) && !row.fails_closed() && !loud;
        if quiet {
            tracing::debug!(hook = %self.name, event, "command hook failed: {error}");
        } else {
            tracing::warn!(hook = %self.name, event, "command hook failed: {error}");
        }
    }
}

/// What answers a hook, from its config's runner: `sh -c` for a shell
/// string, the argv (its project-folder variables expanded) for `args`, a
/// checked POST target for `url`, the evaluator of a prompt hook's model.
fn run(name: &str, config: &CommandConfig, dir: &Path) -> Result<Run, CommandConfigError> {
    let spawn = |program: PathBuf, args: Vec<String>, project_vars| {
        Run::Spawn(Program {
            program,
            args,
            project_vars,
            env: config.env.clone(),
            inherit_env: config.inherit_env.clone(),
        })
    };
    Ok(match config.runner()? {
        // A shell string's shell expands the variables from the
        // environment, quoted or not as its author wrote them; filling
        // them in as text would let a folder's name (`x; rm -rf ~`) run as
        // a command.
        Runner::Shell(command) => spawn(
            PathBuf::from("/bin/sh"),
            vec!["-c".to_string(), command.to_string()],
            Vec::new(),
        ),
        Runner::Argv(argv) => {
            let vars = config.project_vars();
            let (program, args) = argv_program(argv, &vars, dir);
            spawn(program, args, vars)
        }
        #[cfg(feature = "remote")]
        Runner::Post(url) => Run::Post(Box::new(http_target(config, url)?)),
        #[cfg(feature = "remote")]
        Runner::Ask(model) => Run::Ask(Box::new(Evaluator::new(name, model))),
        #[cfg(not(feature = "remote"))]
        Runner::Post(_) => return Err(CommandConfigError::HttpNeedsRemote),
        #[cfg(not(feature = "remote"))]
        Runner::Ask(_) => {
            let _ = name;
            return Err(CommandConfigError::ModelNeedsRemote);
        }
    })
}

/// The POST target of an HTTP hook, checked once.
#[cfg(feature = "remote")]
fn http_target(config: &CommandConfig, url: &str) -> Result<http::Target, CommandConfigError> {
    let target = match &config.webhook {
        Some(guard) => http::Target::webhook(url, guard),
        None => http::Target::new(url, &config.headers, &config.allowed_env_vars),
    };
    target.map_err(|e| CommandConfigError::Http(e.to_string()))
}

/// The program and arguments of an argv: a relative path with a slash is
/// resolved against the working directory, after its project variables
/// (`vars`) are filled in with it; the arguments keep theirs, filled in
/// for each run.
fn argv_program(argv: &[String], vars: &[&str], dir: &Path) -> (PathBuf, Vec<String>) {
    let first = argv
        .first()
        .map(|a| expand_project(a, vars, dir))
        .unwrap_or_default();
    let p = Path::new(&first);
    let program = if p.is_relative() && first.contains('/') {
        dir.join(p)
    } else {
        p.to_path_buf()
    };
    (program, argv.get(1..).unwrap_or_default().to_vec())
}

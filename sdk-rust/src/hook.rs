//! The [`Hook`] trait: one async method per stage, each with a default.

use std::future::Future;

use hookhost_protocol::Stage;
use hookhost_protocol::event::RuntimeEvent;
use hookhost_protocol::params::{
    AfterLlmParams, AfterToolParams, BeforeLlmParams, LifecycleParams, ToolCall,
};

use crate::verdict::{Approval, LifecycleVerdict, ToolVerdict, Verdict};

/// A hook: what it declares in the handshake and how it answers each stage.
///
/// Every handler has a default that lets the agent go on (`continue`, or
/// approve at approve_tool), so a hook overrides only the stages it cares
/// about. Rust cannot tell which defaults were overridden, so the stages and
/// events a hook wants are stated explicitly in [`Hook::intercepts`] and
/// [`Hook::observes`]; they are sent in the `hook.hello` answer, and the host
/// then calls the hook for those stages only (narrowed further by its
/// config). `intercepts` has no default on purpose: a hook that forgot to
/// declare the stage it implements would silently never be called.
///
/// Handlers run concurrently, one task per request, so they take `&self` and
/// any state needs interior mutability (a `Mutex`, an atomic). Their futures
/// must be `Send` because the server may run them on any worker thread. A
/// panic in a handler becomes an error reply for that one request (the
/// host's `on_error` policy then decides); the hook keeps serving.
///
/// Implement the methods as `async fn`:
///
/// ```
/// use hookhost_sdk::{Hook, Stage, ToolVerdict, params::ToolCall};
///
/// struct NoCurl;
///
/// impl Hook for NoCurl {
///     fn intercepts(&self) -> Vec<Stage> {
///         vec![Stage::BeforeTool]
///     }
///     async fn before_tool(&self, call: ToolCall) -> ToolVerdict {
///         if call.tool == "curl" { ToolVerdict::deny("no network") } else { ToolVerdict::Continue }
///     }
/// }
/// ```
pub trait Hook: Send + Sync + 'static {
    /// The stages this hook answers, declared in `hook.hello`. Return every
    /// stage whose handler you implemented; the host never calls a stage
    /// that is not listed here (nor one its config leaves out).
    fn intercepts(&self) -> Vec<Stage>;

    /// The runtime event patterns this hook wants (`*`, `prefix.*` or an
    /// exact kind), declared in `hook.hello`. The default is none; a hook
    /// that implements [`Hook::on_event`] must list its patterns here.
    fn observes(&self) -> Vec<String> {
        Vec::new()
    }

    /// The hook's own name for itself, for the host's logs. The default
    /// sends none, and the host uses the config's name.
    fn name(&self) -> Option<String> {
        None
    }

    /// `hook.before_llm`: the request about to go to the model. May rewrite
    /// it (patch under `request`) or abort. Default: continue.
    fn before_llm(&self, request: BeforeLlmParams) -> impl Future<Output = Verdict> + Send {
        drop(request);
        async { Verdict::Continue }
    }

    /// `hook.after_llm`: the model's answer. May rewrite it (new text at
    /// `response.content` of the patch) or abort. Default: continue.
    fn after_llm(&self, response: AfterLlmParams) -> impl Future<Output = Verdict> + Send {
        drop(response);
        async { Verdict::Continue }
    }

    /// `hook.before_tool`: a tool call about to run. May rewrite it, answer
    /// in the tool's place, deny it or abort. Default: continue.
    fn before_tool(&self, call: ToolCall) -> impl Future<Output = ToolVerdict> + Send {
        drop(call);
        async { ToolVerdict::Continue }
    }

    /// `hook.after_tool`: what a tool produced. May rewrite it (new output at
    /// `result.for_llm` of the patch) or abort. Default: continue.
    fn after_tool(&self, result: AfterToolParams) -> impl Future<Output = Verdict> + Send {
        drop(result);
        async { Verdict::Continue }
    }

    /// `hook.approve_tool`: may this tool run at all? Default: approve.
    fn approve_tool(&self, call: ToolCall) -> impl Future<Output = Approval> + Send {
        drop(call);
        async { Approval::Approve }
    }

    /// `hook.lifecycle`: a lifecycle event the agent waits on (a session
    /// starting, a prompt arriving, a compaction, ...); `params.event` says
    /// which. Called only when [`Hook::intercepts`] lists
    /// [`Stage::Lifecycle`]. The answer is checked against the event before
    /// it is sent; one the event forbids (say a `summary` at session_start)
    /// goes out as an error reply naming the field, and the host's
    /// `on_error` policy decides. Lifecycle events that are not requests
    /// (`session_end`, `turn_end`, ...) arrive at [`Hook::on_event`] as
    /// runtime events of kind `lifecycle.<event>`. Default: continue.
    fn lifecycle(&self, params: LifecycleParams) -> impl Future<Output = LifecycleVerdict> + Send {
        drop(params);
        async { LifecycleVerdict::continue_() }
    }

    /// `hook.runtime_event`: something happened in the agent. Events are
    /// handled one at a time, in the order they arrive, on a task of their
    /// own, so a slow observer never delays a stage call. Default: ignore.
    fn on_event(&self, event: RuntimeEvent) -> impl Future<Output = ()> + Send {
        drop(event);
        async {}
    }
}

//! What every transport shares: the method table, the ordered event task,
//! and the small rules both apply to notifications and failures.
//!
//! The line transport (module `server`) and the network one (module `net`)
//! differ only in how messages arrive and answers leave. Which handler a
//! method reaches, how its params are read, how a lifecycle answer is
//! checked, how runtime events are queued and how a panic is worded are
//! decided here, once.

use std::borrow::Cow;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::FutureExt;
use hookhost_protocol::envelope::{CancelParams, Id, error_code};
use hookhost_protocol::event::RuntimeEvent;
use hookhost_protocol::hello::{HelloParams, HelloResult, PROTOCOL_VERSION};
use hookhost_protocol::params::{
    AfterLlmParams, AfterToolParams, BeforeLlmParams, LifecycleParams, ToolCall,
};
use hookhost_protocol::stage::method;
use jsonrpsee_core::server::RpcModule;
use jsonrpsee_types::ErrorObjectOwned;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::hook::Hook;

/// How long, after end of input or a stop, requests still running and
/// queued events get to finish before they are abandoned. The host waits
/// `shutdown_grace_ms` (2 s by default) before it escalates, so this keeps a
/// hook well inside that.
pub(crate) const DRAIN_GRACE: Duration = Duration::from_millis(600);
/// How long the last answers get to be written after that.
pub(crate) const FLUSH_GRACE: Duration = Duration::from_millis(200);
/// Runtime events buffered for [`Hook::on_event`] before new ones are
/// dropped (with a warning on stderr), so that reading never blocks on a
/// slow observer.
const EVENT_QUEUE: usize = 4096;
/// The message of the -32800 answer to a cancelled request.
pub(crate) const CANCELLED: &str = "request cancelled";

/// Registers the six stages and the handshake with jsonrpsee.
pub(crate) fn build_module<H: Hook>(
    hook: Arc<H>,
) -> Result<RpcModule<H>, jsonrpsee_core::RegisterMethodError> {
    let mut m = RpcModule::from_arc(hook);
    m.register_async_method(method::HELLO, |params, hook, _| async move {
        let _host: HelloParams = params.parse()?;
        Ok::<_, ErrorObjectOwned>(HelloResult {
            name: hook.name(),
            version: Some(PROTOCOL_VERSION),
            intercept: Some(hook.intercepts()),
            observe: Some(hook.observes()),
            ..HelloResult::default()
        })
    })?;
    m.register_async_method(method::BEFORE_LLM, |params, hook, _| async move {
        let p: BeforeLlmParams = params.parse()?;
        Ok::<_, ErrorObjectOwned>(hook.before_llm(p).await.into_before_llm())
    })?;
    m.register_async_method(method::AFTER_LLM, |params, hook, _| async move {
        let p: AfterLlmParams = params.parse()?;
        Ok::<_, ErrorObjectOwned>(hook.after_llm(p).await.into_after_llm())
    })?;
    m.register_async_method(method::BEFORE_TOOL, |params, hook, _| async move {
        let p: ToolCall = params.parse()?;
        Ok::<_, ErrorObjectOwned>(hook.before_tool(p).await.into_result())
    })?;
    m.register_async_method(method::AFTER_TOOL, |params, hook, _| async move {
        let p: AfterToolParams = params.parse()?;
        Ok::<_, ErrorObjectOwned>(hook.after_tool(p).await.into_after_tool())
    })?;
    m.register_async_method(method::APPROVE_TOOL, |params, hook, _| async move {
        let p: ToolCall = params.parse()?;
        Ok::<_, ErrorObjectOwned>(hook.approve_tool(p).await.into_result())
    })?;
    m.register_async_method(method::LIFECYCLE, |params, hook, _| async move {
        let p: LifecycleParams = params.parse()?;
        let event = p.event;
        if !event.is_request() {
            let why = format!(
                "invalid params: event `{event}` is not a request event; it arrives as the runtime event `{}`",
                event.event_kind()
            );
            return Err(ErrorObjectOwned::owned(
                error_code::INVALID_PARAMS as i32,
                why,
                None::<()>,
            ));
        }
        // Checked here so that the host gets an error naming the field, not
        // an answer it would have to reject.
        hook.lifecycle(p).await.into_result(event).map_err(|e| {
            ErrorObjectOwned::owned(
                error_code::INTERNAL_ERROR as i32,
                format!("the hook's answer is not allowed: {e}"),
                None::<()>,
            )
        })
    })?;
    Ok(m)
}

/// The way into the hook's one event task: runtime events are parsed and
/// queued here, in the order the transport hands them over, and
/// [`Hook::on_event`] sees them one at a time in that order.
pub(crate) struct EventQueue {
    tx: mpsc::Sender<RuntimeEvent>,
    dropped: AtomicU64,
}

impl EventQueue {
    /// Starts the event task. It ends once every [`EventQueue`] handle is
    /// dropped and the queue is drained, or, when `stop` completes, after
    /// draining what was queued by then.
    pub(crate) fn start<H: Hook>(
        hook: Arc<H>,
        stop: impl Future<Output = ()> + Send + 'static,
    ) -> (EventQueue, JoinHandle<()>) {
        let (tx, rx) = mpsc::channel(EVENT_QUEUE);
        let task = tokio::spawn(event_loop(hook, rx, stop));
        let queue = EventQueue {
            tx,
            dropped: AtomicU64::new(0),
        };
        (queue, task)
    }

    /// Queues the event in `params` (raw JSON text). A bad event is logged
    /// and skipped; when the hook falls behind, events are dropped and
    /// counted rather than stalling the transport.
    pub(crate) fn push_raw(&self, params: &str) {
        let event = match serde_json::from_str::<RuntimeEvent>(params) {
            Ok(ev) => ev,
            Err(e) => {
                eprintln!("hookhost-sdk: ignoring a bad runtime event: {e}");
                return;
            }
        };
        match self.tx.try_send(event) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(_)) => {
                let n = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
                if n == 1 || n.is_multiple_of(1000) {
                    eprintln!(
                        "hookhost-sdk: on_event is falling behind; {n} runtime event(s) dropped so far"
                    );
                }
            }
            // Stopping: the event task no longer takes new events.
            Err(mpsc::error::TrySendError::Closed(_)) => {}
        }
    }
}

/// Hands runtime events to the hook one at a time, in arrival order.
async fn event_loop<H: Hook>(
    hook: Arc<H>,
    mut rx: mpsc::Receiver<RuntimeEvent>,
    stop: impl Future<Output = ()>,
) {
    let mut stop = std::pin::pin!(stop.fuse());
    loop {
        let event = tokio::select! {
            biased;
            ev = rx.recv() => ev,
            () = &mut stop => {
                // Take nothing new, but finish what is queued.
                rx.close();
                rx.recv().await
            }
        };
        let Some(event) = event else { return };
        if let Err(panic) = AssertUnwindSafe(hook.on_event(event)).catch_unwind().await {
            eprintln!("hookhost-sdk: on_event panicked: {}", panic_text(&*panic));
        }
    }
}

/// The id a `$/cancel_request` names, or `None` (logged) when its params
/// are not `{"id": ...}`.
pub(crate) fn cancel_target(params: &str) -> Option<Id> {
    match serde_json::from_str::<CancelParams>(params) {
        Ok(p) => Some(p.id),
        Err(e) => {
            eprintln!("hookhost-sdk: ignoring a bad $/cancel_request: {e}");
            None
        }
    }
}

/// A request id as jsonrpsee can carry it, and whether the reply needs the
/// real id put back (negative integers, which jsonrpsee's `Id` cannot hold).
pub(crate) fn jsonrpsee_id(id: &Id) -> (jsonrpsee_types::Id<'static>, bool) {
    match id {
        Id::Number(n) => match u64::try_from(*n) {
            Ok(u) => (jsonrpsee_types::Id::Number(u), false),
            Err(_) => (jsonrpsee_types::Id::Null, true),
        },
        Id::String(s) => (jsonrpsee_types::Id::Str(Cow::Owned(s.clone())), false),
    }
}

/// The -32603 message for a handler that panicked.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    format!(
        "internal error: the handler panicked: {}",
        panic_text(payload)
    )
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "(no message)"
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding these locks cannot leave the map inconsistent
    // (each operation is one insert or remove), so poisoning is ignored.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

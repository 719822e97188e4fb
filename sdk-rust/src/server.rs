//! The serving loop: read lines, dispatch, answer.
//!
//! One reader (this loop) parses each line just far enough to route it: the
//! envelope is read with borrowed fields, and `params` stays raw text until
//! the handler deserializes it straight into its typed params. The reader
//! polls each request's handler once: one that answers without waiting
//! (most do) has its answer added to the reader's batch, and the batch is
//! written in one write once every line read so far is handled. One that
//! waits becomes a task of its own, so a slow approval never holds up a
//! before_tool, and writes its answer to stdout itself when nothing else
//! is being written ([`Outbox`]); only what the pipe cannot take at once
//! waits for the writer task. So a handler's work up to its first `.await`
//! runs on the reader, as it would on a current-thread runtime anyway.
//!
//! Method dispatch goes through the jsonrpsee [`RpcModule`] that module
//! `dispatch` builds for every transport: it maps method names to the typed
//! handlers, deserializes params (a bad params object becomes -32602 naming
//! the field) and serializes the response. jsonrpsee's own server speaks
//! HTTP and WebSocket (module `net`), not newline-delimited stdio, so what
//! the line transport needs is built around the module here: the line
//! reader and writer, notifications (`hook.runtime_event`,
//! `$/cancel_request`), per-request cancellation by id, panics turned into
//! error replies, and negative integer ids, which jsonrpsee's `Id` (an
//! unsigned number) cannot hold and which are echoed here by putting the
//! request's own id back into the reply.

use std::borrow::Cow;
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use hookhost_protocol::envelope::{ErrorObject, Id, error_code};
use hookhost_protocol::outbox::{Outbox, SendError};
use hookhost_protocol::stage::method;
use jsonrpsee_core::server::{ConnectionId, Extensions, MethodCallback, MethodResponse, RpcModule};
use jsonrpsee_types::Params;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};
use tokio::sync::oneshot;

use crate::dispatch::{
    CANCELLED, DRAIN_GRACE, EventQueue, FLUSH_GRACE, build_module, cancel_target, jsonrpsee_id,
    lock, panic_message,
};
use crate::hook::Hook;

/// Serves `hook` over any byte streams: requests are read from `input`, one
/// JSON-RPC message per line, and answers written to `output`.
///
/// Returns when `input` reaches end of file, after giving requests still
/// running a short grace period (then they are cancelled) and flushing the
/// answers. Use [`crate::serve_stdio`] for a hook process; this function is
/// for tests and for transports other than stdio.
///
/// # Errors
///
/// A read error on `input`. Write errors end the writer only: the host
/// treats a hook whose answers stop arriving by its deadlines and restarts.
pub async fn serve<H, R, W>(hook: H, input: R, output: W) -> io::Result<()>
where
    H: Hook,
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_until(hook, input, output, std::future::pending()).await
}

/// [`serve`] that also stops when `stop` completes (SIGTERM, say).
pub(crate) async fn serve_until<H, R, W>(
    hook: H,
    input: R,
    output: W,
    stop: impl Future<Output = ()>,
) -> io::Result<()>
where
    H: Hook,
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let hook = Arc::new(hook);
    let module = build_module(hook.clone()).map_err(io::Error::other)?;
    let out = Outbox::new(output);
    tokio::spawn(write_loop(out.clone()));
    // Ends when the server drops its queue below, after draining it.
    let (event_queue, events) = EventQueue::start(hook, std::future::pending());
    let server = Server {
        module,
        inflight: Arc::new(Mutex::new(HashMap::new())),
        generation: AtomicU64::new(0),
        out: out.clone(),
        events: event_queue,
        batch: Mutex::new(Vec::new()),
    };

    let mut reader = BufReader::with_capacity(64 * 1024, input);
    let mut line = Vec::with_capacity(8 * 1024);
    let mut stop = std::pin::pin!(stop);
    let read_result = loop {
        line.clear();
        let n = tokio::select! {
            biased;
            () = &mut stop => break Ok(()),
            r = reader.read_until(b'\n', &mut line) => r,
        };
        match n {
            Ok(0) => break Ok(()),
            Ok(_) => server.handle_line(&line),
            Err(e) => break Err(e),
        }
        // Everything read so far is handled: its answers go in one write.
        if reader.buffer().is_empty() {
            server.flush();
        }
    };

    wind_down(server, events, out).await;
    read_result
}

/// End of input: the last answers of the reader are written, running work
/// gets a short grace and is then abandoned, the event queue drains, and
/// stdout is flushed and closed.
async fn wind_down<H: Hook>(server: Server<H>, events: impl Future, out: Arc<Outbox>) {
    server.flush();
    let deadline = tokio::time::Instant::now() + DRAIN_GRACE;
    while !lock(&server.inflight).is_empty() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // Dropping the cancel senders stops every request task still running.
    lock(&server.inflight).clear();
    let Server { events: ev, .. } = server;
    drop(ev);
    let _ = tokio::time::timeout_at(deadline, events).await;
    out.close(tokio::time::Instant::now() + FLUSH_GRACE).await;
}

/// A request in flight: its generation (to tell it from a later request
/// reusing the id) and the sender whose firing, or dropping, cancels it.
type Inflight = Arc<Mutex<HashMap<Id, (u64, oneshot::Sender<()>)>>>;

struct Server<H: Hook> {
    module: RpcModule<H>,
    inflight: Inflight,
    generation: AtomicU64,
    out: Arc<Outbox>,
    events: EventQueue,
    /// Answers the reader made itself, `\n`-separated, not yet written.
    batch: Mutex<Vec<u8>>,
}

/// The envelope, read just far enough to route a line. Unknown members are
/// ignored, as the protocol requires.
#[derive(Deserialize)]
struct Incoming<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<Cow<'a, str>>,
    /// Raw, so that `null` (present, invalid) differs from absent
    /// (a notification) and a string id is echoed as it came.
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "present")]
    params: Option<&'a RawValue>,
}

/// Reads a member that is present, `null` included, as `Some`.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

impl<H: Hook> Server<H> {
    fn handle_line(&self, line: &[u8]) {
        let text = line.trim_ascii();
        if text.is_empty() {
            return;
        }
        match serde_json::from_slice::<Incoming<'_>>(text) {
            Ok(msg) => self.dispatch(msg),
            Err(_) => self.reject_unreadable(text),
        }
    }

    fn dispatch(&self, msg: Incoming<'_>) {
        // An id we can read, for error replies about this message.
        let id = msg.id.and_then(|raw| Id::deserialize(raw).ok());
        if msg.jsonrpc.as_deref() != Some("2.0") {
            self.reply_error(
                id.as_ref(),
                error_code::INVALID_REQUEST,
                "`jsonrpc` must be \"2.0\"",
            );
            return;
        }
        let Some(method) = msg.method else {
            // A response or junk; the host sends no responses. Answer only
            // what claims to be a request.
            if msg.id.is_some() {
                self.reply_error(id.as_ref(), error_code::INVALID_REQUEST, "missing `method`");
            }
            return;
        };
        if msg.params.is_some_and(|p| !p.get().starts_with('{')) {
            if msg.id.is_some() {
                self.reply_error(
                    id.as_ref(),
                    error_code::INVALID_REQUEST,
                    "`params` must be an object",
                );
            }
            return;
        }
        if msg.id.is_none() {
            self.notification(&method, msg.params);
            return;
        }
        let Some(id) = id else {
            let why = "`id` must be an integer or a string";
            self.reply_error(None, error_code::INVALID_REQUEST, why);
            return;
        };
        self.request(id, &method, msg.params);
    }

    fn notification(&self, name: &str, params: Option<&RawValue>) {
        let raw = params.map_or("{}", RawValue::get);
        match name {
            method::CANCEL_REQUEST => {
                if let Some(id) = cancel_target(raw) {
                    self.cancel(&id);
                }
            }
            method::RUNTIME_EVENT => self.events.push_raw(raw),
            // Unknown notifications must be ignored.
            _ => {}
        }
    }

    fn request(&self, id: Id, name: &str, params: Option<&RawValue>) {
        let callback = match self.module.method(name) {
            Some(MethodCallback::Async(cb)) => cb.clone(),
            _ => {
                let msg = format!("method not found: {name}");
                self.reply_error(Some(&id), error_code::METHOD_NOT_FOUND, &msg);
                return;
            }
        };
        let (rpc_id, splice) = jsonrpsee_id(&id);
        let params = Params::new(params.map(RawValue::get)).into_owned();
        let call = callback(
            rpc_id,
            params,
            ConnectionId(0),
            usize::MAX,
            Extensions::new(),
        );

        // Most handlers answer without waiting on anything: polled once
        // here, such an answer joins the reader's batch, with no task, no
        // registration and one write for the whole batch.
        let mut call = AssertUnwindSafe(call).catch_unwind();
        if let Some(outcome) = (&mut call).now_or_never() {
            self.batch(&answer_line(outcome, &id, splice));
            return;
        }
        self.spawn_call(id, call, splice);
    }

    /// Runs a call that waits as a task of its own, cancellable by id,
    /// which writes its answer itself.
    fn spawn_call(
        &self,
        id: Id,
        call: impl Future<Output = Result<MethodResponse, Box<dyn std::any::Any + Send>>>
        + Send
        + 'static,
        splice: bool,
    ) {
        let (cancel_tx, cancel_rx) = oneshot::channel::<()>();
        let generation = self.generation.fetch_add(1, Ordering::Relaxed);
        // Registered before the task exists, so that a fast answer always
        // finds its entry, and a cancel arriving next always finds the task.
        lock(&self.inflight).insert(id.clone(), (generation, cancel_tx));
        let inflight = self.inflight.clone();
        let out = self.out.clone();
        tokio::spawn(async move {
            let outcome = tokio::select! {
                biased;
                _ = cancel_rx => return,
                r = call => r,
            };
            {
                let mut map = lock(&inflight);
                match map.get(&id) {
                    Some((g, _)) if *g == generation => {
                        map.remove(&id);
                    }
                    // Cancelled (and answered -32800) or superseded meanwhile.
                    _ => return,
                }
            }
            let line = answer_line(outcome, &id, splice);
            let _ = out.send_when_room(line.as_bytes()).await;
        });
    }

    fn cancel(&self, id: &Id) {
        let entry = lock(&self.inflight).remove(id);
        // An unknown or already answered id is ignored, as the spec says.
        if let Some((_, stop)) = entry {
            let _ = stop.send(());
            self.reply_error(Some(id), error_code::REQUEST_CANCELLED, CANCELLED);
        }
    }

    /// A line that is not a JSON object we could route: -32700 for non-JSON
    /// (or bad UTF-8), -32600 with the id when it can be read.
    fn reject_unreadable(&self, text: &[u8]) {
        match serde_json::from_slice::<serde_json::Value>(text) {
            Err(_) => self.reply_error(None, error_code::PARSE_ERROR, "parse error: not JSON"),
            Ok(value) => {
                let id = value.get("id").and_then(|v| Id::deserialize(v).ok());
                // A notification with a bad member is never answered.
                if value.get("id").is_some() || !value.is_object() {
                    let why = "invalid request: not a JSON-RPC 2.0 request object";
                    self.reply_error(id.as_ref(), error_code::INVALID_REQUEST, why);
                }
            }
        }
    }

    /// Answers an error from the reader, in its batch.
    fn reply_error(&self, id: Option<&Id>, code: i64, message: &str) {
        self.batch(&error_line(id, code, message));
    }

    /// Adds an answer the reader has to its batch, written by
    /// [`Server::flush`] once the lines read so far are handled.
    fn batch(&self, line: &str) {
        let mut batch = lock(&self.batch);
        if !batch.is_empty() {
            batch.push(b'\n');
        }
        batch.extend_from_slice(line.as_bytes());
    }

    /// Writes the reader's batch of answers, one write for all of them: at
    /// once when there is room, else by a task of its own that waits for
    /// room, so the reader never waits and no answer is lost.
    fn flush(&self) {
        let lines = std::mem::take(&mut *lock(&self.batch));
        if lines.is_empty() || self.out.send_now(&lines) != Err(SendError::Full) {
            return;
        }
        let out = self.out.clone();
        tokio::spawn(async move { out.send_when_room(&lines).await });
    }
}

/// The reply line jsonrpsee built, with the request's real id put back when
/// jsonrpsee could not carry it.
fn response_line(resp: MethodResponse, id: &Id, splice: bool) -> Box<str> {
    let json: Box<str> = resp.into_json().into();
    if !splice {
        return json;
    }
    #[derive(Deserialize)]
    struct Reply<'a> {
        #[serde(borrow, default, deserialize_with = "present")]
        result: Option<&'a RawValue>,
        #[serde(borrow, default, deserialize_with = "present")]
        error: Option<&'a RawValue>,
    }
    #[derive(Serialize)]
    struct Spliced<'a> {
        jsonrpc: &'static str,
        id: &'a Id,
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<&'a RawValue>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<&'a RawValue>,
    }
    let spliced = serde_json::from_str::<Reply<'_>>(&json).and_then(|r| {
        serde_json::to_string(&Spliced {
            jsonrpc: "2.0",
            id,
            result: r.result,
            error: r.error,
        })
    });
    match spliced {
        Ok(s) => s.into_boxed_str(),
        Err(e) => error_line(
            Some(id),
            error_code::INTERNAL_ERROR,
            &format!("internal error: {e}"),
        ),
    }
}

/// One error response, without its newline.
fn error_line(id: Option<&Id>, code: i64, message: &str) -> Box<str> {
    #[derive(Serialize)]
    struct ErrorReply<'a> {
        jsonrpc: &'static str,
        id: Option<&'a Id>,
        error: ErrorObject,
    }
    let reply = ErrorReply {
        jsonrpc: "2.0",
        id,
        error: ErrorObject::new(code, message),
    };
    // Serializing strings and integers cannot fail; the fallback keeps the
    // wire valid regardless.
    serde_json::to_string(&reply)
        .unwrap_or_else(|_| {
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}"#
                .to_string()
        })
        .into_boxed_str()
}

/// A finished call's answer line: its response, or -32603 for a panic.
fn answer_line(
    outcome: Result<MethodResponse, Box<dyn std::any::Any + Send>>,
    id: &Id,
    splice: bool,
) -> Box<str> {
    match outcome {
        Ok(resp) => response_line(resp, id, splice),
        Err(panic) => error_line(
            Some(id),
            error_code::INTERNAL_ERROR,
            &panic_message(&*panic),
        ),
    }
}

/// Writes what the answering tasks could not write at once; says so on
/// stderr when stdout breaks (the host then restarts the hook).
async fn write_loop(out: Arc<Outbox>) {
    if let Err(e) = out.drive().await {
        eprintln!("hookhost-sdk: cannot write answers, stopping the writer: {e}");
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;
    use std::time::Instant;

    use hookhost_protocol::Stage;
    use hookhost_protocol::event::RuntimeEvent;
    use hookhost_protocol::params::{
        AfterLlmParams, AfterToolParams, BeforeLlmParams, LifecycleParams, ToolCall,
    };
    use serde_json::{Value, json};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

    use super::*;
    use crate::verdict::{Approval, LifecycleVerdict, Patch, ToolVerdict, Verdict};

    #[derive(Default)]
    struct TestHook {
        events: Arc<Mutex<Vec<String>>>,
        dropped: Arc<AtomicBool>,
    }

    /// Sets its flag when dropped: tells whether a cancelled handler's
    /// future was really dropped.
    struct DropFlag(Arc<AtomicBool>);
    impl Drop for DropFlag {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    impl Hook for TestHook {
        fn intercepts(&self) -> Vec<Stage> {
            Stage::ALL.to_vec()
        }
        fn observes(&self) -> Vec<String> {
            vec!["agent.*".into()]
        }
        fn name(&self) -> Option<String> {
            Some("test".into())
        }
        async fn before_llm(&self, request: BeforeLlmParams) -> Verdict {
            Verdict::abort(format!("llm {}", request.model))
        }
        async fn after_llm(&self, _response: AfterLlmParams) -> Verdict {
            Verdict::modify(Patch::new().set(&["response", "content"], "x"))
        }
        async fn before_tool(&self, call: ToolCall) -> ToolVerdict {
            let delay = call
                .arguments
                .get("delay_ms")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            if delay > 0 {
                let _flag = DropFlag(self.dropped.clone());
                tokio::time::sleep(Duration::from_millis(delay)).await;
            }
            if call.tool == "panic" {
                panic!("boom");
            }
            ToolVerdict::deny(call.tool)
        }
        async fn after_tool(&self, result: AfterToolParams) -> Verdict {
            Verdict::hard_abort(result.result.for_llm)
        }
        async fn approve_tool(&self, call: ToolCall) -> Approval {
            Approval::refuse(call.tool)
        }
        async fn lifecycle(&self, params: LifecycleParams) -> LifecycleVerdict {
            match params.payload.get("answer").and_then(Value::as_str) {
                Some("block") => LifecycleVerdict::block("no prompts today"),
                Some("summary") => LifecycleVerdict::summary("short"),
                _ => LifecycleVerdict::context(params.event.to_string()),
            }
        }
        async fn on_event(&self, event: RuntimeEvent) {
            lock(&self.events).push(event.kind);
        }
    }

    struct Client {
        tx: DuplexStream,
        rx: Lines<BufReader<DuplexStream>>,
        server: tokio::task::JoinHandle<io::Result<()>>,
    }

    impl Client {
        fn start(hook: TestHook) -> Client {
            let (tx, server_in) = tokio::io::duplex(1 << 16);
            let (server_out, rx) = tokio::io::duplex(1 << 16);
            let server = tokio::spawn(serve(hook, server_in, server_out));
            Client {
                tx,
                rx: BufReader::new(rx).lines(),
                server,
            }
        }
        async fn send(&mut self, line: &str) {
            self.tx.write_all(line.as_bytes()).await.unwrap();
            self.tx.write_all(b"\n").await.unwrap();
        }
        async fn call(&mut self, id: Value, method: &str, params: Value) {
            let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
            self.send(&msg.to_string()).await;
        }
        async fn recv(&mut self) -> Value {
            let line = tokio::time::timeout(Duration::from_secs(5), self.rx.next_line())
                .await
                .expect("an answer within 5 s")
                .unwrap()
                .expect("the server is still writing");
            serde_json::from_str(&line).unwrap()
        }
    }

    #[tokio::test]
    async fn every_stage_dispatches_to_its_handler() {
        let mut c = Client::start(TestHook::default());
        c.call(json!(1), "hook.hello", json!({"name": "t", "version": 1}))
            .await;
        assert_eq!(
            c.recv().await,
            json!({"jsonrpc": "2.0", "id": 1, "result": {"name": "test", "version": 1,
                "intercept": ["before_llm", "after_llm", "before_tool", "after_tool", "approve_tool", "lifecycle"],
                "observe": ["agent.*"]}})
        );
        let cases = [
            (
                "hook.before_llm",
                json!({"model": "m"}),
                json!({"action": "abort_turn", "reason": "llm m"}),
            ),
            (
                "hook.after_llm",
                json!({"model": "m", "response": {"content": "a"}}),
                json!({"action": "modify", "response": {"response": {"content": "x"}}}),
            ),
            (
                "hook.before_tool",
                json!({"tool": "t"}),
                json!({"action": "deny_tool", "reason": "t"}),
            ),
            (
                "hook.after_tool",
                json!({"tool": "t", "result": {"for_llm": "out"}}),
                json!({"action": "hard_abort", "reason": "out"}),
            ),
            (
                "hook.approve_tool",
                json!({"tool": "curl"}),
                json!({"approved": false, "reason": "curl"}),
            ),
            (
                "hook.lifecycle",
                json!({"event": "session_start", "payload": {"source": "startup"}}),
                json!({"action": "continue", "additional_context": "session_start"}),
            ),
        ];
        for (i, (method, params, expect)) in cases.into_iter().enumerate() {
            let id = json!(i + 10);
            c.call(id.clone(), method, params).await;
            assert_eq!(
                c.recv().await,
                json!({"jsonrpc": "2.0", "id": id, "result": expect}),
                "{method}"
            );
        }
    }

    #[tokio::test]
    async fn lifecycle_answers_are_checked_against_the_event() {
        let mut c = Client::start(TestHook::default());
        let call =
            |event: &str, answer: &str| json!({"event": event, "payload": {"answer": answer}});
        c.call(
            json!(1),
            "hook.lifecycle",
            call("user_prompt_submit", "block"),
        )
        .await;
        assert_eq!(
            c.recv().await["result"],
            json!({"action": "block", "reason": "no prompts today"})
        );
        c.call(
            json!(2),
            "hook.lifecycle",
            call("before_compaction", "summary"),
        )
        .await;
        assert_eq!(
            c.recv().await["result"],
            json!({"action": "continue", "summary": "short"})
        );
        // Blocking turn_start, or context at stop, is an error reply.
        c.call(json!(3), "hook.lifecycle", call("turn_start", "block"))
            .await;
        let r = c.recv().await;
        assert_eq!(r["error"]["code"], -32603, "{r}");
        let msg = r["error"]["message"].as_str().unwrap_or_default();
        assert!(
            msg.contains("`block` is not allowed at lifecycle event `turn_start`"),
            "{msg}"
        );
        c.call(json!(4), "hook.lifecycle", call("stop", "context"))
            .await;
        let r = c.recv().await;
        let msg = r["error"]["message"].as_str().unwrap_or_default();
        assert!(msg.contains("field `additional_context`"), "{r}");
        // A runtime-only event is not a request.
        c.call(json!(5), "hook.lifecycle", json!({"event": "session_end"}))
            .await;
        let r = c.recv().await;
        assert_eq!(r["error"]["code"], -32602, "{r}");
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .contains("lifecycle.session_end")
        );
        c.call(json!(6), "hook.lifecycle", json!({"payload": {}}))
            .await;
        assert_eq!(c.recv().await["error"]["code"], -32602);
    }

    #[tokio::test]
    async fn lifecycle_runtime_events_reach_on_event() {
        let hook = TestHook::default();
        let events = hook.events.clone();
        let mut c = Client::start(hook);
        let ev = json!({"jsonrpc": "2.0", "method": "hook.runtime_event",
            "params": {"id": "e1", "kind": "lifecycle.session_end", "time": "2026-01-01T00:00:00Z", "payload": {}}});
        c.send(&ev.to_string()).await;
        c.call(json!(1), "hook.approve_tool", json!({"tool": "x"}))
            .await;
        assert_eq!(c.recv().await["id"], 1);
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(*lock(&events), vec!["lifecycle.session_end"]);
    }

    #[tokio::test]
    async fn bad_params_are_invalid_params() {
        let mut c = Client::start(TestHook::default());
        c.call(json!(3), "hook.before_tool", json!({"arguments": {}}))
            .await;
        let r = c.recv().await;
        assert_eq!(r["id"], 3);
        assert_eq!(r["error"]["code"], -32602);
    }

    #[tokio::test]
    async fn concurrent_requests_are_answered_as_they_finish() {
        let mut c = Client::start(TestHook::default());
        c.call(
            json!(1),
            "hook.before_tool",
            json!({"tool": "slow", "arguments": {"delay_ms": 300}}),
        )
        .await;
        c.call(json!(2), "hook.before_tool", json!({"tool": "fast"}))
            .await;
        assert_eq!(
            c.recv().await["id"],
            2,
            "the fast answer must not wait for the slow one"
        );
        assert_eq!(c.recv().await["id"], 1);
    }

    #[tokio::test]
    async fn a_cancelled_request_is_stopped_and_answered_32800() {
        let hook = TestHook::default();
        let dropped = hook.dropped.clone();
        let mut c = Client::start(hook);
        c.call(
            json!(7),
            "hook.before_tool",
            json!({"tool": "slow", "arguments": {"delay_ms": 3000}}),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        c.send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"id":7}}"#)
            .await;
        let r = c.recv().await;
        assert_eq!(
            r,
            json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32800, "message": "request cancelled"}})
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(
            dropped.load(Ordering::SeqCst),
            "the handler's future must be dropped"
        );
        // A cancel for an unknown id is ignored; the next answer is for id 8.
        c.send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"id":99}}"#)
            .await;
        c.call(json!(8), "hook.approve_tool", json!({"tool": "x"}))
            .await;
        assert_eq!(c.recv().await["id"], 8);
    }

    #[tokio::test]
    async fn a_panic_is_an_internal_error_and_serving_goes_on() {
        let mut c = Client::start(TestHook::default());
        c.call(json!(1), "hook.before_tool", json!({"tool": "panic"}))
            .await;
        let r = c.recv().await;
        assert_eq!(r["id"], 1);
        assert_eq!(r["error"]["code"], -32603);
        assert!(
            r["error"]["message"].as_str().unwrap().contains("boom"),
            "{r}"
        );
        c.call(json!(2), "hook.before_tool", json!({"tool": "after"}))
            .await;
        assert_eq!(c.recv().await["result"]["reason"], "after");
    }

    #[tokio::test]
    async fn unknown_methods_get_32601() {
        let mut c = Client::start(TestHook::default());
        c.call(json!(12), "hook.frobnicate", json!({})).await;
        assert_eq!(
            c.recv().await,
            json!({"jsonrpc": "2.0", "id": 12, "error": {"code": -32601, "message": "method not found: hook.frobnicate"}})
        );
    }

    #[tokio::test]
    async fn malformed_lines_are_answered_and_survived() {
        let mut c = Client::start(TestHook::default());
        c.send("this is not json").await;
        assert_eq!(
            c.recv().await,
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "parse error: not JSON"}})
        );
        c.send(r#"{"jsonrpc":"1.0","id":4,"method":"hook.before_tool","params":{"tool":"t"}}"#)
            .await;
        let r = c.recv().await;
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (json!(4), json!(-32600))
        );
        c.send(r#"{"jsonrpc":"2.0","id":null,"method":"hook.before_tool","params":{"tool":"t"}}"#)
            .await;
        let r = c.recv().await;
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (Value::Null, json!(-32600))
        );
        c.send(r#"{"jsonrpc":"2.0","id":5,"method":"hook.before_tool","params":[1]}"#)
            .await;
        assert_eq!(c.recv().await["error"]["code"], -32600);
        c.send("").await;
        c.send("   \r").await;
        c.call(json!(6), "hook.before_tool", json!({"tool": "ok"}))
            .await;
        assert_eq!(c.recv().await["result"]["reason"], "ok");
    }

    #[tokio::test]
    async fn string_and_negative_ids_are_echoed_exactly() {
        let mut c = Client::start(TestHook::default());
        for id in [
            json!("req-7"),
            json!("7"),
            json!("é \"q\""),
            json!(-3),
            json!(0),
            json!(i64::MAX),
        ] {
            c.call(id.clone(), "hook.before_tool", json!({"tool": "t"}))
                .await;
            let r = c.recv().await;
            assert_eq!(r["id"], id);
            assert_eq!(r["result"]["action"], "deny_tool");
        }
        c.call(json!(-4), "hook.nope", json!({})).await;
        assert_eq!(c.recv().await["id"], -4);
    }

    #[tokio::test]
    async fn notifications_are_never_answered_and_events_arrive_in_order() {
        let hook = TestHook::default();
        let events = hook.events.clone();
        let mut c = Client::start(hook);
        for kind in ["agent.a", "agent.b", "agent.c"] {
            let ev = json!({"jsonrpc": "2.0", "method": "hook.runtime_event",
                "params": {"id": kind, "kind": kind, "time": "2026-01-01T00:00:00Z", "payload": null}});
            c.send(&ev.to_string()).await;
        }
        c.send(r#"{"jsonrpc":"2.0","method":"hook.unknown","params":{}}"#)
            .await;
        c.send(r#"{"jsonrpc":"2.0","method":"hook.before_tool","params":{"tool":"t"}}"#)
            .await;
        c.call(json!(1), "hook.approve_tool", json!({"tool": "x"}))
            .await;
        assert_eq!(
            c.recv().await["id"],
            1,
            "no answer to any notification came first"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(*lock(&events), vec!["agent.a", "agent.b", "agent.c"]);
    }

    #[tokio::test]
    async fn end_of_input_ends_serving_promptly() {
        let mut c = Client::start(TestHook::default());
        c.call(
            json!(1),
            "hook.before_tool",
            json!({"tool": "slow", "arguments": {"delay_ms": 10_000}}),
        )
        .await;
        c.call(json!(2), "hook.before_tool", json!({"tool": "fast"}))
            .await;
        assert_eq!(c.recv().await["id"], 2);
        let started = Instant::now();
        let Client { tx, server, .. } = c;
        drop(tx);
        let done = tokio::time::timeout(Duration::from_secs(1), server).await;
        assert!(matches!(done, Ok(Ok(Ok(())))), "{done:?}");
        assert!(started.elapsed() < Duration::from_secs(1));
    }

    #[tokio::test]
    async fn work_in_flight_at_end_of_input_is_still_answered() {
        let mut c = Client::start(TestHook::default());
        c.call(
            json!(1),
            "hook.before_tool",
            json!({"tool": "t", "arguments": {"delay_ms": 100}}),
        )
        .await;
        c.tx.shutdown().await.unwrap();
        assert_eq!(c.recv().await["id"], 1);
    }
}

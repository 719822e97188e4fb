//! Serving over WebSocket and HTTP on one port, through jsonrpsee's server.
//!
//! jsonrpsee's server already does what a network hook needs: it answers a
//! WebSocket upgrade with a session and any other `POST` as one HTTP
//! request, on the same port, with size and connection limits, and it
//! calls the same [`RpcModule`](jsonrpsee_core::server::RpcModule) the line
//! transport uses (module `dispatch`). What it does not do for this
//! protocol is done in one RPC middleware, [`HookRpc`], which jsonrpsee
//! instantiates once per WebSocket connection (and once per HTTP request):
//!
//! - **Notifications.** jsonrpsee never routes a notification to a module
//!   method, but it hands every one to the middleware's
//!   [`RpcServiceT::notification`] (jsonrpsee-server 0.26.1,
//!   `handle_rpc_call`: a message that is not a request but parses as a
//!   notification). `hook.runtime_event` goes from there to the hook's one
//!   event task; `$/cancel_request` cancels a request of the same
//!   connection.
//! - **Cancellation.** [`RpcServiceT::call`] registers each request by id
//!   in its connection's table before it starts, and races it against that
//!   registration being fired. A cancelled request's future is dropped and
//!   it is answered -32800.
//! - **Panics.** The call is polled under `catch_unwind`; a panic becomes a
//!   -32603 answer instead of a message task that dies unanswered.
//! - **HTTP notifications.** jsonrpsee acknowledges a notification `POST`
//!   with the body `null` (`MethodResponse::notification` is the JSON
//!   `null`, and `http::response::from_method_response` sends it as it is).
//!   The middleware marks its notification answers, and an HTTP middleware
//!   sends the marked ones with an empty body: a notification is never
//!   answered.
//!
//! **Order.** jsonrpsee reads a WebSocket connection's frames in order but
//! handles each frame in a task of its own (`tokio::spawn` per message, in
//! `ws::background_task`), and the middleware sees the message when that
//! task first runs. A current-thread tokio runtime runs spawned tasks first
//! in, first out, so there the middleware sees messages in arrival order:
//! runtime events reach [`Hook::on_event`] in the order they were sent, and
//! a cancel always finds the request sent before it. A multi-threaded
//! runtime gives no such order (its workers run the newest spawned task
//! first, and steal from each other; a test of 500 events saw them
//! reordered every time), so [`serve_ws`] called on one runs the server on
//! a current-thread runtime of its own, on a thread of its own.
//!
//! **Stop.** jsonrpsee's stop closes the listener; each WebSocket session
//! stops reading, waits for its requests to be answered, writes the last
//! answers and closes, and HTTP connections finish the request in progress.
//! Its handle's `stopped` resolves only when the last connection is done
//! (every connection task holds a receiver of its stop channel), so that
//! is what the grace period waits for; past it, the requests still running
//! are answered -32800 and dropped.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures::FutureExt;
use futures::future::Either;
use hookhost_protocol::envelope::{Id as WireId, error_code};
use hookhost_protocol::stage::method;
use jsonrpsee::server::middleware::rpc::RpcServiceBuilder;
use jsonrpsee::server::{
    BatchRequestConfig, HttpBody, HttpResponse, Server, ServerConfig, ServerHandle,
};
use jsonrpsee_core::middleware::{Batch, Notification, Request, RpcServiceT};
use jsonrpsee_core::server::MethodResponse;
use jsonrpsee_types::{ErrorObject, Id};
use tokio::runtime::RuntimeFlavor;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::access::{Gate, NetConfig};
use crate::dispatch::{
    CANCELLED, DRAIN_GRACE, EventQueue, FLUSH_GRACE, build_module, cancel_target, jsonrpsee_id,
    lock, panic_message,
};
use crate::hook::Hook;

/// The largest request and the largest answer, each. Params carry whole
/// conversations and tool outputs (spec §2: a hook SHOULD NOT impose small
/// limits); jsonrpsee's default of 10 MB would cut them off.
const MAX_MESSAGE: u32 = 64 << 20;
/// WebSocket sessions (and HTTP requests in progress) served at once:
/// enough for a fleet of agents; the process's file descriptor limit is
/// usually the tighter bound. jsonrpsee's default is 100.
const MAX_CONNECTIONS: u32 = 10_000;

/// A hook being served over WebSocket and HTTP; see [`serve_ws`].
///
/// Stopping is graceful: the server stops accepting, requests still running
/// get a short grace period to answer (then they are answered -32800 and
/// dropped), sessions are closed, queued runtime events are handed to the
/// hook, and [`NetServer::stopped`] returns, all within about a second.
/// Dropping the handle stops the server the same way, in the background,
/// as jsonrpsee's own handle does.
#[derive(Debug)]
pub struct NetServer {
    local_addr: SocketAddr,
    stop: watch::Sender<bool>,
    done: watch::Receiver<bool>,
}

impl NetServer {
    /// The address the server is bound to: with port 0 in the address it
    /// was given, this is where the port it got is learned.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Starts a graceful stop and returns at once, so that a signal
    /// handler or another task can trigger it; await
    /// [`NetServer::stopped`] for the end. Calling it again does nothing.
    pub fn stop(&self) {
        self.stop.send_replace(true);
    }

    /// Waits until the server has stopped (after [`NetServer::stop`]), so
    /// that a process can exit knowing the last answers were written.
    pub async fn stopped(&self) {
        let mut done = self.done.clone();
        // An error means the serving task is gone (its runtime shut down):
        // stopped as well.
        let _ = done.wait_for(|d| *d).await;
    }
}

/// Serves `hook` over WebSocket and HTTP on one TCP port, until the
/// returned handle stops it.
///
/// `addr` is anything tokio can bind (`"127.0.0.1:8700"`, a
/// [`SocketAddr`], port 0 for any free port). Each WebSocket connection is
/// a session of its own that starts with `hook.hello` (spec §2.2), and any
/// number of them are served at once; each HTTP `POST` is one request. The
/// methods, verdicts, errors and panic handling are those of
/// [`crate::serve_stdio`]: both transports dispatch through the same
/// jsonrpsee module. Runtime events go to [`Hook::on_event`] one at a
/// time, in arrival order, on one task shared by all connections;
/// `$/cancel_request` cancels a request of its own connection.
///
/// On a current-thread runtime (what [`crate::run`] builds) the server runs
/// on that runtime. On a multi-threaded one it runs on a current-thread
/// runtime of its own, on a thread of its own, because only such a runtime
/// keeps messages in arrival order through jsonrpsee's task per message
/// (see the crate docs); the hook's handlers then run on that thread.
///
/// # Errors
///
/// When the address cannot be resolved or bound, or the server thread
/// cannot be started.
///
/// # Panics
///
/// When called outside a tokio runtime.
pub async fn serve_ws<H: Hook>(
    hook: H,
    addr: impl tokio::net::ToSocketAddrs,
) -> io::Result<NetServer> {
    serve_ws_with(hook, addr, NetConfig::new()).await
}

/// [`serve_ws`] with a [`NetConfig`]: with [`NetConfig::token`], every
/// request and upgrade must carry `Authorization: Bearer TOKEN`.
///
/// Whatever the config, a request with an `Origin` header (a web page's)
/// is refused with 403, a request without the token (when one is set)
/// with 401, and a `POST` that is not `Content-Type: application/json`
/// with 415; each refusal is logged as one line on stderr.
///
/// # Errors
///
/// As [`serve_ws`]; and [`io::ErrorKind::InvalidInput`] when the token is
/// empty or not printable ASCII without spaces.
///
/// # Panics
///
/// When called outside a tokio runtime.
pub async fn serve_ws_with<H: Hook>(
    hook: H,
    addr: impl tokio::net::ToSocketAddrs,
    config: NetConfig,
) -> io::Result<NetServer> {
    let token = config.checked_token()?;
    // Bound here, on the caller's runtime, so that errors and the port come
    // back directly; handed over as a std listener to whichever runtime
    // serves it.
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local_addr = listener.local_addr()?;
    let listener = listener.into_std()?;
    let (stop_tx, stop_rx) = watch::channel(false);
    let (done_tx, done_rx) = watch::channel(false);
    if tokio::runtime::Handle::current().runtime_flavor() == RuntimeFlavor::CurrentThread {
        let running = start(hook, listener, token)?;
        tokio::spawn(running.serve_until(stop_rx, done_tx));
    } else {
        let (ready_tx, ready_rx) = oneshot::channel();
        std::thread::Builder::new()
            .name("hookhost-net".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                rt.block_on(async move {
                    match start(hook, listener, token) {
                        Ok(running) => {
                            let _ = ready_tx.send(Ok(()));
                            running.serve_until(stop_rx, done_tx).await;
                        }
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                        }
                    }
                });
            })?;
        ready_rx
            .await
            .map_err(|_| io::Error::other("the server thread ended before it started serving"))??;
    }
    Ok(NetServer {
        local_addr,
        stop: stop_tx,
        done: done_rx,
    })
}

/// Serves `hook` on `addr` until SIGTERM or SIGINT, printing the listening
/// line once bound and nothing else to stdout: the whole of `run` with
/// `--listen`.
pub(crate) async fn listen_until_signal<H: Hook>(
    hook: H,
    addr: &str,
    config: NetConfig,
) -> io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    // Installed before the line is printed, so that a supervisor that
    // signals as soon as it reads it gets a clean stop, not a default kill.
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let server = serve_ws_with(hook, addr, config)
        .await
        .map_err(|e| io::Error::new(e.kind(), format!("cannot listen on {addr}: {e}")))?;
    {
        use std::io::Write;
        let mut out = io::stdout().lock();
        writeln!(out, "listening on ws://{}", server.local_addr())?;
        out.flush()?;
        // The line is all stdout carries: later prints go to stderr, as
        // they do over stdio.
        crate::stdio::stdout_to_stderr()?;
    }
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    server.stop();
    server.stopped().await;
    Ok(())
}

/// What the serving task holds to stop the server.
struct Running {
    handle: ServerHandle,
    /// Set when the grace period is over: every request still running
    /// answers -32800 at once.
    abandon: watch::Sender<bool>,
    /// Tells the event task to finish what is queued and end.
    events_stop: oneshot::Sender<()>,
    event_task: JoinHandle<()>,
}

/// Builds the module, the event task and the middleware, and starts
/// jsonrpsee's server on `listener`. Runs on the runtime that will serve.
fn start<H: Hook>(
    hook: H,
    listener: std::net::TcpListener,
    token: Option<Arc<[u8]>>,
) -> io::Result<Running> {
    let hook = Arc::new(hook);
    let module = build_module(hook.clone()).map_err(io::Error::other)?;
    let (events_stop, events_stopped) = oneshot::channel::<()>();
    let (events, event_task) = EventQueue::start(hook, async move {
        let _ = events_stopped.await;
    });
    let (abandon, abandoned) = watch::channel(false);
    let shared = Arc::new(Shared { events, abandoned });
    let rpc = RpcServiceBuilder::new().layer_fn(move |inner| HookRpc {
        inner,
        shared: shared.clone(),
        inflight: Arc::new(Mutex::new(HashMap::new())),
        generation: AtomicU64::new(0),
    });
    // The gate is outermost: a refused request never reaches jsonrpsee.
    let http = tower::ServiceBuilder::new()
        .layer_fn(move |inner| Gate {
            inner,
            token: token.clone(),
        })
        .map_response(empty_notification_ack);
    let config = ServerConfig::builder()
        .max_request_body_size(MAX_MESSAGE)
        .max_response_body_size(MAX_MESSAGE)
        .max_connections(MAX_CONNECTIONS)
        // The protocol has no batches (spec §2.2); refusing them also keeps
        // every message on the middleware's `call` and `notification`.
        .set_batch_request_config(BatchRequestConfig::Disabled)
        .build();
    let server = Server::builder()
        .set_config(config)
        .set_rpc_middleware(rpc)
        .set_http_middleware(http)
        .build_from_tcp(listener)?;
    Ok(Running {
        handle: server.start(module),
        abandon,
        events_stop,
        event_task,
    })
}

impl Running {
    /// Waits for a stop (or the handle to be dropped), then stops
    /// gracefully and reports it done.
    async fn serve_until(self, mut stop: watch::Receiver<bool>, done: watch::Sender<bool>) {
        // An error means the handle was dropped: stop as well.
        let _ = stop.wait_for(|s| *s).await;
        let Running {
            handle,
            abandon,
            events_stop,
            event_task,
        } = self;
        // Stop accepting; each session stops reading and waits for its
        // requests to be answered, then closes. `stopped` resolves when the
        // last connection, WebSocket or HTTP, has finished writing.
        let _ = handle.stop();
        let deadline = Instant::now() + DRAIN_GRACE;
        if tokio::time::timeout_at(deadline, handle.clone().stopped())
            .await
            .is_err()
        {
            abandon.send_replace(true);
            let _ = tokio::time::timeout(FLUSH_GRACE, handle.stopped()).await;
        }
        let _ = events_stop.send(());
        let _ = tokio::time::timeout_at(deadline + FLUSH_GRACE, event_task).await;
        done.send_replace(true);
    }
}

/// What every connection's middleware shares.
struct Shared {
    events: EventQueue,
    abandoned: watch::Receiver<bool>,
}

/// This connection's requests in flight, by id: the generation of the
/// request holding the id, and the sender whose firing cancels it.
type Inflight = Arc<Mutex<HashMap<Id<'static>, (u64, oneshot::Sender<()>)>>>;

/// The RPC middleware: one per WebSocket connection (one per HTTP
/// request), wrapping jsonrpsee's own service. See the module docs.
struct HookRpc<S> {
    inner: S,
    shared: Arc<Shared>,
    inflight: Inflight,
    generation: AtomicU64,
}

/// Marks the answer to a notification, so that the HTTP middleware can
/// send it as an empty body: jsonrpsee acknowledges a notification `POST`
/// with the body `null`, which a client expecting no response may try to
/// read as one.
#[derive(Clone, Copy)]
struct NotificationAck;

fn empty_notification_ack(mut response: HttpResponse) -> HttpResponse {
    if response.extensions().get::<NotificationAck>().is_some() {
        *response.body_mut() = HttpBody::empty();
        response.headers_mut().remove("content-type");
    }
    response
}

impl<S> RpcServiceT for HookRpc<S>
where
    S: RpcServiceT<
            MethodResponse = MethodResponse,
            NotificationResponse = MethodResponse,
            BatchResponse = MethodResponse,
        > + Send
        + Sync,
{
    type MethodResponse = MethodResponse;
    type NotificationResponse = MethodResponse;
    type BatchResponse = MethodResponse;

    fn call<'a>(&self, req: Request<'a>) -> impl Future<Output = MethodResponse> + Send + 'a {
        let id = req.id.clone().into_owned();
        if let Some(why) = malformed(&req) {
            let error = ErrorObject::owned(error_code::INVALID_REQUEST as i32, why, None::<()>);
            return Either::Left(std::future::ready(MethodResponse::error(id, error)));
        }
        // Registered now, when jsonrpsee first runs this message's task, so
        // that a cancel in a later frame always finds it (see the module
        // docs on order).
        let (cancel, registration) = self.register(id.clone());
        let abandoned = abandoned(self.shared.abandoned.clone());
        let call = std::panic::catch_unwind(AssertUnwindSafe(|| self.inner.call(req)));
        Either::Right(async move {
            let _registration = registration;
            let call = match call {
                Ok(call) => call,
                Err(panic) => return internal_error(id, &*panic),
            };
            tokio::select! {
                biased;
                () = cancelled(cancel) => cancelled_answer(id),
                () = abandoned => cancelled_answer(id),
                r = AssertUnwindSafe(call).catch_unwind() => match r {
                    Ok(answer) => answer,
                    Err(panic) => internal_error(id, &*panic),
                },
            }
        })
    }

    fn batch<'a>(&self, batch: Batch<'a>) -> impl Future<Output = MethodResponse> + Send + 'a {
        // Unreachable: batches are refused before any middleware runs.
        self.inner.batch(batch)
    }

    fn notification<'a>(
        &self,
        n: Notification<'a>,
    ) -> impl Future<Output = MethodResponse> + Send + 'a {
        // Handled here, synchronously, before the returned future is ever
        // polled: this is the point that sees messages in arrival order.
        let params = n.params.as_ref().map_or("{}", |p| p.get());
        match n.method_name() {
            method::RUNTIME_EVENT => self.shared.events.push_raw(params),
            method::CANCEL_REQUEST => {
                if let Some(id) = cancel_target(params) {
                    self.cancel(&id);
                }
            }
            // Unknown notifications must be ignored.
            _ => {}
        }
        let ack = self.inner.notification(n);
        async move {
            let mut ack = ack.await;
            ack.extensions_mut().insert(NotificationAck);
            ack
        }
    }
}

impl<S> HookRpc<S> {
    /// Enters a request in this connection's table; the registration
    /// removes it again when the request ends, unless a later request has
    /// taken the id meanwhile.
    fn register(&self, id: Id<'static>) -> (oneshot::Receiver<()>, Registration) {
        let (tx, rx) = oneshot::channel();
        let generation = self.generation.fetch_add(1, Ordering::Relaxed);
        lock(&self.inflight).insert(id.clone(), (generation, tx));
        let registration = Registration {
            inflight: self.inflight.clone(),
            id,
            generation,
        };
        (rx, registration)
    }

    fn cancel(&self, id: &WireId) {
        let (id, unrepresentable) = jsonrpsee_id(id);
        if unrepresentable {
            // A negative id: jsonrpsee cannot have read a request with it.
            return;
        }
        // An unknown or already answered id is ignored, as the spec says.
        if let Some((_, fire)) = lock(&self.inflight).remove(&id) {
            let _ = fire.send(());
        }
    }
}

/// Removes its request from the connection's table when the request ends,
/// however it ends (answered, cancelled, or dropped with its connection).
struct Registration {
    inflight: Inflight,
    id: Id<'static>,
    generation: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut map = lock(&self.inflight);
        if map
            .get(&self.id)
            .is_some_and(|(g, _)| *g == self.generation)
        {
            map.remove(&self.id);
        }
    }
}

/// What the line transport rejects before dispatch, rejected the same way
/// here: jsonrpsee reads `"id": null` as a request, and would read an
/// array of params into a struct's fields by position.
fn malformed(req: &Request<'_>) -> Option<&'static str> {
    if req.id == Id::Null {
        return Some("`id` must be an integer or a string");
    }
    if req
        .params
        .as_ref()
        .is_some_and(|p| !p.get().trim_start().starts_with('{'))
    {
        return Some("`params` must be an object");
    }
    None
}

/// Completes when the request is cancelled. A dropped sender means a later
/// request took over the id: this one runs on, no longer cancellable by it.
async fn cancelled(cancel: oneshot::Receiver<()>) {
    if cancel.await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Completes when the server's grace period for running requests is over.
async fn abandoned(mut abandoned: watch::Receiver<bool>) {
    if abandoned.wait_for(|a| *a).await.is_err() {
        // The server is gone; nothing will ask for this answer.
        std::future::pending::<()>().await;
    }
}

fn cancelled_answer(id: Id<'static>) -> MethodResponse {
    let error = ErrorObject::borrowed(error_code::REQUEST_CANCELLED as i32, CANCELLED, None);
    MethodResponse::error(id, error)
}

fn internal_error(id: Id<'static>, panic: &(dyn std::any::Any + Send)) -> MethodResponse {
    let error = ErrorObject::owned(
        error_code::INTERNAL_ERROR as i32,
        panic_message(panic),
        None::<()>,
    );
    MethodResponse::error(id, error)
}

//! One JSON-RPC connection to one running hook process.
//!
//! A reader task owns the hook's stdout; the hook's stdin is an
//! [`Outbox`] that a caller writes to itself when nobody else is writing
//! (a writer task takes over only what the pipe cannot take at once).
//! Callers meet the reader through the pending map: a caller registers a
//! oneshot under a fresh id, sends its line, and waits with its deadline;
//! the reader routes each response to the oneshot with its id, reading
//! only the envelope's `id` and the `result` it hands on.
//! Nothing a hook writes can take the connection down: bad lines, unknown
//! ids and over-long lines are logged (within a [`LogBudget`], so a flood
//! of them does not become a flood in the agent's log) and skipped.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use hookhost_protocol::envelope::{DecodeError, Message};
use hookhost_protocol::stage::method;
use hookhost_protocol::{ErrorObject, Id, error_code};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::sync::{Notify, oneshot};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::error::CallError;
use crate::observe::log_budget::LogBudget;
use crate::policy::deadline::Deadline;
use hookhost_protocol::framing::{Line, LineReader};

use hookhost_protocol::outbox::{Outbox, SendError};

/// What an answer may hold beyond twice the request it answers: the
/// envelope, the action, and escapes a rewrite adds.
const REPLY_HEADROOM: usize = 64 * 1024;

/// What is read of an exited hook's stdout beyond the largest answer
/// accepted: more than any pipe holds, so only a process that outlived
/// the hook and floods the pipe reaches it.
pub(crate) const DRAIN_BYTES: usize = 1 << 20;

type Reply = Result<Value, CallError>;

struct Pending {
    waiting: HashMap<i64, Waiter, BuildHasherDefault<IdHasher>>,
    /// How many requests in flight have each line length, so the longest
    /// is known at once however many are in flight.
    sizes: BTreeMap<usize, usize>,
    /// Set once the connection is over; new calls fail with it at once.
    closed: Option<CallError>,
}

/// Hashes the pending map's keys, ids this connection chose itself
/// (1, 2, 3, ...), as they are: nobody else picks them, so there is no
/// collision flood to defend against, and SipHash was a visible share of
/// each call.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        // Spread sequential ids over hashbrown's top bits (its control
        // bytes), as Fibonacci hashing does.
        self.0.wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }

    fn write_i64(&mut self, n: i64) {
        self.0 = n as u64;
    }
}

/// A caller waiting for its answer, and how long its request line was.
struct Waiter {
    tx: oneshot::Sender<Reply>,
    bytes: usize,
}

impl Pending {
    fn insert(&mut self, id: i64, tx: oneshot::Sender<Reply>, bytes: usize) {
        if let Some(old) = self.waiting.insert(id, Waiter { tx, bytes }) {
            self.forget_size(old.bytes);
        }
        *self.sizes.entry(bytes).or_default() += 1;
    }

    fn remove(&mut self, id: i64) -> Option<oneshot::Sender<Reply>> {
        let w = self.waiting.remove(&id)?;
        self.forget_size(w.bytes);
        Some(w.tx)
    }

    fn forget_size(&mut self, bytes: usize) {
        if let Some(n) = self.sizes.get_mut(&bytes) {
            *n -= 1;
            if *n == 0 {
                self.sizes.remove(&bytes);
            }
        }
    }

    /// The longest request line in flight (0 with none).
    fn largest(&self) -> usize {
        self.sizes.last_key_value().map_or(0, |(bytes, _)| *bytes)
    }
}

/// The longest answer line accepted: `max_line_bytes`, or twice the
/// longest request in flight plus headroom, whichever is more. A hook that
/// rewrites (redacts) a large tool output answers with about as many
/// bytes as it was sent; dropping that answer would fail the hook open
/// for whoever configured it to allow, and a breaker would then turn it
/// off for everyone.
pub(crate) fn reply_cap(max_line: usize, largest: usize) -> usize {
    if largest == 0 {
        return max_line;
    }
    max_line.max(largest.saturating_mul(2).saturating_add(REPLY_HEADROOM))
}

/// A live connection; cheap to share, every method takes `&self`.
pub(crate) struct Connection {
    hook: Arc<str>,
    next_id: AtomicI64,
    pending: Mutex<Pending>,
    out: Arc<Outbox>,
    /// The last request line's length, to size the next one's buffer.
    last_line: AtomicUsize,
    stdout_closed: Notify,
    /// Set once the reader has reached the end of the hook's stdout.
    stdout_ended: AtomicBool,
    /// Bytes the reader may still read: unbounded while the hook lives,
    /// set by [`Connection::drain`] once it has exited.
    drain_left: AtomicUsize,
    log_budget: LogBudget,
    /// `max_line_bytes`, the floor of [`Connection::reply_cap`].
    max_line: usize,
    /// The reader's cap now, moved as requests come and go.
    reply_cap: Arc<AtomicUsize>,
}

/// The tasks behind a connection, for the supervisor to end.
pub(crate) struct ConnectionTasks {
    /// Reads and routes stdout.
    pub reader: JoinHandle<()>,
    /// Writes to stdin what callers could not write at once; it ends when
    /// stdin is closed or breaks.
    pub writer: JoinHandle<()>,
}

impl Connection {
    /// Starts the reader and writer tasks over a hook's pipes.
    pub(crate) fn start<W, R>(
        hook: Arc<str>,
        stdin: W,
        stdout: R,
        max_line: usize,
    ) -> (Arc<Connection>, ConnectionTasks)
    where
        W: AsyncWrite + Unpin + Send + 'static,
        R: AsyncRead + Unpin + Send + 'static,
    {
        let out = Outbox::new(stdin);
        let conn = Arc::new(Connection {
            hook,
            next_id: AtomicI64::new(1),
            pending: Mutex::new(Pending {
                waiting: HashMap::default(),
                sizes: BTreeMap::new(),
                closed: None,
            }),
            out: out.clone(),
            last_line: AtomicUsize::new(0),
            stdout_closed: Notify::new(),
            stdout_ended: AtomicBool::new(false),
            drain_left: AtomicUsize::new(usize::MAX),
            log_budget: LogBudget::default(),
            max_line,
            reply_cap: Arc::new(AtomicUsize::new(max_line)),
        });
        let hook = conn.hook.clone();
        let writer = tokio::spawn(async move {
            if let Err(e) = out.drive().await {
                tracing::debug!(%hook, "stdin closed: {e}");
            }
        });
        let reader = tokio::spawn(read_loop(conn.clone(), stdout));
        (conn, ConnectionTasks { reader, writer })
    }

    fn lock(&self) -> MutexGuard<'_, Pending> {
        // A panic while holding this lock cannot leave the map inconsistent
        // (every critical section is a single insert/remove), so a poisoned
        // lock is still usable.
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The hook's name, for logs.
    pub(crate) fn hook(&self) -> &str {
        &self.hook
    }

    /// Whether the connection is over.
    pub(crate) fn is_closed(&self) -> bool {
        self.lock().closed.is_some()
    }

    /// Calls `method` and waits for the answer until `deadline`.
    pub(crate) async fn request(&self, method: &str, params: &Value, deadline: Deadline) -> Reply {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        let line = encode_request(id, method, params, &self.last_line);
        {
            let mut p = self.lock();
            if let Some(err) = &p.closed {
                return Err(err.clone());
            }
            p.insert(id, tx, line.len());
            self.publish_cap(&p);
        }
        let guard = PendingGuard { conn: self, id };
        match self.out.send(&line, deadline.at()).await {
            Ok(()) => {}
            Err(SendError::Full) => return Err(deadline.expired()),
            Err(_) => return Err(self.stdin_closed()),
        }
        drop(line);
        match deadline.bound(rx).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(_)) => Err(self.closed_reason()),
            Err(expired) => {
                drop(guard);
                self.cancel(id);
                Err(expired)
            }
        }
    }

    /// Sends a notification, waiting for room in the write queue until
    /// `deadline`. The line must be a complete encoded message.
    pub(crate) async fn notify_line(
        &self,
        line: Arc<[u8]>,
        deadline: Instant,
    ) -> Result<(), CallError> {
        match self.out.send(&line, deadline).await {
            Ok(()) => Ok(()),
            Err(SendError::Full) => Err(CallError::Timeout(Duration::ZERO)),
            Err(_) => Err(self.stdin_closed()),
        }
    }

    /// Tells the hook to stop working on `id`; best effort, never waits.
    fn cancel(&self, id: i64) {
        let line = format!(
            r#"{{"jsonrpc":"2.0","method":"{}","params":{{"id":{id}}}}}"#,
            method::CANCEL_REQUEST
        );
        if self.out.send_now(line.as_bytes()).is_err() {
            tracing::debug!(hook = %self.hook, id, "could not queue $/cancel_request");
        }
    }

    /// Moves the reader's cap to what the requests in flight need.
    fn publish_cap(&self, pending: &Pending) {
        self.reply_cap.store(
            reply_cap(self.max_line, pending.largest()),
            Ordering::Relaxed,
        );
    }

    /// Takes the waiter of `id` out of the pending map, if it still waits.
    fn take_waiter(&self, id: i64) -> Option<oneshot::Sender<Reply>> {
        let mut p = self.lock();
        let tx = p.remove(id);
        self.publish_cap(&p);
        tx
    }

    /// Why a line could not be written: the connection's end, when it
    /// ended, else the hook's stdin is closed.
    fn stdin_closed(&self) -> CallError {
        self.lock().closed.clone().unwrap_or(CallError::StdinClosed)
    }

    fn closed_reason(&self) -> CallError {
        self.lock().closed.clone().unwrap_or(CallError::Closed)
    }

    /// Ends the connection: every pending call and every later one fails
    /// with `why`. The first reason given wins.
    pub(crate) fn close(&self, why: CallError) {
        let waiting = {
            let mut p = self.lock();
            if p.closed.is_none() {
                p.closed = Some(why.clone());
            }
            p.sizes.clear();
            self.publish_cap(&p);
            std::mem::take(&mut p.waiting)
        };
        for (_, w) in waiting {
            let _ = w.tx.send(Err(why.clone()));
        }
    }

    /// Has what is queued written and the hook's stdin closed (EOF tells
    /// the hook to exit). When that takes longer than `within` (a hook
    /// that stopped reading), the writer is stopped instead, which drops
    /// the pipe it holds and so closes stdin at once.
    pub(crate) async fn close_stdin(&self, tasks: &ConnectionTasks, within: Duration) {
        if !self.out.close(Instant::now() + within).await {
            tasks.writer.abort();
        }
    }

    /// Resolves when the hook's stdout has ended (at once if it has).
    pub(crate) async fn stdout_closed(&self) {
        let notified = self.stdout_closed.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if self.stdout_ended.load(Ordering::Acquire) {
            return;
        }
        notified.await;
    }

    /// Reads what a hook that has exited left on its stdout, to its end:
    /// every complete answer in it reaches its caller before the exit is
    /// taken for a failure of the calls still pending. Bounded: at most
    /// `within`, and at most [`DRAIN_BYTES`] beyond the largest answer
    /// now accepted (a process that escaped the hook's group may still
    /// hold the pipe, or flood it). Whether the end was reached.
    pub(crate) async fn drain(&self, within: Duration) -> bool {
        let cap = self.reply_cap.load(Ordering::Relaxed);
        self.drain_left
            .store(cap.saturating_add(DRAIN_BYTES), Ordering::Relaxed);
        tokio::time::timeout(within, self.stdout_closed())
            .await
            .is_ok()
    }

    /// Counts `n` bytes read against the drain budget; whether the reader
    /// must stop.
    fn spend_drain(&self, n: usize) -> bool {
        let left = self.drain_left.load(Ordering::Relaxed);
        if left == usize::MAX {
            return false;
        }
        self.drain_left
            .store(left.saturating_sub(n), Ordering::Relaxed);
        left <= n
    }

    /// How many calls wait for an answer.
    pub(crate) fn pending_count(&self) -> usize {
        self.lock().waiting.len()
    }

    fn dispatch(&self, line: &[u8]) {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        if let Some(answer) = PlainAnswer::read(line) {
            return self.route(Some(Id::Number(answer.id)), Ok(answer.result));
        }
        match Message::decode(line) {
            Ok(Message::Response(r)) => self.route(r.id, r.payload.map_err(CallError::Rpc)),
            Ok(Message::Request(req)) => {
                self.warn(format_args!(
                    "the hook sent a request ({}); hooks cannot call the host in protocol v1, answering -32601",
                    Shown(req.method.as_bytes())
                ));
                let reply = Message::Response(hookhost_protocol::envelope::Response {
                    id: Some(req.id),
                    payload: Err(ErrorObject::new(
                        error_code::METHOD_NOT_FOUND,
                        format!("the host offers no method {:?}", req.method),
                    )),
                });
                let _ = self.out.send_now(&reply.encode());
            }
            Ok(Message::Notification(n)) => {
                tracing::debug!(hook = %self.hook, method = %n.method, "ignored a notification from the hook");
            }
            Err(DecodeError::Parse(e)) => {
                self.warn(format_args!(
                    "skipped a non-JSON line on the hook's stdout ({e}): {}",
                    Shown(line)
                ));
            }
            Err(DecodeError::Invalid { reason, id }) => match id {
                Some(id) if self.is_waiting(&id) => {
                    self.warn(format_args!("invalid response to id {id}: {reason}"));
                    self.route(Some(id), Err(CallError::Protocol(reason)));
                }
                _ => self.warn(format_args!(
                    "skipped an invalid message ({reason}): {}",
                    Shown(line)
                )),
            },
            // A kind of undecodable line added later: skipped, as above.
            Err(e) => self.warn(format_args!(
                "skipped an unreadable line ({e}): {}",
                Shown(line)
            )),
        }
    }

    /// Logs a warning about what the hook sent, within the budget.
    fn warn(&self, message: std::fmt::Arguments<'_>) {
        self.log_budget.warn(&self.hook, message);
    }

    fn is_waiting(&self, id: &Id) -> bool {
        match id {
            Id::Number(n) => self.lock().waiting.contains_key(n),
            Id::String(_) => false,
        }
    }

    fn route(&self, id: Option<Id>, reply: Reply) {
        let tx = match &id {
            Some(Id::Number(n)) => self.take_waiter(*n),
            _ => None,
        };
        match tx {
            Some(tx) => {
                // The caller may have given up at this very moment; then the
                // answer is simply late.
                let _ = tx.send(reply);
            }
            None => match id {
                Some(id) => self.warn(format_args!(
                    "skipped a response for unknown id {id} (late after a timeout, a duplicate, or never sent)"
                )),
                None => self.warn(format_args!(
                    "skipped an error response with a null id: {}",
                    Shown(format!("{:?}", reply.err()).as_bytes())
                )),
            },
        }
    }
}

/// The answer nearly every line is, `{"jsonrpc":"2.0","id":N,"result":R}`
/// and nothing else, read in one pass: only `result` becomes a `Value`.
/// Anything else (an error, a string id, an extra key, a duplicate) is
/// left to [`Message::decode`], which judges every message alike.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PlainAnswer<'a> {
    #[serde(borrow)]
    jsonrpc: &'a str,
    id: i64,
    result: Value,
}

impl PlainAnswer<'_> {
    fn read(line: &[u8]) -> Option<PlainAnswer<'_>> {
        serde_json::from_slice::<PlainAnswer>(line)
            .ok()
            .filter(|a| a.jsonrpc == "2.0")
    }
}

/// Removes a pending entry when its caller stops waiting for any reason,
/// including the caller's own future being dropped.
struct PendingGuard<'a> {
    conn: &'a Connection,
    id: i64,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        self.conn.take_waiter(self.id);
    }
}

/// The request line, without its newline. Sized from the last one, so a
/// run of similar calls encodes without growing the buffer.
fn encode_request(id: i64, method: &str, params: &Value, last: &AtomicUsize) -> Vec<u8> {
    let mut line = Vec::with_capacity(last.load(Ordering::Relaxed).max(128));
    line.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    // Integers, strings and Values always serialize.
    let _ = serde_json::to_writer(&mut line, &id);
    line.extend_from_slice(br#","method":"#);
    let _ = serde_json::to_writer(&mut line, method);
    line.extend_from_slice(br#","params":"#);
    let _ = serde_json::to_writer(&mut line, params);
    line.push(b'}');
    last.store(line.len() + 16, Ordering::Relaxed);
    line
}

/// What the log shows of text a hook wrote where it should not: its length
/// and its first [`SHOWN_CHARS`] characters, secrets masked and control
/// characters escaped. A stray line can be anything the hook printed (an
/// environment dump, a key), and the agent's log has more readers than the
/// hook's own output. Formatted only when the warning passes the budget.
struct Shown<'a>(&'a [u8]);

/// Characters of a stray line the log shows.
const SHOWN_CHARS: usize = 64;
/// Bytes of a stray line redacted before it is cut, so that a secret
/// straddling the cut is still recognised whole.
const REDACT_WINDOW: usize = 4096;

impl std::fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let window = &self.0[..self.0.len().min(REDACT_WINDOW)];
        let text = String::from_utf8_lossy(window);
        let masked = crate::observe::redact::redact(&text);
        let prefix: String = masked.chars().take(SHOWN_CHARS).collect();
        let cut = prefix.len() < masked.len() || window.len() < self.0.len();
        let more = if cut { "…" } else { "" };
        write!(f, "{prefix:?}{more} ({} bytes)", self.0.len())
    }
}

async fn read_loop<R: AsyncRead + Unpin>(conn: Arc<Connection>, stdout: R) {
    let mut reader = LineReader::with_limit(
        BufReader::with_capacity(64 * 1024, stdout),
        conn.reply_cap.clone(),
    );
    let mut buf = Vec::new();
    loop {
        let read = match reader.next(&mut buf).await {
            Ok(Line::Complete) => {
                conn.dispatch(&buf);
                buf.len() + 1
            }
            Ok(Line::TooLong(n)) => {
                conn.warn(format_args!(
                    "skipped a {n}-byte line on the hook's stdout: longer than max_line_bytes ({}) and than twice the largest request in flight",
                    conn.max_line
                ));
                n
            }
            Ok(Line::Eof) => break,
            Err(e) => {
                tracing::warn!(hook = %conn.hook, "reading the hook's stdout failed: {e}");
                break;
            }
        };
        if conn.spend_drain(read) {
            conn.warn(format_args!(
                "stopped reading the stdout of a hook that exited: more than {DRAIN_BYTES} bytes followed its exit"
            ));
            break;
        }
    }
    conn.log_budget.report_held_back(&conn.hook);
    conn.stdout_ended.store(true, Ordering::Release);
    conn.stdout_closed.notify_waiters();
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

    /// A connection over in-memory pipes, with the hook's ends returned.
    fn pair() -> (
        Arc<Connection>,
        tokio::io::Lines<BufReader<tokio::io::DuplexStream>>,
        tokio::io::DuplexStream,
    ) {
        let (host_in, hook_in) = tokio::io::duplex(1 << 16);
        let (hook_out, host_out) = tokio::io::duplex(1 << 16);
        let (conn, _tasks) = Connection::start("t".into(), host_in, host_out, 1024);
        (conn, BufReader::new(hook_in).lines(), hook_out)
    }

    fn far() -> Deadline {
        Deadline::after(Duration::from_secs(5))
    }

    #[tokio::test]
    async fn answers_in_any_order_reach_their_callers() {
        let (conn, mut hook_rx, mut hook_tx) = pair();
        let c1 = conn.clone();
        let a = tokio::spawn(async move { c1.request("m", &json!({"n": 1}), far()).await });
        let c2 = conn.clone();
        let b = tokio::spawn(async move { c2.request("m", &json!({"n": 2}), far()).await });
        let mut ids = Vec::new();
        for _ in 0..2 {
            let line = hook_rx.next_line().await.unwrap().unwrap();
            let v: Value = serde_json::from_str(&line).unwrap();
            ids.push((
                v["id"].as_i64().unwrap(),
                v["params"]["n"].as_i64().unwrap(),
            ));
        }
        for (id, n) in ids.iter().rev() {
            let reply =
                format!("not json\n{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"n\":{n}}}}}\n");
            hook_tx.write_all(reply.as_bytes()).await.unwrap();
        }
        assert_eq!(a.await.unwrap().unwrap(), json!({"n": 1}));
        assert_eq!(b.await.unwrap().unwrap(), json!({"n": 2}));
        assert_eq!(conn.pending_count(), 0);
    }

    #[tokio::test]
    async fn a_timeout_sends_cancel_and_forgets_the_id() {
        let (conn, mut hook_rx, _hook_tx) = pair();
        let deadline = Deadline::after(Duration::from_millis(50));
        let r = conn.request("m", &json!({}), deadline).await;
        assert_eq!(r, Err(CallError::Timeout(Duration::from_millis(50))));
        let _req = hook_rx.next_line().await.unwrap().unwrap();
        let cancel: Value =
            serde_json::from_str(&hook_rx.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(cancel["method"], "$/cancel_request");
        assert_eq!(conn.pending_count(), 0);
    }

    #[tokio::test]
    async fn closing_fails_pending_and_later_calls() {
        let (conn, _hook_rx, _hook_tx) = pair();
        let c = conn.clone();
        let call = tokio::spawn(async move { c.request("m", &json!({}), far()).await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        conn.close(CallError::Crashed("signal 9".into()));
        assert_eq!(
            call.await.unwrap(),
            Err(CallError::Crashed("signal 9".into()))
        );
        let later = conn.request("m", &json!({}), far()).await;
        assert_eq!(later, Err(CallError::Crashed("signal 9".into())));
    }

    #[tokio::test]
    async fn an_answer_as_large_as_its_request_is_read_past_max_line() {
        let (conn, mut hook_rx, mut hook_tx) = pair(); // max_line 1024
        let c = conn.clone();
        let text = "x".repeat(20_000);
        let call = tokio::spawn(async move { c.request("m", &json!({"text": text}), far()).await });
        let line = hook_rx.next_line().await.unwrap().unwrap();
        let request: Value = serde_json::from_str(&line).unwrap();
        let redacted = request["params"]["text"]
            .as_str()
            .unwrap()
            .replace('x', "y");
        let reply = json!({"jsonrpc": "2.0", "id": request["id"], "result": {"text": redacted}});
        hook_tx
            .write_all(format!("{reply}\n").as_bytes())
            .await
            .unwrap();
        let answer = call.await.unwrap().unwrap();
        assert_eq!(answer["text"].as_str().map(str::len), Some(20_000));
        // Nothing in flight: the cap is max_line again.
        assert_eq!(conn.reply_cap.load(Ordering::Relaxed), 1024);
    }

    use crate::observe::log_budget::capture::Captured;

    /// Runs `feed` against a connection with the log captured; the log.
    async fn log_of(feed: &[u8]) -> String {
        let (log, _guard) = Captured::start();
        let (conn, _lines, mut hook_out) = pair();
        hook_out.write_all(feed).await.expect("write");
        drop(hook_out);
        conn.stdout_closed().await;
        log.text()
    }

    #[tokio::test]
    async fn a_stray_line_is_logged_as_its_length_and_a_redacted_prefix() {
        let secret = "sk-proj-abcdefghijklmnop1234";
        let line = format!(
            "debug: OPENAI_API_KEY={secret} {}TAIL-NOT-SHOWN\n",
            "x".repeat(100)
        );
        let text = log_of(line.as_bytes()).await;
        assert!(text.contains("non-JSON line"), "{text}");
        assert!(!text.contains(secret), "{text}");
        assert!(text.contains("debug: OPENAI_API_KEY=[REDACTED]"), "{text}");
        assert!(!text.contains("TAIL-NOT-SHOWN"), "{text}");
        assert!(
            text.contains(&format!("{} bytes", line.len() - 1)),
            "{text}"
        );
    }

    #[tokio::test]
    async fn what_a_hook_says_in_a_request_or_a_null_id_error_is_redacted() {
        let text = log_of(
            b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":1,\"message\":\"key AKIAIOSFODNN7EXAMPLE\"}}\n\
              {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ghp_abcdefghijklmnopqrstuvwxyz0123456789\"}\n",
        )
        .await;
        assert!(text.contains("null id"), "{text}");
        assert!(text.contains("sent a request"), "{text}");
        assert!(!text.contains("AKIAIOSFODNN7EXAMPLE"), "{text}");
        assert!(!text.contains("ghp_abcdefghij"), "{text}");
    }

    #[tokio::test]
    async fn a_flood_of_garbage_logs_a_few_lines_and_how_many_were_held_back() {
        let (log, _guard) = Captured::start();
        let (conn, _lines, mut hook_out) = pair();
        for i in 0..10_000 {
            hook_out
                .write_all(format!("garbage {i}\n").as_bytes())
                .await
                .expect("write");
        }
        // A call still works through the flood.
        let params = json!({});
        let call = conn.request("hook.before_tool", &params, far());
        hook_out
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n")
            .await
            .expect("write");
        assert_eq!(call.await, Ok(json!({})));
        drop(hook_out);
        conn.stdout_closed().await;
        let text = log.text();
        let warnings: Vec<&str> = text.lines().filter(|l| l.contains("WARN")).collect();
        assert_eq!(
            warnings.len(),
            crate::observe::log_budget::PER_WINDOW as usize + 1,
            "{text}"
        );
        assert!(
            warnings[warnings.len() - 1]
                .contains("9990 more warnings about this hook's output were held back"),
            "{text}"
        );
    }

    #[tokio::test]
    async fn draining_a_flood_stops_after_its_byte_budget() {
        let (conn, _lines, mut hook_out) = pair();
        let flood = tokio::spawn(async move {
            let line = [b'x'; 1023]
                .iter()
                .chain(b"\n")
                .copied()
                .collect::<Vec<u8>>();
            while hook_out.write_all(&line).await.is_ok() {}
        });
        let begun = Instant::now();
        assert!(conn.drain(Duration::from_secs(10)).await, "never ended");
        assert!(begun.elapsed() < Duration::from_secs(5));
        flood.abort();
    }
}

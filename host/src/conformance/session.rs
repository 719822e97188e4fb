//! The hook under test and the raw lines it writes. The hook is spawned
//! alone and read with the protocol crate's [`LineReader`] only for
//! framing: every line is kept, so what the host's forgiving reader would
//! drop (noise, answers to nothing, over-long lines) is seen and reported.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use hookhost_protocol::envelope::Message;
use hookhost_protocol::framing::{Line, LineReader};
use serde_json::{Value, json};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::mpsc;

use super::Options;
use super::runner::End;
use crate::config::ProcessConfig;
use crate::transport::spawn::{self as process, Pipes, Running, SpawnError};

/// The longest line kept whole; longer ones are reported by size.
const MAX_LINE: usize = 64 * 1024 * 1024;

/// What the stdout reader task hands the session.
enum Event {
    Line(Vec<u8>),
    TooLong(usize),
}

/// A raw session with the hook under test.
pub(super) struct Session {
    running: Running,
    stdin: Option<ChildStdin>,
    /// The last lines of the hook's stderr, quoted when it dies.
    stderr: process::StderrTail,
    lines: mpsc::UnboundedReceiver<Event>,
    timeout: Duration,
    /// Lines on stdout that were not JSON-RPC messages.
    garbage: Vec<String>,
    /// Messages that answered nothing we asked (no id, unknown id, ...).
    stray: Vec<Stray>,
    /// Ids whose answer may come late without being unsolicited: the
    /// requests cancelled by `$/cancel_request`.
    late_ok: Vec<Value>,
    /// Set once the hook stopped answering, so later checks fail at once
    /// instead of each waiting out the timeout.
    unresponsive: Option<String>,
}

/// Starts the hook from `opts` in `dir`. The one place the checker spawns,
/// so a change to the spawn seam is a change here only.
fn spawn_hook(opts: &Options, dir: &Path) -> Result<(Running, Pipes), SpawnError> {
    let mut config = ProcessConfig::new(opts.command.clone(), Vec::new());
    config.env = opts.env.iter().cloned().collect();
    process::spawn(&crate::supervise::process::spawn_spec(&config, dir))
}

/// Forwards every non-blank stdout line (or an over-long line's size)
/// until EOF or a read error.
async fn read_stdout(stdout: ChildStdout, tx: mpsc::UnboundedSender<Event>) {
    let mut reader = LineReader::new(BufReader::new(stdout), MAX_LINE);
    let mut buf = Vec::new();
    loop {
        let ev = match reader.next(&mut buf).await {
            Ok(Line::Complete) if buf.iter().all(u8::is_ascii_whitespace) => continue,
            Ok(Line::Complete) => Event::Line(std::mem::take(&mut buf)),
            Ok(Line::TooLong(n)) => Event::TooLong(n),
            Ok(Line::Eof) | Err(_) => return,
        };
        if tx.send(ev).is_err() {
            return;
        }
    }
}

impl Session {
    /// Spawns the hook in the current directory and starts reading its
    /// stdout and draining its stderr.
    pub(super) fn start(opts: &Options) -> Result<Session, SpawnError> {
        let dir = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let (running, pipes) = spawn_hook(opts, &dir)?;
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(read_stdout(pipes.stdout, tx));
        let stderr = process::StderrTail::default();
        tokio::spawn(process::drain_stderr(
            "conformance".into(),
            pipes.stderr,
            stderr.clone(),
        ));
        Ok(Session {
            running,
            stdin: Some(pipes.stdin),
            stderr,
            lines: rx,
            timeout: opts.timeout,
            garbage: Vec::new(),
            stray: Vec::new(),
            late_ok: Vec::new(),
            unresponsive: None,
        })
    }

    /// Writes one line (a newline is added), unless the hook already
    /// stopped answering.
    pub(super) async fn send(&mut self, line: &str) -> Result<(), String> {
        if let Some(why) = &self.unresponsive {
            return Err(format!("skipped: {why}"));
        }
        let r = self.write_line(line).await;
        if let Err(why) = &r {
            self.unresponsive = Some(format!("the hook stopped reading earlier ({why})"));
        }
        r
    }

    async fn write_line(&mut self, line: &str) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("stdin already closed")?;
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line.as_bytes());
        buf.push(b'\n');
        tokio::time::timeout(self.timeout, stdin.write_all(&buf))
            .await
            .map_err(|_| {
                format!(
                    "the hook did not read its stdin within {} ms",
                    self.timeout.as_millis()
                )
            })?
            .map_err(|e| format!("writing to the hook failed: {e}"))
    }

    /// Sends a request without waiting for its answer.
    pub(super) async fn send_request(
        &mut self,
        id: &Value,
        method: &str,
        params: &Value,
    ) -> Result<(), String> {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        )
        .await
    }

    /// Sends a notification (no id, so no answer is due).
    pub(super) async fn notify(&mut self, method: &str, params: &Value) -> Result<(), String> {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string())
            .await
    }

    /// Sends a request and waits for its answer (the whole response).
    pub(super) async fn call(
        &mut self,
        id: Value,
        method: &str,
        params: &Value,
    ) -> Result<Value, String> {
        self.send_request(&id, method, params).await?;
        let mut got = self.collect(std::slice::from_ref(&id)).await?;
        got.remove(&id.to_string())
            .ok_or_else(|| "no answer".to_string())
    }

    /// Reads until a response for each id in `ids` has arrived; everything
    /// else that arrives is recorded as stray or garbage. A failure marks
    /// the hook unresponsive, so the runner restarts it before the next
    /// check instead of every later call waiting out the timeout.
    pub(super) async fn collect(
        &mut self,
        ids: &[Value],
    ) -> Result<HashMap<String, Value>, String> {
        if let Some(why) = &self.unresponsive {
            return Err(format!("skipped: {why}"));
        }
        let r = self.collect_inner(ids).await;
        if let Err(why) = &r {
            self.unresponsive = Some(format!("the hook stopped answering earlier ({why})"));
        }
        r
    }

    async fn collect_inner(&mut self, ids: &[Value]) -> Result<HashMap<String, Value>, String> {
        let deadline = Instant::now() + self.timeout;
        let want: BTreeSet<String> = ids.iter().map(Value::to_string).collect();
        let mut got: HashMap<String, Value> = HashMap::new();
        while got.len() < want.len() {
            let missing = want.len() - got.len();
            match self.next_event(deadline, missing, want.len()).await? {
                Event::Line(line) => self.file_line(&line, &want, &mut got),
                Event::TooLong(n) => self.garbage.push(format!("a {n}-byte line")),
            }
        }
        Ok(got)
    }

    /// The next stdout event before `deadline`, or why none came.
    async fn next_event(
        &mut self,
        deadline: Instant,
        missing: usize,
        total: usize,
    ) -> Result<Event, String> {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, self.lines.recv()).await {
            Ok(Some(ev)) => Ok(ev),
            Ok(None) => Err(format!(
                "the hook closed stdout with {missing} of {total} answers missing{}",
                self.death_note().await
            )),
            Err(_) => Err(format!(
                "{missing} of {total} answers missing after {} ms",
                self.timeout.as_millis()
            )),
        }
    }

    /// How the hook ended, once its stdout closed: its exit status and
    /// the last line of its stderr (a traceback's last line says why).
    async fn death_note(&mut self) -> String {
        let status = tokio::time::timeout(Duration::from_millis(500), self.running.wait()).await;
        // Let the stderr reader take in what the hook wrote before exiting.
        tokio::time::sleep(Duration::from_millis(20)).await;
        let tail = self.stderr.text();
        let last = tail.lines().rev().find(|l| !l.trim().is_empty());
        match (status, last) {
            (Ok(status), Some(line)) => {
                format!("; the hook ended ({status}), its stderr ends: {line}")
            }
            (Ok(status), None) => format!("; the hook ended ({status})"),
            (Err(_), _) => String::new(),
        }
    }

    /// Files one line: an awaited answer goes to `got` (the first one per
    /// id), any other message is stray, anything else is garbage.
    fn file_line(
        &mut self,
        line: &[u8],
        want: &BTreeSet<String>,
        got: &mut HashMap<String, Value>,
    ) {
        let Ok(value) = serde_json::from_slice::<Value>(line) else {
            self.garbage.push(snippet(line));
            return;
        };
        match Message::from_value(value.clone()) {
            Ok(Message::Response(_)) => {
                // The id as written: `null` (an answer to an unreadable
                // line) is kept apart from an absent one.
                let id = value.get("id").cloned();
                match id.as_ref().filter(|id| !id.is_null()).map(Value::to_string) {
                    Some(k) if want.contains(&k) && !got.contains_key(&k) => {
                        got.insert(k, value);
                    }
                    _ => self.stray.push(Stray::new(id, line)),
                }
            }
            Ok(_) => self.stray.push(Stray::new(None, line)),
            Err(_) => self.garbage.push(snippet(line)),
        }
    }

    /// Lets `id`'s answer arrive late without counting as unsolicited: a
    /// cancelled request may still be answered (spec §5.8).
    pub(super) fn allow_late(&mut self, id: Value) {
        self.late_ok.push(id);
    }

    /// Where the stray messages and garbage lines end now; with
    /// [`Session::take_since`], what a single check caused.
    pub(super) fn mark(&self) -> Mark {
        Mark {
            stray: self.stray.len(),
            garbage: self.garbage.len(),
        }
    }

    /// Takes out the unsolicited messages and garbage lines that arrived
    /// after `mark`, so a robustness check answers for them instead of a
    /// required one. Unsolicited messages come first.
    pub(super) fn take_since(&mut self, mark: Mark) -> Vec<String> {
        let strays = self.stray.split_off(mark.stray.min(self.stray.len()));
        let garbage = self.garbage.split_off(mark.garbage.min(self.garbage.len()));
        strays
            .into_iter()
            .filter(|s| !s.allowed(&self.late_ok))
            .map(|s| s.line)
            .chain(garbage)
            .collect()
    }

    /// Stray messages, less the ones the protocol allows, possibly late:
    /// error replies with a null id (the answer to a malformed line) and a
    /// cancelled request's own answer (a result or -32800).
    pub(super) fn unsolicited(&self) -> Vec<String> {
        self.stray
            .iter()
            .filter(|s| !s.allowed(&self.late_ok))
            .map(|s| s.line.clone())
            .collect()
    }

    /// Lines on stdout that were not JSON-RPC messages, in arrival order.
    pub(super) fn garbage(&self) -> &[String] {
        &self.garbage
    }

    /// How the hook is now: answering, exited, or running but mute (a
    /// call to it went unanswered or its stdin stopped being read).
    pub(super) fn end(&mut self) -> End {
        if self.running.has_exited() {
            End::Died
        } else if self.unresponsive.is_some() {
            End::Mute
        } else {
            End::Alive
        }
    }

    /// Lets late output arrive, so that strays are seen.
    pub(super) async fn settle(&mut self, within: Duration) {
        let until = Instant::now() + within;
        while let Ok(Some(ev)) = tokio::time::timeout(
            until.saturating_duration_since(Instant::now()),
            self.lines.recv(),
        )
        .await
        {
            match ev {
                Event::Line(l) => match serde_json::from_slice::<Value>(&l) {
                    Ok(v) => self.stray.push(Stray::new(v.get("id").cloned(), &l)),
                    Err(_) => self.garbage.push(snippet(&l)),
                },
                Event::TooLong(n) => self.garbage.push(format!("a {n}-byte line")),
            }
        }
    }

    /// Closes the hook's stdin and waits up to `within` for it to exit;
    /// `None` when it is still running.
    pub(super) async fn close_and_wait(&mut self, within: Duration) -> Option<ExitStatus> {
        self.stdin = None;
        tokio::time::timeout(within, self.running.wait()).await.ok()
    }

    /// Kills the hook (and its process group) at once.
    pub(super) async fn kill(&mut self) {
        self.running.kill().await;
    }

    /// Stops the hook, with `grace` before the kill.
    pub(super) async fn stop(&mut self, grace: Duration) {
        self.running.stop(grace).await;
    }
}

/// A point in the hook's output, from [`Session::mark`].
#[derive(Debug, Clone, Copy)]
pub(super) struct Mark {
    stray: usize,
    garbage: usize,
}

/// A message that answered nothing awaited, with its id when it has one.
struct Stray {
    id: Option<Value>,
    line: String,
}

impl Stray {
    fn new(id: Option<Value>, line: &[u8]) -> Self {
        Stray {
            id,
            line: snippet(line),
        }
    }

    /// Whether the protocol allows it: an error for an unreadable request
    /// (`"id": null`) or the late answer to a cancelled request.
    fn allowed(&self, late_ok: &[Value]) -> bool {
        match &self.id {
            Some(Value::Null) => true,
            Some(id) => late_ok.contains(id),
            None => false,
        }
    }
}

/// The first 120 bytes of `line`, for a report detail.
fn snippet(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(&line[..line.len().min(120)]).into_owned();
    if line.len() > 120 {
        format!("{text}…")
    } else {
        text
    }
}

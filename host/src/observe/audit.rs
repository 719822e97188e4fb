//! The audit log: one JSON line per hook execution, appended to the file
//! named by `[hooks.audit] path`.
//!
//! The chain driver must never wait on a disk, so [`AuditLog::record`] only
//! queues the record on an unbounded channel. One writer task drains the
//! queue in batches; each batch's redaction, formatting and file I/O run on
//! tokio's blocking pool, not on the runtime's workers, and the buffered
//! lines are flushed whenever the queue is momentarily empty, so a burst of
//! records costs a few syscalls and a quiet log is always up to date on
//! disk. [`AuditLog::close`] drains and flushes everything queued, so a
//! clean shutdown loses nothing. The channel is unbounded on purpose: a
//! bounded one would have to either block the caller or drop records, and
//! an audit log that silently drops records under load is not an audit log.
//!
//! Reasons and errors come from hooks and tools, so they pass through
//! [`crate::observe::redact::redact`] before anything is written: a key a tool
//! printed into an error message must not end up in a log file.

use std::borrow::Cow;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime};

use hookhost_protocol::Stage;
use serde::Serialize;

use super::chain::Link;
use super::decision::DecisionRecord;
use super::usage::ModelUsage;
use tokio::sync::{mpsc, watch};

use crate::observe::redact::redact;

/// The longest `reason` or `error` written, in characters; longer ones are
/// cut and end in [`ELLIPSIS`]. Hooks may return whole tool outputs as
/// reasons, and one runaway hook must not bloat the log.
pub(crate) const MAX_TEXT_CHARS: usize = 256;

/// Appended to a cut `reason` or `error`, so a reader knows there was more.
const ELLIPSIS: char = '…';

/// Buffer size of the file writer: large enough that a burst of records
/// goes out in a few writes.
const WRITE_BUFFER: usize = 64 * 1024;

/// Most records handed to the blocking pool at once, so that a long burst
/// is written (and its memory released) as it arrives rather than at its end.
const MAX_BATCH: usize = 1024;

/// One hook execution, as the chain driver reports it.
///
/// It carries raw values (times, the stage enum, unredacted text) so the
/// caller does no formatting or redaction on its path; the writer task does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AuditRecord {
    /// When the call started.
    pub ts: SystemTime,
    /// The hook's configured name.
    pub hook: String,
    /// The stage the hook was called for.
    pub stage: Stage,
    /// One id per stage run, shared by every hook of that run, so the
    /// records of one chain can be grouped.
    pub request_id: String,
    /// The agent's session (`meta.session_key`, which every dialect's
    /// session id becomes), when the call carried one: one hookhost serves
    /// every session of every agent, and a log that cannot tell them apart
    /// cannot answer "who allowed this".
    pub session: Option<String>,
    /// Who the call came from: `meta.tenant_id`, `user_id` and `agent_id`
    /// (a gateway's caller, from the credential), when any is set.
    pub who: Option<Arc<Who>>,
    /// How long the call took, from sending the request to having the
    /// answer (or giving up).
    pub duration: Duration,
    /// What the hook decided or what happened to the call: `"continue"`,
    /// `"modify"`, `"deny_tool"`, `"approved"`, `"refused"`, `"error"`,
    /// `"timeout"`, `"skipped"`, ...
    pub outcome: String,
    /// The hook's reason, if it gave one; redacted and cut when written.
    pub reason: Option<String>,
    /// How the call failed, if it did; redacted and cut when written.
    pub error: Option<String>,
    /// A prompt hook's model, tokens and whether the cache answered.
    pub model: Option<ModelUsage>,
    /// Set on the one record per answered event that says what decided it
    /// (`"kind": "decision"`); `None` on a hook's record.
    pub decision: Option<Box<DecisionRecord>>,
}

/// The caller of a stage run, as its `meta` says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Who {
    pub tenant: Option<String>,
    pub user: Option<String>,
    pub agent: Option<String>,
}

impl Who {
    /// From a stage's params; `None` when `meta` names no one.
    pub(crate) fn of(params: &serde_json::Value) -> Option<Arc<Who>> {
        let meta = params.get("meta")?;
        let get = |k: &str| {
            meta.get(k)
                .and_then(serde_json::Value::as_str)
                .map(str::to_string)
        };
        let who = Who {
            tenant: get("tenant_id"),
            user: get("user_id"),
            agent: get("agent_id"),
        };
        (who != Who::default()).then(|| Arc::new(who))
    }
}

/// A cheap-to-clone handle on one audit file; every clone feeds the same
/// writer task. `record` never blocks and never fails the caller, because
/// auditing must not slow down or break the agent it audits.
#[derive(Clone)]
pub(crate) struct AuditLog {
    inner: Arc<Inner>,
}

struct Inner {
    /// `None` once closed. The only sender: dropping it is what tells the
    /// writer task to drain the queue and stop.
    queue: RwLock<Option<mpsc::UnboundedSender<AuditRecord>>>,
    /// Becomes `true` when the writer task has flushed and ended; its sender
    /// is dropped without sending if the task is torn down with the runtime.
    done: watch::Receiver<bool>,
    counts: Arc<Counts>,
    path: PathBuf,
}

#[derive(Default)]
struct Counts {
    written: AtomicU64,
    lost: AtomicU64,
}

impl Counts {
    fn lose(&self, n: u64) {
        if n > 0 {
            self.lost.fetch_add(n, Ordering::Relaxed);
        }
    }
}

impl AuditLog {
    /// Opens (creates or appends to) `path` and starts the writer task on
    /// the current tokio runtime. The file is opened here, not in the task,
    /// so a bad path is reported at startup rather than lost in a log line.
    ///
    /// The parent folder must exist (an audit log should not invent folders
    /// where a typo points); the error then names the path and the folder.
    /// A new file is created with mode 0600, and a symlink is refused.
    /// Called outside a tokio runtime, this is an error too, not a panic.
    pub(crate) fn open(path: &Path) -> io::Result<AuditLog> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|e| {
            io::Error::other(format!(
                "audit log {}: needs a tokio runtime to write from: {e}",
                path.display()
            ))
        })?;
        let file = open_file(path)?;
        let (tx, rx) = mpsc::unbounded_channel();
        let (done_tx, done) = watch::channel(false);
        let counts = Arc::new(Counts::default());
        let writer = Writer {
            queue: rx,
            counts: counts.clone(),
        };
        let sink = Sink::new(file, path.to_path_buf(), counts.clone());
        runtime.spawn(async move {
            writer.run(sink).await;
            done_tx.send_replace(true);
        });
        Ok(AuditLog {
            inner: Arc::new(Inner {
                queue: RwLock::new(Some(tx)),
                done,
                counts,
                path: path.to_path_buf(),
            }),
        })
    }

    /// Queues one record (unbounded channel: a clean shutdown loses
    /// nothing). After `close`, records are dropped and counted in
    /// [`AuditLog::lost`], so a late hook call cannot reopen the log.
    pub(crate) fn record(&self, record: AuditRecord) {
        // A poisoned lock only means a panic elsewhere while it was held;
        // the `Option` inside is still consistent.
        let queue = self.inner.queue.read().unwrap_or_else(|p| p.into_inner());
        let sent = match queue.as_ref() {
            Some(tx) => tx.send(record).is_ok(),
            None => false,
        };
        drop(queue);
        if !sent {
            self.inner.counts.lose(1);
        }
    }

    /// Stops accepting records, writes and flushes everything queued, and
    /// waits for the writer task. Idempotent; safe to call from several
    /// clones, and every caller returns only once the file is flushed.
    /// A `close` that is itself cancelled does not stop the flush.
    pub(crate) async fn close(&self) {
        let sender = self
            .inner
            .queue
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        // Dropping the only sender ends the writer's queue after what is
        // already in it.
        drop(sender);
        let mut done = self.inner.done.clone();
        // An error means the task is gone without saying so (torn down with
        // the runtime); there is nothing left to wait for then.
        let _ = done.wait_for(|finished| *finished).await;
    }

    /// How many records reached the file (written and flushed), for stats
    /// and tests.
    pub(crate) fn written(&self) -> u64 {
        self.inner.counts.written.load(Ordering::Relaxed)
    }

    /// How many records were lost: write errors, or recorded after close.
    /// Together with [`AuditLog::written`] it accounts for every record once
    /// the log is closed.
    pub(crate) fn lost(&self) -> u64 {
        self.inner.counts.lost.load(Ordering::Relaxed)
    }
}

impl fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuditLog")
            .field("path", &self.inner.path)
            .field("written", &self.written())
            .field("lost", &self.lost())
            .finish()
    }
}

/// Opens the file for appending. A new file gets mode 0600: the records
/// hold what hooks and tools said, which is nobody else's business (an
/// existing file keeps the mode its owner gave it). A symlink is refused
/// (`O_NOFOLLOW`) rather than followed, so that whoever can write the
/// folder cannot point the log at a file of their choosing.
fn open_file(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| open_error(path, e))
}

/// The open error, naming the file and, when that is the cause, the
/// missing folder or the symlink.
fn open_error(path: &Path, e: io::Error) -> io::Error {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    if e.raw_os_error() == Some(libc::ELOOP) {
        return io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "audit log {}: is a symbolic link, which hookhost does not follow; name the real file in `path`",
                path.display()
            ),
        );
    }
    match parent {
        Some(dir) if e.kind() == io::ErrorKind::NotFound && !dir.is_dir() => io::Error::new(
            e.kind(),
            format!(
                "audit log {}: its folder {} does not exist ({e})",
                path.display(),
                dir.display()
            ),
        ),
        _ => io::Error::new(
            e.kind(),
            format!("audit log {}: cannot open: {e}", path.display()),
        ),
    }
}

/// The async side of the writer: takes records off the queue in batches
/// and hands each batch to the blocking pool.
struct Writer {
    queue: mpsc::UnboundedReceiver<AuditRecord>,
    counts: Arc<Counts>,
}

impl Writer {
    async fn run(mut self, mut sink: Sink) {
        while let Some(first) = self.queue.recv().await {
            let mut batch = Vec::with_capacity(MAX_BATCH.min(self.queue.len() + 1));
            batch.push(first);
            while batch.len() < MAX_BATCH {
                match self.queue.try_recv() {
                    Ok(record) => batch.push(record),
                    Err(_) => break,
                }
            }
            // Flush when nothing else is waiting; otherwise the next batch
            // follows at once and the buffer fills (and writes) by itself.
            let flush = self.queue.is_empty();
            let size = batch.len() as u64;
            let work = tokio::task::spawn_blocking(move || {
                sink.write_batch(batch, flush);
                sink
            });
            match work.await {
                Ok(back) => sink = back,
                Err(e) => {
                    // A panic in the batch (a bug) or the runtime shutting
                    // down; the file went with it. Count this batch; the
                    // queue's rest is counted when the writer drops.
                    tracing::error!(
                        target: "hookhost::audit",
                        error = %e,
                        "audit writer failed; further records are lost"
                    );
                    self.counts.lose(size);
                    return;
                }
            }
        }
        // Every sender is gone: `close`, or the last handle dropped.
        let work = tokio::task::spawn_blocking(move || sink.flush());
        if let Err(e) = work.await {
            tracing::error!(target: "hookhost::audit", error = %e, "audit writer failed at close");
        }
    }
}

impl Drop for Writer {
    /// Whatever is still queued when the writer ends early (torn down with
    /// the runtime, or after a failure) is counted, not silently forgotten.
    fn drop(&mut self) {
        self.queue.close();
        let mut left = 0;
        while self.queue.try_recv().is_ok() {
            left += 1;
        }
        self.counts.lose(left);
    }
}

/// The blocking side of the writer: the buffered file and the accounting
/// of lines not yet known to be on disk.
struct Sink {
    /// Always `Some` between calls; an `Option` only so that a failed
    /// buffer can be swapped for an empty one around the same file.
    out: Option<BufWriter<File>>,
    path: PathBuf,
    counts: Arc<Counts>,
    /// Lines handed to the buffer since the last successful flush.
    unflushed: u64,
    /// Records lost since the last successful flush; set while writes fail,
    /// so that an error is logged once and not once per record.
    failing: Option<u64>,
    line: Vec<u8>,
    /// One record's JSON before its hash is sealed on.
    body: Vec<u8>,
    /// This writer's place in its hash chain.
    link: Link,
}

impl Sink {
    fn new(file: File, path: PathBuf, counts: Arc<Counts>) -> Sink {
        Sink {
            out: Some(BufWriter::with_capacity(WRITE_BUFFER, file)),
            path,
            counts,
            unflushed: 0,
            failing: None,
            line: Vec::with_capacity(512),
            body: Vec::with_capacity(512),
            link: Link::start(),
        }
    }

    fn write_batch(&mut self, batch: Vec<AuditRecord>, flush: bool) {
        for record in &batch {
            self.line.clear();
            self.body.clear();
            let seq = self.link.next();
            let encoded = encode_line(&mut self.body, record, (&self.link, seq));
            if encoded.is_ok() {
                self.link.seal(&self.body, &mut self.line);
            }
            if let Err(e) = encoded {
                // Cannot happen for these plain fields; if it does, the
                // record is lost, not the writer.
                self.counts.lose(1);
                tracing::error!(target: "hookhost::audit", error = %e, "cannot encode an audit record");
                continue;
            }
            let result = match self.out.as_mut() {
                Some(out) => out.write_all(&self.line),
                None => Err(io::Error::other("audit writer has no file")),
            };
            match result {
                Ok(()) => self.unflushed += 1,
                Err(e) => self.fail(e, 1),
            }
        }
        if flush {
            self.flush();
        }
    }

    fn flush(&mut self) {
        let result = match self.out.as_mut() {
            Some(out) => out.flush(),
            None => Err(io::Error::other("audit writer has no file")),
        };
        match result {
            Ok(()) => {
                self.counts
                    .written
                    .fetch_add(self.unflushed, Ordering::Relaxed);
                // Only a flush that carried lines proves the file works again.
                if self.unflushed > 0 {
                    if let Some(lost) = self.failing.take() {
                        tracing::warn!(
                            target: "hookhost::audit",
                            path = %self.path.display(),
                            lost,
                            "audit log is written again after write errors"
                        );
                    }
                }
                self.unflushed = 0;
            }
            Err(e) => self.fail(e, 0),
        }
    }

    /// A write or flush failed: every line not known to be on disk counts
    /// as lost (some may have reached the file; claiming fewer losses than
    /// real would be worse), and the buffer is dropped so the same bytes
    /// are not retried and counted twice.
    fn fail(&mut self, e: io::Error, extra: u64) {
        // Which of the unflushed lines reached the file is unknown: the
        // records after this start a new chain, so the old one ends where
        // the file ends and `audit verify` reads both as whole.
        self.link = Link::start();
        let n = self.unflushed + extra;
        self.counts.lose(n);
        self.unflushed = 0;
        if let Some(out) = self.out.take() {
            let (file, _discarded) = out.into_parts();
            self.out = Some(BufWriter::with_capacity(WRITE_BUFFER, file));
        }
        match &mut self.failing {
            Some(lost) => *lost += n,
            None => {
                self.failing = Some(n);
                tracing::error!(
                    target: "hookhost::audit",
                    path = %self.path.display(),
                    error = %e,
                    "cannot write the audit log; records are lost until writes succeed again"
                );
            }
        }
    }
}

/// The serialized line, fields in the documented order.
#[derive(Serialize)]
struct Line<'a> {
    ts: String,
    writer: &'a str,
    seq: u64,
    prev: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    hook: &'a str,
    stage: &'static str,
    request_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    session: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tenant: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent: Option<&'a str>,
    duration_us: u64,
    outcome: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tokens_in: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tokens_out: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cached: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    failed_open: Option<&'a [String]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    policy: Option<&'a str>,
}

/// Appends `record` as one compact JSON object and a newline to `buf`.
fn encode_line(
    buf: &mut Vec<u8>,
    record: &AuditRecord,
    (link, seq): (&Link, u64),
) -> serde_json::Result<()> {
    let who = record.who.as_deref();
    let decision = record.decision.as_deref();
    let line = Line {
        ts: hookhost_protocol::time::rfc3339(record.ts),
        writer: &link.writer,
        seq,
        prev: &link.prev,
        kind: decision.map(|_| "decision"),
        hook: &record.hook,
        stage: record.stage.as_str(),
        request_id: &record.request_id,
        session: record.session.as_deref().map(clean_text),
        tenant: who.and_then(|w| w.tenant.as_deref()),
        user: who.and_then(|w| w.user.as_deref()),
        agent: who.and_then(|w| w.agent.as_deref()),
        duration_us: u64::try_from(record.duration.as_micros()).unwrap_or(u64::MAX),
        outcome: &record.outcome,
        reason: record.reason.as_deref().map(clean_text),
        error: record.error.as_deref().map(clean_text),
        model: record.model.as_ref().map(|m| m.model.as_str()),
        tokens_in: record.model.as_ref().map(|m| m.tokens_in),
        tokens_out: record.model.as_ref().map(|m| m.tokens_out),
        cached: record.model.as_ref().map(|m| m.cached),
        failed_open: decision.map(|d| d.failed_open.as_slice()),
        policy: decision.and_then(|d| d.policy.as_deref()),
    };
    serde_json::to_writer(&mut *buf, &line)
}

/// Redacts, then cuts to [`MAX_TEXT_CHARS`] characters. Redaction comes
/// first so that a key straddling the cut is masked whole; cutting first
/// could leave a key prefix too short for the patterns to recognize.
fn clean_text(text: &str) -> Cow<'_, str> {
    let redacted = redact(text);
    match redacted.char_indices().nth(MAX_TEXT_CHARS) {
        None => redacted,
        Some((cut, _)) => {
            let mut out = String::with_capacity(cut + ELLIPSIS.len_utf8());
            out.push_str(&redacted[..cut]);
            out.push(ELLIPSIS);
            Cow::Owned(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use std::sync::atomic::AtomicUsize;
    use std::time::UNIX_EPOCH;

    /// A fresh folder per test, so parallel tests never share a file.
    fn temp_dir(name: &str) -> PathBuf {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "hookhost-audit-{}-{}-{name}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        dir
    }

    fn at(secs: u64, micros: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_micros(micros)
    }

    fn rec(hook: &str, request_id: &str, outcome: &str) -> AuditRecord {
        AuditRecord {
            ts: at(1_795_317_909, 123_456),
            hook: hook.into(),
            stage: Stage::BeforeTool,
            request_id: request_id.into(),
            session: None,
            who: None,
            duration: Duration::from_micros(412),
            outcome: outcome.into(),
            reason: None,
            error: None,
            model: None,
            decision: None,
        }
    }

    /// A line without its chain members (`writer`, `seq`, `prev` after
    /// `ts`, `hash` last), whose values differ from run to run.
    fn unchained(line: &str) -> String {
        let start = line.find(",\"writer\":").expect("writer");
        let end = line.find(",\"prev\":\"").expect("prev") + ",\"prev\":\"".len() + 64 + 1;
        let hash = line.rfind(",\"hash\":").expect("hash");
        format!("{}{}}}", &line[..start], &line[end..hash])
    }

    fn lines(path: &Path) -> Vec<String> {
        std::fs::read_to_string(path)
            .expect("read audit file")
            .lines()
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn text_is_redacted_then_cut_on_a_char_boundary() {
        // Short text is kept as is.
        assert_eq!(
            clean_text("rule `sudo` denies this"),
            "rule `sudo` denies this"
        );
        // Exactly the limit: not cut.
        let exact = "é".repeat(MAX_TEXT_CHARS);
        assert_eq!(clean_text(&exact), exact);
        // Over the limit: 256 characters and an ellipsis, cut between
        // two-byte characters without splitting one.
        let long = "é".repeat(300);
        let cut = clean_text(&long);
        assert_eq!(cut.chars().count(), MAX_TEXT_CHARS + 1);
        assert!(cut.ends_with("é…"));
        assert_eq!(cut, format!("{}…", "é".repeat(MAX_TEXT_CHARS)));
        // A key straddling the cut: no part of it survives.
        let key = "sk-proj-abcdefghijklmnop1234";
        let straddling = format!("{}{key} and more", "x".repeat(250));
        let cleaned = clean_text(&straddling);
        assert!(!cleaned.contains("sk-"), "{cleaned}");
        assert!(!cleaned.contains("abcdef"), "{cleaned}");
        assert_eq!(cleaned, format!("{}[REDAC…", "x".repeat(250)));
    }

    #[tokio::test]
    async fn lines_have_the_documented_format_and_key_order() {
        let dir = temp_dir("format");
        let path = dir.join("audit.jsonl");
        let log = AuditLog::open(&path).expect("open");
        log.record(AuditRecord {
            reason: Some("rule `sudo` denies this command".into()),
            session: Some("claude-7f3a".into()),
            ..rec("guard", "r-1", "deny_tool")
        });
        log.record(AuditRecord {
            stage: Stage::ApproveTool,
            duration: Duration::from_millis(3),
            ..rec("approval", "r-2", "approved")
        });
        log.record(AuditRecord {
            ts: at(951_782_400, 7),
            stage: Stage::AfterLlm,
            error: Some("timed out after 5000 ms".into()),
            reason: Some("a \"quoted\"\nreason".into()),
            ..rec("slow", "r-3", "timeout")
        });
        log.record(AuditRecord {
            model: Some(ModelUsage {
                model: "gpt-4o-mini".into(),
                tokens_in: 120,
                tokens_out: 9,
                cached: false,
            }),
            ..rec("judge", "r-4", "deny_tool")
        });
        log.close().await;
        let text = std::fs::read_to_string(&path).expect("read");
        let chain = crate::observe::chain::verify(text.as_bytes()).expect("read");
        assert_eq!(
            (chain.records, chain.writers.len(), chain.broken),
            (4, 1, None)
        );
        let plain: Vec<String> = lines(&path).iter().map(|l| unchained(l)).collect();
        assert_eq!(
            plain,
            [
                r#"{"ts":"2026-11-22T03:25:09.123456Z","hook":"guard","stage":"before_tool","request_id":"r-1","session":"claude-7f3a","duration_us":412,"outcome":"deny_tool","reason":"rule `sudo` denies this command"}"#,
                r#"{"ts":"2026-11-22T03:25:09.123456Z","hook":"approval","stage":"approve_tool","request_id":"r-2","duration_us":3000,"outcome":"approved"}"#,
                r#"{"ts":"2000-02-29T00:00:00.000007Z","hook":"slow","stage":"after_llm","request_id":"r-3","duration_us":412,"outcome":"timeout","reason":"a \"quoted\"\nreason","error":"timed out after 5000 ms"}"#,
                r#"{"ts":"2026-11-22T03:25:09.123456Z","hook":"judge","stage":"before_tool","request_id":"r-4","duration_us":412,"outcome":"deny_tool","model":"gpt-4o-mini","tokens_in":120,"tokens_out":9,"cached":false}"#,
            ]
        );
        assert_eq!((log.written(), log.lost()), (4, 0));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[tokio::test]
    async fn secrets_in_reason_and_error_do_not_reach_the_file() {
        let dir = temp_dir("redact");
        let path = dir.join("audit.jsonl");
        let log = AuditLog::open(&path).expect("open");
        let key = "sk-proj-abcdefghijklmnop1234";
        log.record(AuditRecord {
            reason: Some(format!("output had OPENAI_API_KEY={key}")),
            error: Some(format!("{} then Bearer abc.def.ghi", "y".repeat(400))),
            ..rec("redact", "r-1", "modify")
        });
        log.close().await;
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(!text.contains(key), "{text}");
        assert!(!text.contains("abcdefghijklmnop"), "{text}");
        let line: Value = serde_json::from_str(text.trim_end()).expect("json");
        assert_eq!(line["reason"], "output had OPENAI_API_KEY=[REDACTED]");
        let error = line["error"].as_str().expect("error is a string");
        assert_eq!(error.chars().count(), MAX_TEXT_CHARS + 1);
        assert_eq!(error, format!("{}…", "y".repeat(MAX_TEXT_CHARS)));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_thousand_concurrent_records_are_all_written_by_close() {
        let dir = temp_dir("burst");
        let path = dir.join("audit.jsonl");
        let log = AuditLog::open(&path).expect("open");
        let mut tasks = Vec::new();
        for t in 0..50 {
            let log = log.clone();
            tasks.push(tokio::spawn(async move {
                for i in 0..20 {
                    log.record(rec(&format!("hook-{t}"), &format!("r-{i}"), "continue"));
                    if i % 5 == 0 {
                        tokio::task::yield_now().await;
                    }
                }
            }));
        }
        for task in tasks {
            task.await.expect("recorder task");
        }
        log.close().await;
        let lines = lines(&path);
        assert_eq!(lines.len(), 1000);
        let mut seen = std::collections::HashSet::new();
        for line in &lines {
            let v: Value = serde_json::from_str(line).expect("every line is JSON");
            let key = (v["hook"].to_string(), v["request_id"].to_string());
            assert!(seen.insert(key), "duplicate line {line}");
        }
        assert_eq!(seen.len(), 1000);
        assert_eq!((log.written(), log.lost()), (1000, 0));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn close_racing_recorders_accounts_for_every_record() {
        let dir = temp_dir("race");
        let path = dir.join("audit.jsonl");
        let log = AuditLog::open(&path).expect("open");
        let mut tasks = Vec::new();
        for t in 0..8 {
            let log = log.clone();
            tasks.push(tokio::spawn(async move {
                for i in 0..200 {
                    log.record(rec(&format!("hook-{t}"), &format!("r-{i}"), "continue"));
                    tokio::task::yield_now().await;
                }
            }));
        }
        tokio::task::yield_now().await;
        log.close().await;
        for task in tasks {
            task.await.expect("recorder task");
        }
        // Whatever the interleaving: each record is written or lost, and
        // the file holds exactly the written ones.
        assert_eq!(log.written() + log.lost(), 1600);
        assert_eq!(lines(&path).len() as u64, log.written());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn records_after_close_are_lost_and_close_is_idempotent() {
        let dir = temp_dir("closed");
        let path = dir.join("audit.jsonl");
        let log = AuditLog::open(&path).expect("open");
        let other = log.clone();
        log.record(rec("guard", "r-1", "continue"));
        log.record(rec("guard", "r-2", "continue"));
        // Two clones close at once; both return with the file complete.
        tokio::join!(log.close(), other.close());
        assert_eq!(lines(&path).len(), 2);
        log.record(rec("guard", "r-3", "continue"));
        other.record(rec("guard", "r-4", "continue"));
        log.close().await;
        assert_eq!((log.written(), log.lost()), (2, 2));
        assert_eq!((other.written(), other.lost()), (2, 2));
        assert_eq!(lines(&path).len(), 2);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[tokio::test]
    async fn an_existing_file_is_appended_to() {
        let dir = temp_dir("append");
        let path = dir.join("audit.jsonl");
        std::fs::write(&path, "{\"earlier\":true}\n").expect("seed");
        let first = AuditLog::open(&path).expect("open");
        first.record(rec("guard", "r-1", "continue"));
        first.close().await;
        let second = AuditLog::open(&path).expect("reopen");
        second.record(rec("guard", "r-2", "continue"));
        second.close().await;
        let lines = lines(&path);
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0], "{\"earlier\":true}");
        assert!(lines[1].contains("\"request_id\":\"r-1\""), "{}", lines[1]);
        assert!(lines[2].contains("\"request_id\":\"r-2\""), "{}", lines[2]);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[tokio::test]
    async fn a_new_file_is_readable_by_its_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = temp_dir("mode");
        let path = dir.join("audit.jsonl");
        let log = AuditLog::open(&path).expect("open");
        log.close().await;
        let mode = std::fs::metadata(&path).expect("stat").permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[tokio::test]
    async fn a_symlink_is_refused_with_a_clear_error() {
        let dir = temp_dir("symlink");
        let target = dir.join("elsewhere");
        std::fs::write(&target, "").expect("target");
        let path = dir.join("audit.jsonl");
        std::os::unix::fs::symlink(&target, &path).expect("symlink");
        let err = AuditLog::open(&path).expect_err("a symlink must be refused");
        let message = err.to_string();
        assert!(message.contains(&path.display().to_string()), "{message}");
        assert!(message.contains("symbolic link"), "{message}");
        assert_eq!(std::fs::read(&target).expect("target").len(), 0);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[tokio::test]
    async fn a_missing_folder_is_a_clear_error() {
        let dir = temp_dir("missing");
        let path = dir.join("no-such-folder").join("audit.jsonl");
        let err = AuditLog::open(&path).expect_err("the folder does not exist");
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        let message = err.to_string();
        assert!(message.contains(&path.display().to_string()), "{message}");
        assert!(message.contains("does not exist"), "{message}");
        assert!(!path.parent().expect("parent").exists());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn opening_outside_a_runtime_is_an_error_not_a_panic() {
        let dir = temp_dir("no-runtime");
        let err = AuditLog::open(&dir.join("audit.jsonl")).expect_err("no runtime");
        assert!(err.to_string().contains("tokio runtime"), "{err}");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn write_errors_are_counted_as_lost_without_panicking() {
        // Every write to /dev/full fails with ENOSPC.
        let log = AuditLog::open(Path::new("/dev/full")).expect("open /dev/full");
        for i in 0..5 {
            log.record(rec("guard", &format!("r-{i}"), "continue"));
        }
        log.close().await;
        assert_eq!((log.written(), log.lost()), (0, 5));
    }

    #[tokio::test]
    async fn a_quiet_queue_is_flushed_without_waiting_for_close() {
        let dir = temp_dir("quiet");
        let path = dir.join("audit.jsonl");
        let log = AuditLog::open(&path).expect("open");
        log.record(rec("guard", "r-1", "continue"));
        // The writer flushes as soon as the queue is empty; the generous
        // bound only keeps a broken writer from hanging the test.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        // `written` counts after the flush returns, so the file has it then.
        while log.written() == 0 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the record never reached the file before close"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(lines(&path).len(), 1);
        log.close().await;
        let _ = std::fs::remove_dir_all(dir);
    }

    #[tokio::test]
    async fn dropping_every_handle_still_flushes_the_queue() {
        let dir = temp_dir("dropped");
        let path = dir.join("audit.jsonl");
        let log = AuditLog::open(&path).expect("open");
        let mut done = log.inner.done.clone();
        for i in 0..10 {
            log.record(rec("guard", &format!("r-{i}"), "continue"));
        }
        drop(log);
        done.wait_for(|finished| *finished)
            .await
            .expect("writer ends on its own");
        assert_eq!(lines(&path).len(), 10);
        let _ = std::fs::remove_dir_all(dir);
    }
}

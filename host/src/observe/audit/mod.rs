//! The audit log: one record per hook execution and per answered event,
//! to the store `[hooks.audit]` names (a JSONL file, SQLite or
//! PostgreSQL; see [`store`]).
//!
//! The chain driver must never wait on a disk or a database, so
//! [`AuditLog::record`] only queues the record. The queue is bounded
//! (`[hooks.audit] queue`, [`DEFAULT_QUEUE`] records): when the store
//! cannot keep up, or is down for longer than the queue lasts, a record
//! that does not fit is dropped and counted, and the drop is logged and
//! reported in [`AuditFigures`] (`status`, `/metrics`), never silent. One
//! writer task drains the queue in batches; each batch's redaction,
//! formatting, hashing and I/O run on tokio's blocking pool. A file is
//! flushed whenever the queue is momentarily empty; a database takes each
//! batch in one transaction, retried while it is unreachable.
//! [`AuditLog::close`] drains and writes everything queued, so a clean
//! shutdown loses nothing.
//!
//! Reasons and errors come from hooks and tools, so they pass through
//! [`crate::observe::redact::redact`] before anything is written: a key a tool
//! printed into an error message must not end up in a log.

#[cfg(any(feature = "audit-sqlite", feature = "audit-postgres"))]
mod db;
mod file;
mod line;
#[cfg(feature = "audit-postgres")]
mod postgres;
mod read;
#[cfg(feature = "audit-sqlite")]
mod sqlite;
pub(crate) mod store;

use std::fmt;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime};

use hookhost_protocol::Stage;
use tokio::sync::{mpsc, watch};

use super::decision::DecisionRecord;
use super::log_budget::LogBudget;
use super::usage::ModelUsage;
#[cfg(any(feature = "audit-sqlite", feature = "audit-postgres"))]
use db::DbOut;
use file::FileOut;
use line::Encoder;
pub use read::AuditQuery;
pub use store::{AuditError, AuditStore, masked};

/// The queue's default size, in records: about a minute of a busy
/// gateway's records, a few tens of MiB at most.
pub const DEFAULT_QUEUE: usize = 65_536;

/// Most records handed to the blocking pool at once, so that a long burst
/// is written (and its memory released) as it arrives rather than at its end.
const MAX_BATCH: usize = 1024;

/// How often a queue that keeps overflowing is logged again.
const DROP_WARN_EVERY: Duration = Duration::from_secs(10);

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

/// What an audit log has done, for `status` and `/metrics`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuditFigures {
    /// Records in the store (a file's flushed lines, a database's committed
    /// rows).
    pub written: u64,
    /// Records that could not be written: write errors, a database still
    /// down when the host closed, or recorded after close.
    pub lost: u64,
    /// Records dropped because the queue was full.
    pub dropped: u64,
    /// Records waiting in the queue now.
    pub queued: u64,
    /// The queue's size.
    pub capacity: u64,
}

/// A cheap-to-clone handle on one audit log; every clone feeds the same
/// writer task. `record` never blocks and never fails the caller, because
/// auditing must not slow down or break the agent it audits.
#[derive(Clone)]
pub(crate) struct AuditLog {
    inner: Arc<Inner>,
}

struct Inner {
    /// `None` once closed. The only sender: dropping it is what tells the
    /// writer task to drain the queue and stop.
    queue: RwLock<Option<mpsc::Sender<AuditRecord>>>,
    capacity: usize,
    /// Becomes `true` when the writer task has written and ended; its
    /// sender is dropped without sending if the task is torn down with the
    /// runtime.
    done: watch::Receiver<bool>,
    counts: Arc<Counts>,
    store: AuditStore,
}

pub(crate) struct Counts {
    written: AtomicU64,
    lost: AtomicU64,
    dropped: AtomicU64,
    /// One overflow warning per [`DROP_WARN_EVERY`].
    overflow_warnings: LogBudget,
    /// Set by `close` (or the last handle going): a database writer stops
    /// retrying after its grace.
    closing: AtomicBool,
}

impl Default for Counts {
    fn default() -> Counts {
        Counts {
            written: AtomicU64::new(0),
            lost: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            overflow_warnings: LogBudget::new(1, DROP_WARN_EVERY),
            closing: AtomicBool::new(false),
        }
    }
}

impl Counts {
    pub(crate) fn lose(&self, n: u64) {
        if n > 0 {
            self.lost.fetch_add(n, Ordering::Relaxed);
        }
    }
}

impl AuditLog {
    /// Opens `store` and starts the writer task on the current tokio
    /// runtime, with a queue of `capacity` records. A file is opened here,
    /// not in the task, so a bad path is reported at startup rather than
    /// lost in a log line; so is an SQLite file. PostgreSQL is connected
    /// to by the writer, which retries, so a host can start before its
    /// database.
    ///
    /// A file's folder must exist (an audit log should not invent folders
    /// where a typo points); the error then names the path and the folder.
    /// A new file is created with mode 0600, and a symlink is refused.
    /// Called outside a tokio runtime, this is an error too, not a panic.
    pub(crate) fn open(store: &AuditStore, capacity: usize) -> io::Result<AuditLog> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|e| {
            io::Error::other(format!(
                "audit log {store}: needs a tokio runtime to write from: {e}"
            ))
        })?;
        let out = Out::open(store)?;
        let capacity = capacity.max(1);
        let (tx, rx) = mpsc::channel(capacity);
        let (done_tx, done) = watch::channel(false);
        let counts = Arc::new(Counts::default());
        let writer = Writer {
            queue: rx,
            counts: counts.clone(),
        };
        let sink = Sink {
            enc: Encoder::new(),
            out,
            counts: counts.clone(),
        };
        runtime.spawn(async move {
            writer.run(sink).await;
            done_tx.send_replace(true);
        });
        Ok(AuditLog {
            inner: Arc::new(Inner {
                queue: RwLock::new(Some(tx)),
                capacity,
                done,
                counts,
                store: store.clone(),
            }),
        })
    }

    /// Queues one record. A full queue drops it and counts it in
    /// [`AuditFigures::dropped`]; after `close`, records are lost and
    /// counted, so a late hook call cannot reopen the log.
    pub(crate) fn record(&self, record: AuditRecord) {
        // A poisoned lock only means a panic elsewhere while it was held;
        // the `Option` inside is still consistent.
        let queue = self.inner.queue.read().unwrap_or_else(|p| p.into_inner());
        let sent = match queue.as_ref() {
            Some(tx) => tx.try_send(record),
            None => {
                self.inner.counts.lose(1);
                return;
            }
        };
        drop(queue);
        match sent {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(_)) => self.overflow(),
            Err(mpsc::error::TrySendError::Closed(_)) => self.inner.counts.lose(1),
        }
    }

    /// Counts a dropped record, and says so in the log at the first drop
    /// and then at most every [`DROP_WARN_EVERY`].
    fn overflow(&self) {
        let counts = &self.inner.counts;
        let dropped = counts.dropped.fetch_add(1, Ordering::Relaxed) + 1;
        if counts.overflow_warnings.admit().is_some() {
            tracing::warn!(
                target: "hookhost::audit",
                store = %self.inner.store,
                dropped,
                capacity = self.inner.capacity,
                "the audit queue is full; records are dropped and counted"
            );
        }
    }

    /// Stops accepting records, writes everything queued, and waits for
    /// the writer task. Idempotent; safe to call from several clones, and
    /// every caller returns only once the writer is done. A `close` that is
    /// itself cancelled does not stop the writing.
    pub(crate) async fn close(&self) {
        self.inner.counts.closing.store(true, Ordering::Relaxed);
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

    /// The log's figures now.
    pub(crate) fn figures(&self) -> AuditFigures {
        let counts = &self.inner.counts;
        let queued = match self
            .inner
            .queue
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
        {
            Some(tx) => (tx.max_capacity() - tx.capacity()) as u64,
            None => 0,
        };
        AuditFigures {
            written: counts.written.load(Ordering::Relaxed),
            lost: counts.lost.load(Ordering::Relaxed),
            dropped: counts.dropped.load(Ordering::Relaxed),
            queued,
            capacity: self.inner.capacity as u64,
        }
    }

    /// How many records reached the store, for tests.
    #[cfg(test)]
    fn written(&self) -> u64 {
        self.figures().written
    }

    /// How many records were lost, for tests.
    #[cfg(test)]
    fn lost(&self) -> u64 {
        self.figures().lost
    }
}

impl Drop for Inner {
    /// The last handle gone: the writer drains what is queued, and a
    /// database writer does not retry forever.
    fn drop(&mut self) {
        self.counts.closing.store(true, Ordering::Relaxed);
    }
}

impl fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuditLog")
            .field("store", &self.inner.store.to_string())
            .field("figures", &self.figures())
            .finish()
    }
}

/// Where the writer puts sealed records.
enum Out {
    File(FileOut),
    #[cfg(any(feature = "audit-sqlite", feature = "audit-postgres"))]
    Db(DbOut),
}

impl Out {
    fn open(store: &AuditStore) -> io::Result<Out> {
        Ok(match store {
            AuditStore::Jsonl(path) => Out::File(FileOut::open(path)?),
            #[cfg(feature = "audit-sqlite")]
            AuditStore::Sqlite(path) => {
                Out::Db(DbOut::new(Box::new(sqlite::SqliteTable::open(path)?)))
            }
            #[cfg(feature = "audit-postgres")]
            AuditStore::Postgres(url) => Out::Db(DbOut::new(Box::new(postgres::PgTable::new(url)))),
            #[allow(unreachable_patterns)]
            other => {
                return Err(io::Error::other(format!(
                    "audit log {other}: this build lacks the backend"
                )));
            }
        })
    }
}

/// The async side of the writer: takes records off the queue in batches
/// and hands each batch to the blocking pool.
struct Writer {
    queue: mpsc::Receiver<AuditRecord>,
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
                sink.write_batch(&batch, flush);
                sink
            });
            match work.await {
                Ok(back) => sink = back,
                Err(e) => {
                    // A panic in the batch (a bug) or the runtime shutting
                    // down; the store went with it. Count this batch; the
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

/// The blocking side of the writer: the encoder (and its chain) and the
/// store's writer.
struct Sink {
    enc: Encoder,
    out: Out,
    counts: Arc<Counts>,
}

impl Sink {
    fn write_batch(&mut self, batch: &[AuditRecord], flush: bool) {
        let counts = &self.counts;
        match &mut self.out {
            Out::File(f) => f.write_batch(&mut self.enc, batch, flush, counts),
            #[cfg(any(feature = "audit-sqlite", feature = "audit-postgres"))]
            Out::Db(d) => d.write_batch(&mut self.enc, batch, counts, &counts.closing),
        }
    }

    fn flush(&mut self) {
        // A database commits each batch; only a file buffers.
        #[allow(irrefutable_let_patterns)]
        if let Out::File(f) = &mut self.out {
            f.flush(&mut self.enc, &self.counts);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::line::MAX_TEXT_CHARS;
    use super::*;
    use serde_json::Value;
    use std::path::{Path, PathBuf};
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

    fn open_jsonl(path: &Path) -> io::Result<AuditLog> {
        AuditLog::open(&AuditStore::Jsonl(path.to_path_buf()), DEFAULT_QUEUE)
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

    #[tokio::test]
    async fn lines_have_the_documented_format_and_key_order() {
        let dir = temp_dir("format");
        let path = dir.join("audit.jsonl");
        let log = open_jsonl(&path).expect("open");
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
        let log = open_jsonl(&path).expect("open");
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
        let log = open_jsonl(&path).expect("open");
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
        let log = open_jsonl(&path).expect("open");
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
        let log = open_jsonl(&path).expect("open");
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
        let first = open_jsonl(&path).expect("open");
        first.record(rec("guard", "r-1", "continue"));
        first.close().await;
        let second = open_jsonl(&path).expect("reopen");
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
        let log = open_jsonl(&path).expect("open");
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
        let err = open_jsonl(&path).expect_err("a symlink must be refused");
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
        let err = open_jsonl(&path).expect_err("the folder does not exist");
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
        let err = open_jsonl(&dir.join("audit.jsonl")).expect_err("no runtime");
        assert!(err.to_string().contains("tokio runtime"), "{err}");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn write_errors_are_counted_as_lost_without_panicking() {
        // Every write to /dev/full fails with ENOSPC.
        let log = open_jsonl(Path::new("/dev/full")).expect("open /dev/full");
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
        let log = open_jsonl(&path).expect("open");
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
        let log = open_jsonl(&path).expect("open");
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

    #[tokio::test(flavor = "current_thread")]
    async fn a_full_queue_drops_and_counts_instead_of_blocking() {
        let dir = temp_dir("overflow");
        let path = dir.join("audit.jsonl");
        let log = AuditLog::open(&AuditStore::Jsonl(path.clone()), 3).expect("open");
        // One thread and no await between records: the writer cannot run,
        // so three fit and the other seven are dropped, counted.
        for i in 0..10 {
            log.record(rec("guard", &format!("r-{i}"), "continue"));
        }
        let f = log.figures();
        assert_eq!((f.queued, f.dropped, f.capacity), (3, 7, 3));
        log.close().await;
        let f = log.figures();
        assert_eq!((f.written, f.dropped, f.lost, f.queued), (3, 7, 0, 0));
        assert_eq!(lines(&path).len(), 3);
        let _ = std::fs::remove_dir_all(dir);
    }
}

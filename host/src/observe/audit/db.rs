//! The database backends' side of the writer: a batch of sealed rows goes
//! into one transaction; when the database is unreachable the batch is
//! kept and retried with backoff, so records wait in the bounded queue
//! (whose overflow is counted) instead of being lost on the first error.
//! Only a writer that is closing gives up, after [`CLOSE_GRACE`], and
//! counts what it could not write.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::line::{Encoder, Sealed};
use super::{AuditRecord, Counts};

/// How long a closing writer keeps retrying an unreachable database
/// before it counts the rest as lost: a shutdown must end.
const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// The first pause after a failed insert; doubled up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// One database table of audit rows, as the writer sees it.
pub(super) trait Table: Send {
    /// Inserts every row in one transaction, reconnecting first if the
    /// last attempt failed. A row already there (same writer and seq: a
    /// commit whose answer was lost) is skipped, not duplicated.
    fn insert(&mut self, rows: &[Sealed]) -> Result<(), String>;
    /// The store, for log lines (its password masked).
    fn name(&self) -> String;
}

/// The writer's state around one [`Table`].
pub(super) struct DbOut {
    table: Box<dyn Table>,
    /// Set while inserts fail, so that the error is logged once.
    failing: bool,
    /// Set once a closing writer gave up: later batches get one try each.
    gave_up: bool,
}

impl DbOut {
    pub(super) fn new(table: Box<dyn Table>) -> DbOut {
        DbOut {
            table,
            failing: false,
            gave_up: false,
        }
    }

    /// Seals and inserts `batch`, retrying until it is in or the writer is
    /// closing and out of grace.
    pub(super) fn write_batch(
        &mut self,
        enc: &mut Encoder,
        batch: &[AuditRecord],
        counts: &Counts,
        closing: &AtomicBool,
    ) {
        let mut rows = Vec::with_capacity(batch.len());
        for record in batch {
            match enc.seal_row(record) {
                Ok(row) => rows.push(row),
                Err(e) => {
                    counts.lose(1);
                    tracing::error!(target: "hookhost::audit", error = %e, "cannot encode an audit record");
                }
            }
        }
        if rows.is_empty() {
            return;
        }
        let n = rows.len() as u64;
        if self.insert_retrying(&rows, closing) {
            counts.written.fetch_add(n, Ordering::Relaxed);
        } else {
            counts.lose(n);
            // Whether any of them went in is unknown: start a new chain.
            enc.restart();
        }
    }

    fn insert_retrying(&mut self, rows: &[Sealed], closing: &AtomicBool) -> bool {
        let mut pause = FIRST_BACKOFF;
        let mut grace_ends: Option<Instant> = None;
        loop {
            let error = match self.table.insert(rows) {
                Ok(()) => {
                    self.recovered();
                    return true;
                }
                Err(e) => e,
            };
            self.failed(&error);
            if closing.load(Ordering::Relaxed) {
                let ends = *grace_ends.get_or_insert_with(|| Instant::now() + CLOSE_GRACE);
                if self.gave_up || Instant::now() >= ends {
                    self.gave_up = true;
                    return false;
                }
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(MAX_BACKOFF);
        }
    }

    fn failed(&mut self, error: &str) {
        if !self.failing {
            self.failing = true;
            tracing::error!(
                target: "hookhost::audit",
                store = %self.table.name(),
                error,
                "cannot write the audit log; records wait in the queue and are retried"
            );
        }
    }

    fn recovered(&mut self) {
        if std::mem::take(&mut self.failing) {
            tracing::warn!(
                target: "hookhost::audit",
                store = %self.table.name(),
                "audit log is written again"
            );
        }
    }
}

//! The JSONL backend: the audit log as a file of lines, appended through a
//! buffer that is flushed whenever the queue is momentarily empty. A write
//! error loses the lines not known to be on disk (counted), and the next
//! record starts a new chain, so `audit verify` reads both halves as whole.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use super::AuditRecord;
use super::Counts;
use super::line::Encoder;

/// Buffer size of the file writer: large enough that a burst of records
/// goes out in a few writes.
const WRITE_BUFFER: usize = 64 * 1024;

/// The buffered file and the accounting of lines not yet known to be on
/// disk.
pub(super) struct FileOut {
    /// Always `Some` between calls; an `Option` only so that a failed
    /// buffer can be swapped for an empty one around the same file.
    out: Option<BufWriter<File>>,
    path: PathBuf,
    /// Lines handed to the buffer since the last successful flush.
    unflushed: u64,
    /// Records lost since the last successful flush; set while writes fail,
    /// so that an error is logged once and not once per record.
    failing: Option<u64>,
}

impl FileOut {
    /// Opens (creates or appends to) `path`; see [`open_file`].
    pub(super) fn open(path: &Path) -> io::Result<FileOut> {
        let file = open_file(path)?;
        Ok(FileOut {
            out: Some(BufWriter::with_capacity(WRITE_BUFFER, file)),
            path: path.to_path_buf(),
            unflushed: 0,
            failing: None,
        })
    }

    pub(super) fn write_batch(
        &mut self,
        enc: &mut Encoder,
        batch: &[AuditRecord],
        flush: bool,
        counts: &Counts,
    ) {
        for record in batch {
            let line = match enc.seal(record) {
                Ok(line) => line,
                Err(e) => {
                    counts.lose(1);
                    tracing::error!(target: "hookhost::audit", error = %e, "cannot encode an audit record");
                    continue;
                }
            };
            let result = match self.out.as_mut() {
                Some(out) => out.write_all(line),
                None => Err(io::Error::other("audit writer has no file")),
            };
            match result {
                Ok(()) => self.unflushed += 1,
                Err(e) => self.fail(e, 1, enc, counts),
            }
        }
        if flush {
            self.flush(enc, counts);
        }
    }

    pub(super) fn flush(&mut self, enc: &mut Encoder, counts: &Counts) {
        let result = match self.out.as_mut() {
            Some(out) => out.flush(),
            None => Err(io::Error::other("audit writer has no file")),
        };
        match result {
            Ok(()) => {
                counts.written.fetch_add(self.unflushed, Ordering::Relaxed);
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
            Err(e) => self.fail(e, 0, enc, counts),
        }
    }

    /// A write or flush failed: every line not known to be on disk counts
    /// as lost (some may have reached the file; claiming fewer losses than
    /// real would be worse), and the buffer is dropped so the same bytes
    /// are not retried and counted twice.
    fn fail(&mut self, e: io::Error, extra: u64, enc: &mut Encoder, counts: &Counts) {
        // Which of the unflushed lines reached the file is unknown: the
        // records after this start a new chain, so the old one ends where
        // the file ends and `audit verify` reads both as whole.
        enc.restart();
        let n = self.unflushed + extra;
        counts.lose(n);
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

/// Opens the file for appending. A new file gets mode 0600: the records
/// hold what hooks and tools said, which is nobody else's business (an
/// existing file keeps the mode its owner gave it). A symlink is refused
/// (`O_NOFOLLOW`) rather than followed, so that whoever can write the
/// folder cannot point the log at a file of their choosing.
pub(super) fn open_file(path: &Path) -> io::Result<File> {
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

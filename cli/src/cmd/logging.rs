//! Where hookhost's own log goes. Every command logs to stderr, except
//! `hookhost relay`: an agent reads the relay's stderr (and stdout) as the
//! hook's answer (Gemini CLI takes `stdout || stderr` as its text, so a
//! warning there becomes a system message, or resets the tool config at
//! BeforeToolSelection). So the relay writes on stdout and stderr only what
//! the agent should read, and its log goes to a file of the user's:
//! `$XDG_STATE_HOME/hookhost/relay.log` (else
//! `~/.local/state/hookhost/relay.log`), mode 0600 in a folder of mode
//! 0700. Setting `HOOKHOST_LOG` (a level or filter, e.g.
//! `HOOKHOST_LOG=debug`) sends the relay's log to stderr instead, at that
//! level, for debugging.
//!
//! The file never grows without bound: past [`ROTATE_AT`] bytes it is
//! renamed `relay.log.1` (replacing the one before) when a relay starts,
//! and one relay writes at most [`PER_RUN`] bytes. A symbolic link or a
//! file of another user's at its path, or a folder someone else made, is
//! never written through: the log is then dropped, never sent to stderr.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::Layer;
use tracing_subscriber::fmt::writer::BoxMakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use crate::gateway::otel::OtelLayer;

use crate::shared::paths;

/// The environment variable that sets the log's level and, for the relay,
/// sends its log to stderr.
const LOG_ENV: &str = "HOOKHOST_LOG";

/// The size past which a starting relay rotates the log file.
pub const ROTATE_AT: u64 = 1024 * 1024;

/// The most one relay run writes to the log file.
pub const PER_RUN: usize = 256 * 1024;

/// Starts the log: to stderr, or for a relay without `HOOKHOST_LOG`, to
/// the relay's log file (dropped if that file cannot be used safely).
/// `export` (`serve --otlp`) takes the spans too, with a filter of its
/// own, so the log's level does not decide what is exported.
pub fn init(relay: bool, export: Option<OtelLayer>) {
    let set = std::env::var_os(LOG_ENV).is_some();
    let filter = EnvFilter::try_from_env(LOG_ENV).unwrap_or_else(|_| EnvFilter::new("warn"));
    let log = tracing_subscriber::fmt::layer().with_target(false);
    let log = if !relay || set {
        log.with_writer(BoxMakeWriter::new(std::io::stderr))
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
    } else {
        let sink = match relay_log_path() {
            Some(path) => Sink::Unopened(path),
            None => Sink::Nowhere,
        };
        log.with_writer(BoxMakeWriter::new(Mutex::new(sink)))
            .with_ansi(false)
    };
    let _ = tracing_subscriber::registry()
        .with(export)
        .with(log.with_filter(filter))
        .try_init();
}

/// `$XDG_STATE_HOME/hookhost/relay.log`, else
/// `$HOME/.local/state/hookhost/relay.log`; `None` with neither set.
pub fn relay_log_path() -> Option<PathBuf> {
    let nonempty = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    let state = match nonempty("XDG_STATE_HOME") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(nonempty("HOME")?).join(".local/state"),
    };
    Some(state.join("hookhost").join("relay.log"))
}

/// Opens the log file for appending, in a private folder (created 0700
/// when missing), rotating it first when it has grown past [`ROTATE_AT`].
fn open_log(path: &Path) -> Result<File, String> {
    let dir = path.parent().ok_or("the log has no folder")?;
    if let Some(state) = dir.parent() {
        use std::os::unix::fs::DirBuilderExt;
        let _ = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(state);
    }
    paths::ensure_private_dir(dir).map_err(|e| e.to_string())?;
    let file = paths::open_private_file(path).map_err(|e| e.to_string())?;
    let file = match file.metadata() {
        Ok(meta) if meta.len() >= ROTATE_AT => {
            // The folder is this user's alone: the rename cannot be
            // redirected. Another relay may rotate at the same moment;
            // either way a fresh file follows.
            let _ = std::fs::rename(path, path.with_extension("log.1"));
            paths::open_private_file(path).map_err(|e| e.to_string())?
        }
        _ => file,
    };
    append_only(&file)?;
    Ok(file)
}

/// Sets `O_APPEND`, so that relays running at once never overwrite each
/// other's lines.
fn append_only(file: &File) -> Result<(), String> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor this function's caller owns.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above; only O_APPEND is added to the status flags.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_APPEND) } < 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    Ok(())
}

/// One relay's share of the log file: each line tagged with its pid
/// (relays run side by side), at most [`PER_RUN`] bytes in all.
struct RunLog {
    file: File,
    left: usize,
    pid: u32,
}

/// The relay's log writer. The file is opened at the first line, so a
/// relay with nothing to log touches no file.
enum Sink {
    /// Nothing written yet; the file's path.
    Unopened(PathBuf),
    /// The file, open.
    Open(RunLog),
    /// No file can be used safely (or none is known): lines are dropped.
    Nowhere,
}

impl Sink {
    /// The open file, opening it at the first call.
    fn log(&mut self) -> Option<&mut RunLog> {
        if let Sink::Unopened(path) = self {
            *self = match open_log(path) {
                Ok(file) => Sink::Open(RunLog {
                    file,
                    left: PER_RUN,
                    pid: std::process::id(),
                }),
                Err(_) => Sink::Nowhere,
            };
        }
        match self {
            Sink::Open(log) => Some(log),
            _ => None,
        }
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let Some(log) = self.log() else {
            return Ok(buf.len());
        };
        if log.left == 0 {
            return Ok(buf.len());
        }
        let mut line = format!("[relay {}] ", log.pid).into_bytes();
        line.extend_from_slice(buf);
        if line.len() > log.left {
            line = format!("[relay {}] log cut: {PER_RUN} bytes written\n", log.pid).into_bytes();
            log.left = 0;
        } else {
            log.left -= line.len();
        }
        // A full disk or a removed file must not end the relay.
        let _ = log.file.write_all(&line);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

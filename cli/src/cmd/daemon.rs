//! What makes `hookhost serve --socket` a per-user daemon: one owner of
//! the socket at a time (a lock file holding its pid), a Unix socket only
//! its user can reach, and a reload whenever a file the config was read
//! from changes.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio::net::UnixListener;

use crate::shared::paths;
use crate::sidecar::Sidecar;

/// How often the watched files are looked at.
const WATCH_EVERY: Duration = Duration::from_secs(1);

/// The socket, held: its lock stays taken (and the socket file is removed)
/// until this is dropped.
pub struct Claim {
    socket: PathBuf,
    _lock: File,
}

impl Drop for Claim {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.socket);
    }
}

impl Claim {
    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.socket
    }
}

/// Takes `socket` for this process: prepares its folder ([`socket_dir`]),
/// locks `SOCKET.lock` (never through a symbolic link) and writes the pid
/// in it, and removes a socket file left by a daemon that died. Another
/// live daemon holding the lock is an error naming its pid.
pub fn claim(socket: &Path) -> Result<Claim, String> {
    socket_dir(socket)?;
    let lock_path = lock_path(socket);
    let mut lock = paths::open_private_file(&lock_path).map_err(|e| format!("lock file: {e}"))?;
    // SAFETY: flock on a descriptor this function owns.
    if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let mut pid = String::new();
        let _ = lock.read_to_string(&mut pid);
        return Err(format!(
            "another hookhost (pid {}) serves {} already; stop it first, or give --socket another path",
            pid.trim(),
            socket.display()
        ));
    }
    let written = lock
        .set_len(0)
        .and_then(|()| lock.rewind())
        .and_then(|()| writeln!(lock, "{}", std::process::id()));
    written.map_err(|e| format!("cannot write {}: {e}", lock_path.display()))?;
    match std::fs::remove_file(socket) {
        Ok(()) => tracing::info!("removed a stale socket at {}", socket.display()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot remove {}: {e}", socket.display())),
    }
    Ok(Claim {
        socket: socket.to_path_buf(),
        _lock: lock,
    })
}

/// The socket's folder, ready: the default one (`/tmp/hookhost-UID`, or
/// under `$XDG_RUNTIME_DIR`) is created 0700 when missing and must be the
/// user's own, mode 0700, not a symbolic link; a folder given with
/// `--socket PATH` is created (0700) when missing.
fn socket_dir(socket: &Path) -> Result<(), String> {
    let Some(dir) = socket.parent().filter(|d| !d.as_os_str().is_empty()) else {
        return Ok(());
    };
    if paths::in_runtime_dir(socket) {
        if let Some(up) = dir.parent() {
            std::fs::create_dir_all(up)
                .map_err(|e| format!("cannot create {}: {e}", up.display()))?;
        }
        return paths::ensure_private_dir(dir).map_err(|e| format!("socket folder: {e}"));
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

/// The lock beside a socket.
fn lock_path(socket: &Path) -> PathBuf {
    let mut name = socket.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// Binds the claimed socket, readable and writable by its user only.
pub fn bind(claim: &Claim) -> Result<UnixListener, String> {
    let listener = UnixListener::bind(&claim.socket)
        .map_err(|e| format!("cannot listen on {}: {e}", claim.socket.display()))?;
    chmod_nofollow(&claim.socket, 0o600)
        .map_err(|e| format!("cannot chmod {}: {e}", claim.socket.display()))?;
    Ok(listener)
}

/// `chmod` that refuses a symbolic link instead of changing its target.
fn chmod_nofollow(path: &Path, mode: libc::mode_t) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    // SAFETY: a NUL-terminated path and plain integers.
    let r = unsafe { libc::fchmodat(libc::AT_FDCWD, c.as_ptr(), mode, libc::AT_SYMLINK_NOFOLLOW) };
    match r {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// Serves relays and HTTP requests on the socket until the task is
/// dropped. A peer of another user is refused (the folder's mode already
/// keeps them out; this holds even under a folder someone loosened).
pub async fn accept_unix(sidecar: Arc<Sidecar>, listener: UnixListener) {
    // SAFETY: getuid cannot fail.
    let me = unsafe { libc::getuid() };
    let log = hookhost::LogBudget::new(1, Duration::from_secs(10));
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                log.warn_line(format_args!("serve: accept on the socket failed: {e}"));
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        match stream.peer_cred() {
            Ok(cred) if cred.uid() == me => {}
            other => {
                let who = other.map(|c| c.uid().to_string()).unwrap_or_default();
                log.warn_line(format_args!("serve: refused a socket peer of uid {who:?}"));
                continue;
            }
        }
        let sidecar = sidecar.clone();
        tokio::spawn(async move {
            if let Err(e) = crate::sidecar::serve_plain(&sidecar, stream).await {
                tracing::debug!("socket connection: {e}");
            }
        });
    }
}

/// Reloads the config whenever one of the files (or folders) it was read
/// from changes: modified, created, removed or replaced. A reload that
/// fails keeps the hooks as they were, and says why in the log. The files
/// watched are those of the config in force, whichever reload (this one,
/// SIGHUP, `host.reload`) brought it. `seen` is what they were when the
/// config was read ([`Stamps::of`]): a file written while the hooks were
/// starting (a first run's `hookhost init`) is a change, not the baseline.
pub async fn watch(sidecar: Arc<Sidecar>, seen: Stamps) {
    let mut sources = sidecar.sources();
    let mut seen = seen.0;
    loop {
        tokio::time::sleep(WATCH_EVERY).await;
        let current = sidecar.sources();
        let now = stamps(&current);
        if current != sources {
            // Another reload renewed the list: start from its files.
            (sources, seen) = (current, now);
            continue;
        }
        if now == seen {
            continue;
        }
        match sidecar.reload().await {
            Ok(report) => tracing::warn!("a watched file changed: config reloaded: {report}"),
            Err(e) => tracing::error!(
                "a watched file changed; reload failed, hooks unchanged: {}",
                e.message
            ),
        }
        sources = sidecar.sources();
        seen = stamps(&sources);
    }
}

/// The config's files as they were when it was read, for [`watch`].
pub struct Stamps(Vec<Option<(SystemTime, u64)>>);

impl Stamps {
    /// Each of `paths` as it is now.
    pub fn of(paths: &[PathBuf]) -> Stamps {
        Stamps(stamps(paths))
    }
}

/// Each source's modification time and size (`None`: absent).
fn stamps(paths: &[PathBuf]) -> Vec<Option<(SystemTime, u64)>> {
    paths
        .iter()
        .map(|p| {
            let m = std::fs::metadata(p).ok()?;
            Some((m.modified().ok()?, m.len()))
        })
        .collect()
}

//! Starting a hook process and ending it without leaving anything behind.
//!
//! Each hook runs as the leader of its own process group, so that signals
//! reach everything it spawned. Its environment is built from scratch:
//! `PATH`, the names in `inherit_env`, and `env`, never the host's secrets.
//! Shutdown closes stdin, waits, sends SIGTERM to the group, waits, then
//! SIGKILL; a guard SIGKILLs the group if the owner is dropped first.

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use process_wrap::tokio::{ChildWrapper, CommandWrap, KillOnDrop, ProcessGroup};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};

use hookhost_protocol::framing::{Line, LineReader};

/// Stderr lines kept for error reports.
const STDERR_TAIL: usize = 20;
/// Longest stderr line logged whole; longer ones are skipped with a note.
const STDERR_LINE_MAX: usize = 16 * 1024;

/// Why a hook could not be started.
#[derive(Debug, thiserror::Error)]
#[error("cannot start {program:?} in {dir}: {source}")]
pub(crate) struct SpawnError {
    /// The program.
    pub program: String,
    /// Its working directory.
    pub dir: String,
    /// The OS error.
    pub source: std::io::Error,
}

/// A running hook process with its pipes taken out.
pub(crate) struct Running {
    child: Box<dyn ChildWrapper>,
    pgid: i32,
    exited: Option<ExitStatus>,
    group_gone: bool,
    /// The hook's process id (and process group id).
    pub pid: u32,
}

/// The pipes of a fresh process.
pub(crate) struct Pipes {
    /// Where requests go.
    pub stdin: ChildStdin,
    /// Where answers come from.
    pub stdout: ChildStdout,
    /// Free-form logs.
    pub stderr: ChildStderr,
}

/// The program path, resolved against the hook's folder when it is a
/// relative path with a slash (a bare name is looked up on `PATH`).
fn program_path(program: &str, dir: &Path) -> PathBuf {
    let p = Path::new(program);
    if p.is_relative() && program.contains('/') {
        dir.join(p)
    } else {
        p.to_path_buf()
    }
}

/// Sets up what every child the host starts (process and command hooks)
/// gets: piped stdio, an environment of only `PATH`, the `inherit_env`
/// names and `env`, and no descriptor but 0, 1 and 2.
pub(crate) fn isolate(
    cmd: &mut tokio::process::Command,
    inherit_env: &[String],
    env: &BTreeMap<String, String>,
) {
    cmd.env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(path) = std::env::var_os("PATH") {
        cmd.env("PATH", path);
    }
    for name in inherit_env {
        if let Some(v) = std::env::var_os(name) {
            cmd.env(name, v);
        }
    }
    cmd.envs(env);
    only_standard_fds(cmd);
}

/// Makes every descriptor above stderr close-on-exec in the child, so a hook
/// inherits only stdin, stdout and stderr: nothing the embedding agent (or
/// whatever started it) left open without `O_CLOEXEC` reaches hook code.
/// Marking instead of closing keeps std's own exec-error pipe working until
/// the exec itself.
fn only_standard_fds(cmd: &mut tokio::process::Command) {
    // SAFETY: the closure runs in the forked child before exec and calls
    // only async-signal-safe syscalls (close_range, fcntl, getrlimit).
    unsafe {
        cmd.pre_exec(|| {
            // The raw syscall: musl's libc has no wrapper for it.
            let flags = libc::CLOSE_RANGE_CLOEXEC as libc::c_uint;
            if libc::syscall(libc::SYS_close_range, 3, libc::c_uint::MAX, flags) == 0 {
                return Ok(());
            }
            // Kernels before 5.11: mark each descriptor up to the limit.
            let mut limit = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            let max = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
                limit.rlim_cur.min(65_536) as libc::c_int
            } else {
                1024
            };
            for fd in 3..max {
                libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            }
            Ok(())
        });
    }
}

/// What to run and how: built by the caller from its config, so that this
/// floor knows nothing of configs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SpawnSpec<'a> {
    /// argv: the program and its arguments. Never run through a shell.
    pub command: &'a [String],
    /// The working directory (already resolved).
    pub dir: &'a Path,
    /// Variables set for the child.
    pub env: &'a BTreeMap<String, String>,
    /// Host variables passed through (besides `PATH`, which always is).
    pub inherit_env: &'a [String],
}

/// Spawns the hook in its own process group with a clean environment.
pub(crate) fn spawn(spec: &SpawnSpec<'_>) -> Result<(Running, Pipes), SpawnError> {
    let dir = spec.dir;
    let program = spec.command.first().cloned().unwrap_or_default();
    let err = |source| SpawnError {
        program: program.clone(),
        dir: dir.display().to_string(),
        source,
    };
    if !dir.is_dir() {
        return Err(err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "the working directory does not exist",
        )));
    }
    let resolved = program_path(&program, dir);
    let mut wrap = CommandWrap::with_new(&resolved, |cmd| {
        cmd.args(spec.command.get(1..).unwrap_or_default())
            .current_dir(dir);
        isolate(cmd, spec.inherit_env, spec.env);
    });
    wrap.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
    let mut child = wrap.spawn().map_err(err)?;
    let pid = child.id().unwrap_or(0);
    let (Some(stdin), Some(stdout), Some(stderr)) = (
        child.stdin().take(),
        child.stdout().take(),
        child.stderr().take(),
    ) else {
        let _ = child.start_kill();
        return Err(err(std::io::Error::other(
            "the child's pipes were not created",
        )));
    };
    let running = Running {
        child,
        pgid: pid as i32,
        exited: None,
        group_gone: false,
        pid,
    };
    Ok((
        running,
        Pipes {
            stdin,
            stdout,
            stderr,
        },
    ))
}

impl Running {
    /// Waits for the hook process itself to exit.
    pub(crate) async fn wait(&mut self) -> ExitStatus {
        if let Some(s) = self.exited {
            return s;
        }
        let status = match self.child.wait().await {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(pid = self.pid, "waiting for the hook failed: {e}");
                std::os::unix::process::ExitStatusExt::from_raw(0)
            }
        };
        self.exited = Some(status);
        status
    }

    /// Whether the hook process itself has exited, without waiting: the
    /// conformance checker asks after each check, so that a hook that died
    /// is restarted before the next one.
    #[cfg(feature = "conformance")]
    pub(crate) fn has_exited(&mut self) -> bool {
        if self.exited.is_none()
            && let Ok(Some(status)) = self.child.try_wait()
        {
            self.exited = Some(status);
        }
        self.exited.is_some()
    }

    /// Whether any process of the group is still alive.
    fn group_alive(&self) -> bool {
        if self.group_gone || self.pgid <= 0 {
            return false;
        }
        // SAFETY: killpg with signal 0 only checks for existence.
        unsafe { libc::killpg(self.pgid, 0) == 0 }
    }

    fn signal_group(&self, sig: i32) {
        if self.pgid > 0 && !self.group_gone {
            // SAFETY: plain syscall on a process group we created.
            unsafe {
                libc::killpg(self.pgid, sig);
            }
        }
    }

    /// Sends SIGKILL to whatever is left of the group, without waiting
    /// for it: what a process of the group wrote is still read, and the
    /// pipes reach their end once the group is gone.
    pub(crate) fn signal_kill(&self) {
        self.signal_group(libc::SIGKILL);
    }

    /// Kills whatever is left of the group at once (after a crash, or for
    /// grandchildren still holding the pipes).
    pub(crate) async fn kill(&mut self) {
        self.signal_group(libc::SIGKILL);
        self.wait().await;
        self.reap_group(Duration::from_millis(200)).await;
    }

    /// The graceful end: `close_stdin` has been done by the caller; wait
    /// `grace`, then SIGTERM the group, wait `grace`, then SIGKILL.
    pub(crate) async fn stop(&mut self, grace: Duration) {
        if tokio::time::timeout(grace, self.wait()).await.is_err() {
            tracing::debug!(
                pid = self.pid,
                "hook still running after stdin closed; SIGTERM"
            );
            self.signal_group(libc::SIGTERM);
            if tokio::time::timeout(grace, self.wait()).await.is_err() {
                tracing::warn!(pid = self.pid, "hook ignored SIGTERM; SIGKILL");
                self.signal_group(libc::SIGKILL);
                self.wait().await;
            }
        }
        // The leader is gone; ask anything left in its group to go too.
        if self.group_alive() {
            self.signal_group(libc::SIGTERM);
            self.reap_group(grace).await;
        }
        if self.group_alive() {
            self.signal_group(libc::SIGKILL);
            self.reap_group(Duration::from_millis(500)).await;
        }
        self.group_gone = !self.group_alive();
    }

    async fn reap_group(&mut self, within: Duration) {
        let until = tokio::time::Instant::now() + within;
        while self.group_alive() && tokio::time::Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        self.group_gone = !self.group_alive();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // Last resort when the owner vanished without stopping the hook
        // (a dropped runtime, a panic): nothing of the group may survive.
        if self.exited.is_none() || self.group_alive() {
            self.signal_group(libc::SIGKILL);
        }
    }
}

/// The last lines a hook wrote to stderr, for reports about it.
#[derive(Debug, Clone, Default)]
pub(crate) struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    fn push(&self, line: String) {
        let mut t = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if t.len() == STDERR_TAIL {
            t.pop_front();
        }
        t.push_back(line);
    }

    /// The kept lines, oldest first, joined with newlines.
    pub(crate) fn text(&self) -> String {
        let t = self.0.lock().unwrap_or_else(|p| p.into_inner());
        t.iter().cloned().collect::<Vec<_>>().join("\n")
    }
}

/// Drains a hook's stderr into `tracing` (target `hookhost::hook_stderr`,
/// field `hook`) line by line, and keeps the tail. Ends at EOF.
pub(crate) async fn drain_stderr(hook: Arc<str>, stderr: ChildStderr, tail: StderrTail) {
    let mut reader = LineReader::new(
        tokio::io::BufReader::with_capacity(64 * 1024, stderr),
        STDERR_LINE_MAX,
    );
    let mut buf = Vec::new();
    loop {
        match reader.next(&mut buf).await {
            Ok(Line::Complete) => {
                let line = String::from_utf8_lossy(&buf);
                tracing::info!(target: "hookhost::hook_stderr", hook = %hook, "{line}");
                let mut kept = line.into_owned();
                if kept.len() > 500 {
                    let mut cut = 500;
                    while !kept.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    kept.truncate(cut);
                    kept.push('…');
                }
                tail.push(kept);
            }
            Ok(Line::TooLong(n)) => {
                tracing::info!(target: "hookhost::hook_stderr", hook = %hook, "[a {n}-byte stderr line, not shown]");
            }
            Ok(Line::Eof) | Err(_) => break,
        }
    }
}

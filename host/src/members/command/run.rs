//! One run of a command hook's program: spawned in its own process group
//! with a clean environment (`PATH`, the user's identity and locale
//! variables, what the hook names, its agent's variables), in the folder
//! its agent would run it in, fed its input on stdin, and waited for until
//! it exits or its deadline passes, when the whole group is killed.
//!
//! The host waits for the script itself, never for its pipes, so a
//! backgrounded grandchild that keeps them open cannot hold up the chain;
//! what each stream says is kept up to [`OUTPUT_CAP`] bytes.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Child;
use tokio::task::JoinHandle;

use crate::config::command::expand_project;
use crate::dialect::reply::Ending;
use crate::dialect::spec::is_identity;
use crate::error::CallError;
use crate::policy::deadline::Deadline;

/// The most output kept per stream; the rest is read and thrown away, so a
/// chatty script never blocks on a full pipe and never fills the host's
/// memory.
pub(crate) const OUTPUT_CAP: usize = 1024 * 1024;

/// How long, once the script has exited, its pipes may still deliver what
/// it wrote. Only a grandchild that inherited them keeps them open longer,
/// and the host does not wait for that.
const DRAIN_GRACE: Duration = Duration::from_millis(100);

/// What to run, resolved once from the config.
#[derive(Debug)]
pub(super) struct Program {
    /// The executable (`/bin/sh` for a shell string).
    pub(super) program: PathBuf,
    /// Its arguments; an exec-form hook's still name its project
    /// variables, filled in for each run.
    pub(super) args: Vec<String>,
    /// The variables naming the project folder that an exec-form hook's
    /// `args` may hold (`${CLAUDE_PROJECT_DIR}`); none for a shell string,
    /// whose shell expands them from the environment.
    pub(super) project_vars: Vec<&'static str>,
    /// Variables set.
    pub(super) env: BTreeMap<String, String>,
    /// Host variables passed through.
    pub(super) inherit_env: Vec<String>,
}

/// What one run produced.
#[derive(Debug)]
pub(crate) struct Finished {
    pub(crate) status: ExitStatus,
    pub(crate) stdout: Captured,
    pub(crate) stderr: Captured,
    /// The script's process group (its pid): what it left running is
    /// still in it, for `hookhost conformance --dialect` to find.
    #[cfg_attr(not(feature = "conformance"), allow(dead_code))]
    pub(crate) pgid: i32,
}

/// One stream's output, up to [`OUTPUT_CAP`].
#[derive(Debug, Default)]
pub(crate) struct Captured {
    pub(crate) bytes: Vec<u8>,
    /// Bytes read past the cap and thrown away.
    pub(crate) dropped: usize,
}

impl Captured {
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

impl Finished {
    /// How the run ended, for the answer reader, over `stdout` and
    /// `stderr` (this run's [`Captured::text`]s).
    pub(crate) fn ending<'a>(&self, stdout: &'a str, stderr: &'a str) -> Ending<'a> {
        Ending {
            code: self.status.code().unwrap_or(-1),
            stdout,
            stderr,
            truncated: self.stdout.dropped > 0,
        }
    }
}

/// Kills the run's process group unless disarmed: on a timeout, and when
/// the call is dropped (cancelled by the chain) while the script runs. It
/// is disarmed once the script has been reaped, because after that the
/// group id could in principle be reused.
struct GroupGuard {
    pgid: i32,
    armed: bool,
}

impl GroupGuard {
    fn kill(&self) {
        if self.armed && self.pgid > 0 {
            // SAFETY: a plain syscall on the group whose leader we spawned
            // and have not reaped yet, so the id is still ours.
            unsafe {
                libc::killpg(self.pgid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The run's background tasks (stdin writer, pipe readers), aborted when
/// the run ends or its call is dropped, so none outlives the call even when
/// a process that escaped the group keeps a pipe open.
#[derive(Default)]
struct Tasks(Vec<JoinHandle<()>>);

impl Drop for Tasks {
    fn drop(&mut self) {
        self.0.iter().for_each(JoinHandle::abort);
    }
}

/// The pipe readers and what they have read so far.
struct Readers {
    tasks: Tasks,
    stdout: Arc<Mutex<Captured>>,
    stderr: Arc<Mutex<Captured>>,
}

impl Readers {
    /// Starts reading the child's stdout and stderr.
    fn start(child: &mut Child) -> Readers {
        let stdout = Arc::new(Mutex::new(Captured::default()));
        let stderr = Arc::new(Mutex::new(Captured::default()));
        let mut tasks = Tasks::default();
        if let Some(s) = child.stdout.take() {
            tasks.0.push(tokio::spawn(capture(s, stdout.clone())));
        }
        if let Some(s) = child.stderr.take() {
            tasks.0.push(tokio::spawn(capture(s, stderr.clone())));
        }
        Readers {
            tasks,
            stdout,
            stderr,
        }
    }

    /// What the script wrote, once its pipes reach EOF or [`DRAIN_GRACE`]
    /// has passed: only a grandchild holding them open keeps them from EOF,
    /// and it is not waited for.
    async fn finish(mut self) -> (Captured, Captured) {
        let _ = tokio::time::timeout(DRAIN_GRACE, async {
            for r in self.tasks.0.iter_mut() {
                let _ = r.await;
            }
        })
        .await;
        drop(self.tasks);
        (take(&self.stdout), take(&self.stderr))
    }
}

impl Program {
    /// Spawns the command, feeds it `input`, and waits for it (not for its
    /// pipes) until `limit`. On time out the whole process group is killed.
    pub(super) async fn run(
        &self,
        input: &Value,
        at: &Place,
        limit: Deadline,
    ) -> Result<Finished, CallError> {
        if limit.timeout().is_zero() {
            return Err(limit.expired());
        }
        let mut child = self.spawn(at)?;
        let mut guard = GroupGuard {
            pgid: child.id().map_or(0, |p| p as i32),
            armed: true,
        };
        let writer = feed(&mut child, input);
        let readers = Readers::start(&mut child);
        let status = match limit.bound(child.wait()).await {
            Ok(Ok(status)) => status,
            Ok(Err(e)) => {
                let why = format!("waiting for the command failed: {e}");
                return Err(reap(&mut child, &mut guard, CallError::Crashed(why)).await);
            }
            Err(expired) => return Err(reap(&mut child, &mut guard, expired).await),
        };
        // Reaped: the group is no longer ours to signal. Anything the script
        // left running in the background is left alone, as docker-agent and
        // Claude Code do.
        guard.armed = false;
        drop(writer);
        let (stdout, stderr) = readers.finish().await;
        Ok(Finished {
            status,
            stdout,
            stderr,
            pgid: guard.pgid,
        })
    }

    /// Starts the program in its own process group, in `at`'s folder,
    /// with a clean environment; a missing folder or program is
    /// `Unavailable`.
    fn spawn(&self, at: &Place) -> Result<Child, CallError> {
        let cannot_start = |why: String| {
            CallError::Unavailable(format!(
                "cannot start {} in {}: {why}",
                self.program.display(),
                at.dir.display()
            ))
        };
        if !at.dir.is_dir() {
            return Err(cannot_start(
                "the working directory does not exist".to_string(),
            ));
        }
        let args = self
            .args
            .iter()
            .map(|a| expand_project(a, &self.project_vars, &at.project));
        let mut cmd = tokio::process::Command::new(&self.program);
        cmd.args(args)
            .current_dir(&at.dir)
            .process_group(0)
            .kill_on_drop(true);
        crate::transport::spawn::isolate(&mut cmd, &self.inherit_env, &self.env);
        // The user's identity and locale, which every agent passes on and
        // scripts read (`$HOME` under `set -u`); the hook's `env` wins.
        for (k, v) in identity().filter(|(k, _)| !self.env.contains_key(k)) {
            cmd.env(k, v);
        }
        // The agent's own variables (CLAUDE_PROJECT_DIR, ...), which the
        // hook's `env` may still override.
        for (k, v) in at.env.iter().filter(|(k, _)| !self.env.contains_key(*k)) {
            cmd.env(k, v);
        }
        cmd.spawn().map_err(|e| cannot_start(e.to_string()))
    }
}

/// Where and with what one call runs.
pub(super) struct Place {
    /// Its working directory.
    pub(super) dir: PathBuf,
    /// The project folder its variables and `args` name.
    pub(super) project: PathBuf,
    /// Its agent's variables for this call.
    pub(super) env: Vec<(&'static str, String)>,
}

/// hookhost's own identity and locale variables ([`is_identity`]).
fn identity() -> impl Iterator<Item = (String, std::ffi::OsString)> {
    std::env::vars_os().filter_map(|(k, v)| {
        let k = k.into_string().ok()?;
        is_identity(&k).then_some((k, v))
    })
}

/// Writes `input` as one JSON line to the child's stdin and closes it.
fn feed(child: &mut Child, input: &Value) -> Tasks {
    let mut bytes = serde_json::to_vec(input).unwrap_or_default();
    bytes.push(b'\n');
    let mut tasks = Tasks::default();
    if let Some(mut stdin) = child.stdin.take() {
        tasks.0.push(tokio::spawn(async move {
            // A script that exits without reading makes this fail (EPIPE);
            // that is its right.
            let _ = stdin.write_all(&bytes).await;
            let _ = stdin.shutdown().await;
        }));
    }
    tasks
}

/// Kills the group of a run that is given up on, reaps its leader, and
/// returns `error`.
async fn reap(child: &mut Child, guard: &mut GroupGuard, error: CallError) -> CallError {
    guard.kill();
    let _ = child.wait().await;
    guard.armed = false;
    error
}

/// Reads a stream into `buf`, keeping up to [`OUTPUT_CAP`] bytes and
/// discarding the rest, until EOF or an error.
async fn capture<R: AsyncRead + Unpin>(mut stream: R, buf: Arc<Mutex<Captured>>) {
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let mut c = buf.lock().unwrap_or_else(|p| p.into_inner());
                let keep = n.min(OUTPUT_CAP - c.bytes.len());
                c.bytes.extend_from_slice(&chunk[..keep]);
                c.dropped += n - keep;
            }
        }
    }
}

fn take(buf: &Arc<Mutex<Captured>>) -> Captured {
    std::mem::take(&mut *buf.lock().unwrap_or_else(|p| p.into_inner()))
}

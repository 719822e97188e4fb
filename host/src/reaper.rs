//! Descendants that leave their hook's process group. Signals to a hook's
//! group miss a descendant that called `setsid` or `setpgid` (a daemon),
//! and once its parent exits it is re-parented to init, out of reach.
//! Linux's `PR_SET_CHILD_SUBREAPER` makes such orphans ours instead, so
//! that they can be found (our children that we did not spawn) and killed.
//!
//! The flag is process-wide: every orphan below the process becomes its
//! child, whoever spawned it. So the library never sets it by itself. The
//! `hookhost` binary, which spawns nothing but hooks, sets it at start,
//! reaps adopted orphans that exit while it runs, and kills every child
//! left at exit, once its hooks are stopped. An embedding agent may do the
//! same (the three functions below) if it is willing to adopt every orphan
//! of its own process tree.

use std::io;
use std::time::Duration;

/// Makes this process the subreaper of its descendants (Linux
/// `PR_SET_CHILD_SUBREAPER`): an orphan below it is re-parented to it
/// rather than to init. Process-wide: every orphan of the whole
/// process tree is adopted, whoever spawned it, so the library never calls
/// this by itself; the `hookhost` binary does at start.
pub fn become_subreaper() -> io::Result<()> {
    // SAFETY: a plain prctl with integer arguments.
    let r = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// A child of this process, as `/proc` shows it.
struct Child {
    pid: i32,
    zombie: bool,
    /// Its process group and session: a process the host spawned leads
    /// its own group in the host's session; an adopted orphan either
    /// belongs to the group of a hook that is gone, or leads a session of
    /// its own (`setsid`).
    adopted: bool,
}

/// One process, as `/proc/PID/stat` shows it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stat {
    pub(crate) pid: i32,
    /// Exited, not yet reaped.
    pub(crate) zombie: bool,
    pub(crate) ppid: i32,
    pub(crate) pgrp: i32,
    pub(crate) session: i32,
}

/// Every process `/proc` lists (that can still be read).
pub(crate) fn processes() -> Vec<Stat> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(stat)
        .collect()
}

fn stat(pid: i32) -> Option<Stat> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command name's closing parenthesis: state, ppid, pgrp,
    // session.
    let mut f = stat.rsplit_once(')')?.1.split_whitespace();
    let state = f.next()?;
    Some(Stat {
        pid,
        zombie: state.starts_with('Z'),
        ppid: f.next()?.parse().ok()?,
        pgrp: f.next()?.parse().ok()?,
        session: f.next()?.parse().ok()?,
    })
}

/// Whether `p`, a child of this process, is an adopted orphan rather than
/// a process the host spawned (which leads its own group in the host's
/// session): it belongs to the group of a hook that is gone, or leads a
/// session of its own (`setsid`).
pub(crate) fn is_adopted(p: &Stat) -> bool {
    // SAFETY: a plain getter without arguments.
    let my_session = unsafe { libc::getsid(0) };
    p.pgrp != p.pid || p.session != my_session
}

/// The children of this process.
fn children() -> Vec<Child> {
    // SAFETY: a plain getter without arguments.
    let me = unsafe { libc::getpid() };
    processes()
        .into_iter()
        .filter(|p| p.ppid == me)
        .map(|p| Child {
            pid: p.pid,
            zombie: p.zombie,
            adopted: is_adopted(&p),
        })
        .collect()
}

/// Reaps the adopted orphans that have exited, so that they do not stay
/// zombies until the program ends; the host's own hook processes are left
/// to their owners. For a periodic task while hooks run. Returns how many.
pub fn reap_adopted_zombies() -> usize {
    let mut reaped = 0;
    for c in children().into_iter().filter(|c| c.zombie && c.adopted) {
        // SAFETY: waits for one exited child by pid, without blocking.
        if unsafe { libc::waitpid(c.pid, std::ptr::null_mut(), libc::WNOHANG) } == c.pid {
            reaped += 1;
        }
    }
    reaped
}

/// SIGKILLs and reaps every child of this process, again and again while
/// killing one makes its own children ours. For the end of the program,
/// once every hook is stopped: any child left is a descendant that
/// escaped its hook's group. Returns how many were killed.
pub fn kill_all_children() -> usize {
    let mut killed = 0;
    for _ in 0..100 {
        let left = children();
        if left.is_empty() {
            break;
        }
        for c in &left {
            // SAFETY: our own child, not yet reaped, so the pid is ours.
            unsafe {
                libc::kill(c.pid, libc::SIGKILL);
                libc::waitpid(c.pid, std::ptr::null_mut(), 0);
            }
            killed += usize::from(!c.zombie);
        }
        // A killed daemon's children are re-parented to us a moment later.
        std::thread::sleep(Duration::from_millis(5));
    }
    killed
}

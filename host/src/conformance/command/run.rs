//! One run of the hook under check, through hookhost's own spawn, then a
//! sweep for what it left running: any process still in its process
//! group once the script has exited, and any orphan that escaped the
//! group and was re-parented to this process (when it is the subreaper,
//! as the `hookhost` binary is). Whatever is found is named and killed.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::Value;

use crate::dialect::spec::Event;
use crate::error::CallError;
use crate::members::command::{CommandHook, Finished};
use crate::reaper::{self, Stat};

/// How long processes still in the group after the script exited get to
/// finish by themselves (a pipeline's last member, say) before they
/// count as left behind.
const SETTLE: Duration = Duration::from_millis(200);

/// The longest command line quoted for a leftover.
const CMDLINE_MAX: usize = 200;

/// A process the hook left running.
#[derive(Debug)]
pub(super) struct Leftover {
    pub(super) pid: i32,
    pub(super) cmdline: String,
}

/// A run and what it left behind.
pub(super) struct Outcome {
    pub(super) run: Result<Finished, CallError>,
    pub(super) leftovers: Vec<Leftover>,
}

/// Runs the hook with `input` at `event`, then sweeps for leftovers and
/// kills them.
pub(super) async fn run(
    hook: &CommandHook,
    event: &'static Event,
    params: &Value,
    input: &Value,
) -> Outcome {
    let before = adopted();
    let run = hook.run_once(event, params, input).await;
    let pgid = run.as_ref().map_or(0, |d| d.pgid);
    let mut found = left(pgid, &before);
    if !found.is_empty() {
        tokio::time::sleep(SETTLE).await;
        found = left(pgid, &before);
    }
    let leftovers = found.iter().map(describe).collect();
    kill(&found).await;
    Outcome { run, leftovers }
}

/// The adopted orphans of this process now, by pid.
fn adopted() -> BTreeSet<i32> {
    // SAFETY: a plain getter without arguments.
    let me = unsafe { libc::getpid() };
    reaper::processes()
        .iter()
        .filter(|p| p.ppid == me && !p.zombie && reaper::is_adopted(p))
        .map(|p| p.pid)
        .collect()
}

/// The live processes of group `pgid`, and the orphans adopted since
/// `before`.
fn left(pgid: i32, before: &BTreeSet<i32>) -> Vec<Stat> {
    // SAFETY: a plain getter without arguments.
    let me = unsafe { libc::getpid() };
    reaper::processes()
        .into_iter()
        .filter(|p| !p.zombie)
        .filter(|p| {
            (pgid > 0 && p.pgrp == pgid)
                || (p.ppid == me && reaper::is_adopted(p) && !before.contains(&p.pid))
        })
        .collect()
}

/// Its pid and command line, from `/proc` (bounded: the hook chose it).
fn describe(p: &Stat) -> Leftover {
    let raw = std::fs::read(format!("/proc/{}/cmdline", p.pid)).unwrap_or_default();
    let mut cmdline: String = String::from_utf8_lossy(&raw)
        .replace('\0', " ")
        .trim()
        .chars()
        .take(CMDLINE_MAX)
        .collect();
    if cmdline.is_empty() {
        cmdline = "?".to_string();
    }
    Leftover {
        pid: p.pid,
        cmdline,
    }
}

/// Kills each leftover and waits (a second at most) until none is alive.
async fn kill(found: &[Stat]) {
    for p in found {
        // SAFETY: a plain syscall on a pid just read from /proc as a live
        // member of the hook's group (or our adopted child). Its pid could
        // name another process only if it exited, was reaped and the pid
        // space wrapped around in between, which takes far longer.
        unsafe {
            libc::kill(p.pid, libc::SIGKILL);
        }
    }
    for _ in 0..20 {
        let live = reaper::processes();
        let alive = |p: &Stat| live.iter().any(|q| q.pid == p.pid && !q.zombie);
        if !found.iter().any(alive) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    reaper::reap_adopted_zombies();
}

//! The sanity checks every host the harness starts goes through: each
//! configured hook up, each process hook a process of its own, and, after
//! the measuring, every call answered by every hook, none failed.

use std::collections::BTreeSet;

use hookhost::{HookKind, HookStatus, Host};

use super::Res;

/// Every one of `expected` hooks is ready and no start failed; the
/// process hooks run in distinct processes. Their pids.
pub(super) fn ready(host: &Host, expected: usize) -> Res<Vec<u32>> {
    if let Some(f) = host.start_failures().first() {
        return Err(format!("hook {} did not start: {}", f.hook, f.error).into());
    }
    let hooks = host.hooks();
    if hooks.len() != expected {
        return Err(format!("{} hooks in the host, {expected} configured", hooks.len()).into());
    }
    let mut pids = Vec::new();
    for h in &hooks {
        if h.status != HookStatus::Ready || h.protocol.is_none() {
            return Err(format!("hook {} is {:?}, not ready", h.name, h.status).into());
        }
        if h.kind == HookKind::Process {
            pids.push(h.pid.ok_or_else(|| format!("hook {} has no pid", h.name))?);
        }
    }
    let distinct: BTreeSet<u32> = pids.iter().copied().collect();
    if distinct.len() != pids.len() {
        return Err(format!("{} process hooks share {} pids", pids.len(), distinct.len()).into());
    }
    Ok(pids)
}

/// Every hook counts exactly `calls` calls, none failed or timed out, and
/// none was restarted (so the pids checked by [`ready`] served them all).
pub(super) fn every_call(host: &Host, calls: u64) -> Res<()> {
    for s in host.stats() {
        let seen = (s.calls, s.errors, s.timeouts, s.restarts);
        if seen != (calls, 0, 0, 0) {
            return Err(format!(
                "made {calls} calls; hook {} counts (calls, errors, timeouts, restarts) {seen:?}",
                s.hook
            )
            .into());
        }
    }
    Ok(())
}

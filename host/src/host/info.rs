//! The read model of a running host: what `hookhost check`, the sidecar's
//! `host.stats` and an embedder's dashboard show. Snapshots only; nothing
//! here can call a hook or touch its process.

use std::sync::atomic::Ordering;
use std::time::Duration;

use hookhost_protocol::Stage;

use crate::config::{HookKind, Scope};
use crate::members::command::CommandHook;
use crate::members::{Member, MemberKind};
use crate::observe::stats::{HookStats, MemberStats};
use crate::supervise::peer::{Peer, PeerKind, PeerState};

/// One configured hook as it is now.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HookInfo {
    /// Its name in the config.
    pub name: String,
    /// What runs it.
    pub kind: HookKind,
    /// Whether calls reach it now.
    pub status: HookStatus,
    /// The process id, for a process hook that is up.
    pub pid: Option<u32>,
    /// Where a remote hook is served or a webhook posts, credentials
    /// masked.
    pub url: Option<String>,
    /// The protocol version agreed in its last hello (persistent hooks).
    pub protocol: Option<u32>,
    /// The stages it is called at (config ∩ what it declared).
    pub stages: Vec<Stage>,
    /// The runtime event kinds forwarded to it.
    pub observes: Vec<String>,
    /// How long its latest start took, spawn or connect plus hello.
    pub hello_time: Option<Duration>,
    /// Calls begun and not yet ended, waiting for it included
    /// (persistent hooks).
    pub in_flight: u64,
    /// Requests written to it and not yet answered (a process hook that
    /// is up).
    pub unanswered: usize,
    /// Its figures since start.
    pub stats: HookStats,
    /// Who it is for (`scope`): the agents, tenants and sessions whose
    /// calls reach it; global when no list is set.
    pub scope: Scope,
}

/// Whether calls reach a hook now.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HookStatus {
    /// Starting, restarting or reconnecting: calls wait within their
    /// deadline.
    Starting,
    /// Calls go through (always, for builtins and commands).
    Ready,
    /// Failed to start, crashed too often, unreachable, or (a builtin)
    /// could not be built: calls fail at once and `on_error` answers.
    Down(String),
    /// Shut down for good.
    Stopped,
}

/// The snapshot of one member.
pub(crate) fn hook_info(m: &Member) -> HookInfo {
    let mut info = HookInfo {
        name: m.name.to_string(),
        kind: m.kind(),
        status: HookStatus::Ready,
        pid: None,
        url: None,
        protocol: None,
        stages: m.stages(),
        observes: Vec::new(),
        hello_time: None,
        in_flight: 0,
        unanswered: 0,
        stats: stats_of(m),
        scope: m.scope.clone(),
    };
    match &m.kind {
        MemberKind::Peer(p) => peer_info(p, &mut info),
        MemberKind::Command(c) => command_info(c, &mut info),
        MemberKind::HookSet(_) | MemberKind::Builtin(_) => {}
        MemberKind::Unavailable(why) => info.status = HookStatus::Down(why.clone()),
    }
    info
}

/// A command hook's trust, and a webhook's URL.
fn command_info(c: &CommandHook, info: &mut HookInfo) {
    if let Some(why) = c.untrusted() {
        info.status = HookStatus::Down(why.to_string());
    }
    #[cfg(feature = "remote")]
    if let Some(url) = c.webhook_url() {
        info.url = Some(url.to_string());
    }
    #[cfg(not(feature = "remote"))]
    let _ = c;
}

/// What a persistent hook adds to its members' snapshots.
fn peer_info(p: &Peer, info: &mut HookInfo) {
    match &p.kind {
        PeerKind::Process => info.pid = p.pid(),
        #[cfg(feature = "remote")]
        PeerKind::Remote { url } => info.url = Some(url.clone()),
    }
    info.in_flight = p.stats.in_flight.load(Ordering::Relaxed);
    info.observes = p
        .effective()
        .observe
        .iter()
        .map(|o| o.to_string())
        .collect();
    if let Some(hello) = p.hello() {
        info.protocol = Some(hello.version);
        info.hello_time = Some(hello.took);
    }
    info.status = match p.state() {
        PeerState::Starting => HookStatus::Starting,
        PeerState::Ready(link) => {
            info.unanswered = link.unanswered();
            HookStatus::Ready
        }
        PeerState::Down(why) => HookStatus::Down(why),
        PeerState::Stopped => HookStatus::Stopped,
    };
}

/// One member's figures, with the restarts and dropped events its peer
/// counts.
pub(crate) fn stats_of(m: &Member) -> HookStats {
    let s: &MemberStats = &m.stats;
    let (restarts, dropped) = match &m.kind {
        MemberKind::Peer(p) => (
            p.stats.restarts.load(Ordering::Relaxed),
            p.stats.dropped_events.load(Ordering::Relaxed),
        ),
        _ => (0, 0),
    };
    let (p50_us, p99_us) = s.percentiles();
    HookStats {
        hook: m.name.to_string(),
        kind: m.kind_name().to_string(),
        calls: s.calls.load(Ordering::Relaxed),
        errors: s.errors.load(Ordering::Relaxed),
        timeouts: s.timeouts.load(Ordering::Relaxed),
        restarts,
        breaker: m.breaker.state().as_str().to_string(),
        dropped_events: dropped,
        filtered: s.filtered.load(Ordering::Relaxed),
        filter_errors: s.filter_errors.load(Ordering::Relaxed),
        breaker_skips: s.breaker_skips.load(Ordering::Relaxed),
        budget_skips: s.budget_skips.load(Ordering::Relaxed),
        p50_us,
        p99_us,
        model: model_stats(m),
    }
}

/// A prompt hook's model figures.
fn model_stats(m: &Member) -> Option<hookhost_protocol::sidecar::ModelStats> {
    #[cfg(feature = "remote")]
    if let MemberKind::Command(c) = &m.kind {
        let c = c.model_counters()?;
        let n = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        return Some(hookhost_protocol::sidecar::ModelStats {
            requests: n(&c.requests),
            cache_hits: n(&c.cache_hits),
            tokens_in: n(&c.tokens_in),
            tokens_out: n(&c.tokens_out),
            capped: n(&c.capped),
        });
    }
    let _ = m;
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Defaults, HookSpec, RemoteConfig};

    /// `status` and the stats name a hook's kind alike, from its config,
    /// also when what answers it could not be had: a remote whose
    /// connector failed was listed as a builtin.
    #[test]
    fn a_hook_that_cannot_be_reached_keeps_its_kind_in_status_and_stats() {
        let config = RemoteConfig::new("ws://127.0.0.1:9/", vec![Stage::BeforeTool]);
        let spec = HookSpec::remote("policy", &config);
        let kind = MemberKind::Unavailable("connector failed".into());
        let m = Member::new(&spec, kind, &Defaults::default());
        let info = hook_info(&m);
        assert_eq!(info.kind, HookKind::Remote);
        assert_eq!(info.stats.kind, "remote");
        assert_eq!(info.status, HookStatus::Down("connector failed".into()));
    }
}

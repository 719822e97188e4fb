//! What a start or reload has to do, decided without I/O: from the peers
//! running now, the members in the chain now and the new [`Config`], a
//! [`Plan`] of the peers to keep, start and stop, and the members to
//! build or reuse. Process hooks with the same command, folder and
//! environment share one peer. [`super::apply`] carries the plan out.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use hookhost_protocol::event::EventPattern;

#[cfg(feature = "remote")]
use crate::config::RemoteConfig;
use crate::config::{Backend, Config, Defaults, Format, HookSpec, ProcessConfig, SpawnKey};
use crate::members::{Configured, Member};

/// What identifies a running peer across a reload.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum PeerKey {
    /// A process, shared by the hooks with this spawn key.
    Process(SpawnKey),
    /// A remote, by hook name (never shared: each has its own connection).
    #[cfg(feature = "remote")]
    Remote(String),
}

/// What a peer is started from.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum PeerSpec {
    /// The first sharing hook's config, its `dir` resolved, with
    /// `intercept` and `observe` the union over every hook sharing it.
    Process(ProcessConfig),
    /// The remote's config.
    #[cfg(feature = "remote")]
    Remote(RemoteConfig),
}

/// A peer to start.
#[derive(Debug, Clone)]
pub(super) struct PeerPlan {
    pub(super) key: PeerKey,
    /// The first configured hook it answers for.
    pub(super) name: String,
    pub(super) spec: PeerSpec,
}

/// One member of the new chain.
#[derive(Debug, Clone)]
pub(super) struct MemberPlan {
    /// The hook.
    pub(super) spec: HookSpec,
    /// The peer that answers it, for a process or remote.
    pub(super) peer: Option<PeerKey>,
    /// Its spec and peer are as they were: the running member (its
    /// breaker, figures, built builtin) is kept.
    pub(super) reuse: bool,
}

/// A running peer as the planner sees it.
#[derive(Debug, Clone)]
pub(super) struct RunningPeer {
    pub(super) spec: PeerSpec,
    pub(super) defaults: Defaults,
}

/// A running member as the planner sees it.
#[derive(Debug, Clone)]
pub(super) struct RunningMember {
    pub(super) configured: Configured,
    /// The peer it is answered by, if any.
    pub(super) peer: Option<PeerKey>,
    /// False for a member that fails every call (not built, bad filter):
    /// it is rebuilt rather than kept.
    pub(super) usable: bool,
}

/// What runs now.
#[derive(Debug, Clone, Default)]
pub(super) struct Running {
    pub(super) peers: BTreeMap<PeerKey, RunningPeer>,
    pub(super) members: BTreeMap<String, RunningMember>,
}

/// What to do.
#[derive(Debug, Clone, Default)]
pub(super) struct Plan {
    /// Running peers that stay as they are.
    pub(super) keep: Vec<PeerKey>,
    /// Peers to start.
    pub(super) start: Vec<PeerPlan>,
    /// Running peers to drain and stop.
    pub(super) stop: Vec<PeerKey>,
    /// The members, in config order (processes, builtins, remotes,
    /// commands); the chain sorts them.
    pub(super) members: Vec<MemberPlan>,
    /// What each process peer observes: the union over the hooks sharing
    /// it (a kept process may now be shared differently).
    pub(super) observe: BTreeMap<PeerKey, Vec<EventPattern>>,
    /// Running members no longer configured.
    pub(super) removed: Vec<String>,
}

/// The chain's order: lower `priority` first, ties by name. In a PicoClaw
/// config the in-process hooks (builtins) come first, whatever their
/// priority, then the others by priority and name, as PicoClaw's
/// `HookManager` sorts them.
pub(super) fn chain_order(format: Format, a: &Member, b: &Member) -> Ordering {
    let in_process = |m: &Member| m.kind_name() == "builtin";
    let source = match format {
        Format::PicoClaw => in_process(b).cmp(&in_process(a)),
        _ => Ordering::Equal,
    };
    source.then_with(|| (a.priority, &*a.name).cmp(&(b.priority, &*b.name)))
}

/// Plans the move from `running` to `config`.
pub(super) fn plan(running: &Running, config: &Config) -> Plan {
    let defaults = &config.defaults;
    let hooks = config.hooks();
    let processes = processes(config, &hooks);
    let wanted = wanted_peers(&processes, &hooks);
    let mut plan = Plan::default();
    for (key, peer) in &wanted {
        let same = running
            .peers
            .get(key)
            .is_some_and(|r| r.defaults == *defaults && same_peer(&r.spec, &peer.spec));
        if same {
            plan.keep.push(key.clone());
        } else {
            plan.start.push(peer.clone());
        }
    }
    let kept: BTreeSet<&PeerKey> = plan.keep.iter().collect();
    plan.stop = running
        .peers
        .keys()
        .filter(|k| !kept.contains(k))
        .cloned()
        .collect();
    plan.observe = observe_lists(&processes);
    plan.members = hooks
        .into_iter()
        .map(|spec| {
            let peer = peer_key(config, &spec);
            let reuse = reusable(running, &kept, &spec, peer.as_ref(), defaults);
            MemberPlan { spec, peer, reuse }
        })
        .collect();
    let names: BTreeSet<&str> = plan.members.iter().map(|m| m.spec.name.as_str()).collect();
    plan.removed = running
        .members
        .keys()
        .filter(|n| !names.contains(n.as_str()))
        .cloned()
        .collect();
    plan
}

/// Whether a running peer serves a wanted one as it is. A process is
/// identified by its spawn key (the key matched already); a remote by all
/// of its settings.
fn same_peer(running: &PeerSpec, wanted: &PeerSpec) -> bool {
    match (running, wanted) {
        (PeerSpec::Process(_), PeerSpec::Process(_)) => true,
        #[cfg(feature = "remote")]
        (PeerSpec::Remote(a), PeerSpec::Remote(b)) => a == b,
        #[cfg(feature = "remote")]
        _ => false,
    }
}

/// Whether the running member of `spec` can stay: an equal spec, usable,
/// and (for a peer's member) answered by the same peer, which is kept.
fn reusable(
    running: &Running,
    kept: &BTreeSet<&PeerKey>,
    spec: &HookSpec,
    peer: Option<&PeerKey>,
    defaults: &Defaults,
) -> bool {
    let Some(old) = running.members.get(&spec.name) else {
        return false;
    };
    let same_peer = match peer {
        Some(key) => old.peer.as_ref() == Some(key) && kept.contains(key),
        None => old.peer.is_none(),
    };
    old.usable && old.configured == Configured::of(spec, defaults) && same_peer
}

/// The peer that answers a hook: a process by its spawn key (its folder
/// resolved), a remote by name; none for the other kinds.
fn peer_key(config: &Config, spec: &HookSpec) -> Option<PeerKey> {
    match &spec.backend {
        Backend::Process(p) => Some(PeerKey::Process(resolved(config, p).spawn_key())),
        #[cfg(feature = "remote")]
        Backend::Remote(_) => Some(PeerKey::Remote(spec.name.clone())),
        _ => None,
    }
}

/// A process hook with its folder resolved.
fn resolved(config: &Config, p: &ProcessConfig) -> ProcessConfig {
    let mut p = p.clone();
    p.dir = Some(config.hook_dir(&p));
    p
}

/// The enabled process hooks with their folders resolved, by name.
fn processes(config: &Config, hooks: &[HookSpec]) -> Vec<(String, ProcessConfig)> {
    hooks
        .iter()
        .filter_map(|h| match &h.backend {
            Backend::Process(p) => Some((h.name.clone(), resolved(config, p))),
            _ => None,
        })
        .collect()
}

/// The peers the config asks for: one per spawn key (the first hook's
/// config with the union of the sharers' stages and observe lists), one
/// per enabled remote.
fn wanted_peers(
    processes: &[(String, ProcessConfig)],
    hooks: &[HookSpec],
) -> BTreeMap<PeerKey, PeerPlan> {
    #[cfg(not(feature = "remote"))]
    let _ = hooks;
    let mut peers: BTreeMap<PeerKey, PeerPlan> = BTreeMap::new();
    let mut sharers: BTreeMap<PeerKey, Vec<String>> = BTreeMap::new();
    for (name, p) in processes {
        let key = PeerKey::Process(p.spawn_key());
        sharers.entry(key.clone()).or_default().push(name.clone());
        match peers.get_mut(&key) {
            Some(PeerPlan {
                spec: PeerSpec::Process(shared),
                ..
            }) => widen(shared, p),
            _ => {
                let spec = PeerSpec::Process(p.clone());
                let name = name.clone();
                peers.insert(key.clone(), PeerPlan { key, name, spec });
            }
        }
    }
    for hooks in sharers.values().filter(|h| h.len() > 1) {
        tracing::info!(
            hooks = ?hooks,
            "hooks {hooks:?} share one process (same command, dir and env)",
        );
    }
    #[cfg(feature = "remote")]
    for (name, c) in remotes(hooks) {
        let key = PeerKey::Remote(name.clone());
        let spec = PeerSpec::Remote(c.clone());
        let name = name.clone();
        peers.insert(key.clone(), PeerPlan { key, name, spec });
    }
    peers
}

/// Adds `other`'s stages and observe list to a shared process's.
fn widen(shared: &mut ProcessConfig, other: &ProcessConfig) {
    for s in &other.intercept {
        if !shared.intercept.contains(s) {
            shared.intercept.push(*s);
        }
    }
    for o in &other.observe {
        if !shared.observe.contains(o) {
            shared.observe.push(o.clone());
        }
    }
}

/// The enabled remotes.
#[cfg(feature = "remote")]
fn remotes(hooks: &[HookSpec]) -> impl Iterator<Item = (&String, &RemoteConfig)> {
    hooks.iter().filter_map(|h| match &h.backend {
        Backend::Remote(r) => Some((&h.name, &**r)),
        _ => None,
    })
}

/// What each process peer observes: the union of its sharers' lists.
fn observe_lists(processes: &[(String, ProcessConfig)]) -> BTreeMap<PeerKey, Vec<EventPattern>> {
    let mut lists: BTreeMap<PeerKey, Vec<EventPattern>> = BTreeMap::new();
    for (_, p) in processes {
        let list = lists.entry(PeerKey::Process(p.spawn_key())).or_default();
        for pat in p.observe_patterns() {
            if !list.contains(&pat) {
                list.push(pat);
            }
        }
    }
    lists
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    fn config(toml: &str) -> Config {
        Config::parse(toml, false, Path::new("test.toml"), PathBuf::from("/base")).unwrap()
    }

    /// What runs after `config` was applied to nothing, every member usable.
    fn running_after(config: &Config) -> Running {
        let first = plan(&Running::default(), config);
        let peers = first
            .start
            .iter()
            .map(|p| {
                let running = RunningPeer {
                    spec: p.spec.clone(),
                    defaults: config.defaults.clone(),
                };
                (p.key.clone(), running)
            })
            .collect();
        let members = first
            .members
            .iter()
            .map(|m| {
                let configured = Configured::of(&m.spec, &config.defaults);
                let peer = m.peer.clone();
                let running = RunningMember {
                    configured,
                    peer,
                    usable: true,
                };
                (m.spec.name.clone(), running)
            })
            .collect();
        Running { peers, members }
    }

    const TWO: &str = r#"
[hooks.processes.a]
command = ["hook", "--a"]
intercept = ["before_tool"]
[hooks.processes.b]
command = ["hook", "--b"]
intercept = ["after_tool"]
"#;

    #[test]
    fn a_first_start_starts_every_peer_and_builds_every_member() {
        let p = plan(&Running::default(), &config(TWO));
        assert_eq!(p.start.len(), 2);
        assert!(p.keep.is_empty() && p.stop.is_empty() && p.removed.is_empty());
        let names: Vec<&str> = p.members.iter().map(|m| m.spec.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert!(p.members.iter().all(|m| !m.reuse));
    }

    #[test]
    fn hooks_with_one_command_folder_and_env_share_one_process() {
        let c = config(
            r#"
[hooks.processes.a]
command = ["hook"]
intercept = ["before_tool"]
observe = ["tool.*"]
[hooks.processes.b]
command = ["hook"]
intercept = ["after_tool", "before_tool"]
observe = ["llm.*"]
"#,
        );
        let p = plan(&Running::default(), &c);
        assert_eq!(p.start.len(), 1);
        // Without the `remote` feature a process is the only kind of peer.
        #[allow(irrefutable_let_patterns)]
        let PeerSpec::Process(shared) = &p.start[0].spec else {
            panic!("not a process")
        };
        assert_eq!(p.start[0].name, "a");
        assert_eq!(shared.intercept.len(), 2);
        assert_eq!(shared.observe, ["tool.*", "llm.*"]);
        assert_eq!(shared.dir.as_deref(), Some(Path::new("/base")));
        let observed = &p.observe[&p.start[0].key];
        assert_eq!(observed.len(), 2);
    }

    #[test]
    fn the_same_config_again_keeps_every_peer_and_member() {
        let c = config(TWO);
        let p = plan(&running_after(&c), &c);
        assert_eq!(p.keep.len(), 2);
        assert!(p.start.is_empty() && p.stop.is_empty() && p.removed.is_empty());
        assert!(p.members.iter().all(|m| m.reuse));
    }

    #[test]
    fn a_changed_command_restarts_only_that_process() {
        let before = config(TWO);
        let after = config(&TWO.replace("--b", "--b2"));
        let p = plan(&running_after(&before), &after);
        assert_eq!(p.keep.len(), 1);
        assert_eq!(p.start.len(), 1);
        assert_eq!(p.start[0].name, "b");
        assert_eq!(p.stop.len(), 1);
        let reused: Vec<(&str, bool)> = p
            .members
            .iter()
            .map(|m| (m.spec.name.as_str(), m.reuse))
            .collect();
        assert_eq!(reused, [("a", true), ("b", false)]);
    }

    #[test]
    fn a_changed_setting_rebuilds_the_member_but_keeps_its_process() {
        let before = config(TWO);
        let after = config(&format!("{TWO}priority = 5\n"));
        let p = plan(&running_after(&before), &after);
        assert_eq!(p.keep.len(), 2);
        assert!(p.start.is_empty());
        let reused: Vec<(&str, bool)> = p
            .members
            .iter()
            .map(|m| (m.spec.name.as_str(), m.reuse))
            .collect();
        assert_eq!(reused, [("a", true), ("b", false)]);
    }

    #[test]
    fn changed_defaults_restart_every_process() {
        let before = config(TWO);
        let after = config(&format!("[hooks.defaults]\nhello_timeout_ms = 1234\n{TWO}"));
        let p = plan(&running_after(&before), &after);
        assert!(p.keep.is_empty());
        assert_eq!((p.start.len(), p.stop.len()), (2, 2));
        assert!(p.members.iter().all(|m| !m.reuse));
    }

    #[test]
    fn a_removed_hook_is_stopped_and_reported() {
        let before = config(TWO);
        let after = config(
            r#"
[hooks.processes.a]
command = ["hook", "--a"]
intercept = ["before_tool"]
"#,
        );
        let p = plan(&running_after(&before), &after);
        assert_eq!(p.removed, ["b"]);
        assert_eq!(p.stop.len(), 1);
        assert_eq!(p.keep.len(), 1);
    }

    #[test]
    fn an_unusable_member_is_rebuilt_even_with_the_same_settings() {
        let c = config("[hooks.builtins.deny_tools]\n");
        let mut running = running_after(&c);
        assert!(plan(&running, &c).members[0].reuse);
        if let Some(m) = running.members.get_mut("deny_tools") {
            m.usable = false;
        }
        assert!(!plan(&running, &c).members[0].reuse);
    }

    #[test]
    fn a_disabled_config_plans_nothing_and_stops_everything() {
        let before = config(TWO);
        let after = config(&format!("[hooks]\nenabled = false\n{TWO}"));
        let p = plan(&running_after(&before), &after);
        assert!(p.members.is_empty() && p.start.is_empty() && p.keep.is_empty());
        assert_eq!(p.stop.len(), 2);
        assert_eq!(p.removed, ["a", "b"]);
    }

    #[cfg(feature = "remote")]
    #[test]
    fn a_remote_is_kept_only_while_all_of_its_settings_are_unchanged() {
        let base =
            "[hooks.remotes.r]\nurl = \"ws://127.0.0.1:9/h\"\nintercept = [\"before_tool\"]\n";
        let before = config(base);
        let same = plan(&running_after(&before), &before);
        assert_eq!(same.keep, [PeerKey::Remote("r".into())]);
        assert!(same.members[0].reuse);
        let after = config(&format!("{base}timeout_ms = 100\n"));
        let changed = plan(&running_after(&before), &after);
        assert!(changed.keep.is_empty());
        assert_eq!(changed.start.len(), 1);
        assert!(!changed.members[0].reuse);
    }
}

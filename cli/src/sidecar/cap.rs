//! The connection cap of `hookhost serve --listen`: how many TCP
//! connections are open at once, in all and per peer, so a flood of
//! connections (or of strangers who cannot pass the access check) cannot
//! exhaust the descriptors or take an agent's place. A connection takes a
//! [`Ticket`] when accepted and gives its place back when dropped.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use hookhost::LogBudget;

use super::{MAX_CONNECTIONS, MAX_CONNECTIONS_PER_PEER};
use crate::shared::limits;

/// How many connections fit in the descriptor limit, leaving room for the
/// hooks (pipes, command hooks spawned per call, remotes) and the log.
fn size_for(hooks: usize) -> usize {
    let soft = limits::nofile().unwrap_or(1024);
    let reserve = 128 + 8 * hooks as u64;
    let room = usize::try_from(soft.saturating_sub(reserve)).unwrap_or(usize::MAX);
    let cap = room.clamp(1, MAX_CONNECTIONS);
    tracing::debug!(soft, cap, "serve: descriptor limit and connection cap");
    cap
}

/// Who a connection comes from, for the per-peer cap: every loopback
/// address is one peer (the whole machine: any local user can use any of
/// 127.0.0.0/8), others by address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum PeerKey {
    Local,
    Remote(IpAddr),
}

impl PeerKey {
    fn of(ip: IpAddr) -> PeerKey {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        match ip.is_loopback() {
            true => PeerKey::Local,
            false => PeerKey::Remote(ip),
        }
    }
}

/// Open connections in two pools sharing the cap. A new connection is
/// *pending* until its first request head passes the access check
/// (origin, host, token; [`super::Access`]): at most [`MAX_PENDING`] are,
/// the oldest closed to make room for a new one (also when the cap is
/// reached), and each is closed if it does not pass within
/// [`CHECK_WITHIN`]. *Checked* ones may fill the cap, at most
/// [`MAX_CONNECTIONS_PER_PEER`] per [`PeerKey`]; only they make a new
/// connection be refused. So a flood that cannot authenticate holds at
/// most the pending pool, briefly, and never takes an agent's place.
#[derive(Clone)]
pub(crate) struct ConnectionCap(Arc<std::sync::Mutex<Pools>>);

/// Pending connections, at most.
const MAX_PENDING: usize = 64;

/// How long a connection may take to send a request head that passes the
/// access check.
const CHECK_WITHIN: Duration = Duration::from_secs(3);

struct Pools {
    cap: usize,
    checked: usize,
    per_peer: HashMap<PeerKey, usize>,
    /// Pending connections, oldest first: an id and how to close it.
    pending: std::collections::VecDeque<(u64, Arc<tokio::sync::Notify>)>,
    next_id: u64,
    refused_log: LogBudget,
}

impl ConnectionCap {
    /// The cap for a host with `hooks` hooks: as many connections as the
    /// descriptor limit leaves room for, at most [`MAX_CONNECTIONS`].
    pub(crate) fn for_hooks(hooks: usize) -> ConnectionCap {
        ConnectionCap::new(size_for(hooks))
    }

    fn new(cap: usize) -> ConnectionCap {
        ConnectionCap(Arc::new(std::sync::Mutex::new(Pools {
            cap,
            checked: 0,
            per_peer: HashMap::new(),
            pending: std::collections::VecDeque::new(),
            next_id: 0,
            refused_log: LogBudget::new(1, Duration::from_secs(10)),
        })))
    }

    fn pools(&self) -> std::sync::MutexGuard<'_, Pools> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A pending place for a new connection from `ip`: the oldest pending
    /// connection is closed when the pool is full. `None` (the stream is
    /// dropped, which closes it) when its peer or the host is at its cap
    /// of checked connections.
    pub(crate) fn take(&self, ip: IpAddr) -> Option<Ticket> {
        let key = PeerKey::of(ip);
        let mut p = self.pools();
        let mine = p.per_peer.get(&key).copied().unwrap_or(0);
        let full = if p.checked >= p.cap {
            Some(format!("{} connections are open already", p.cap))
        } else if mine >= MAX_CONNECTIONS_PER_PEER {
            Some(format!(
                "{key:?} holds {MAX_CONNECTIONS_PER_PEER} connections already"
            ))
        } else {
            None
        };
        if let Some(why) = full {
            p.refused_log
                .warn_line(format_args!("serve: refused a connection: {why}"));
            return None;
        }
        let open = p.checked + p.pending.len();
        if open >= p.cap || p.pending.len() >= MAX_PENDING {
            if let Some((_, oldest)) = p.pending.pop_front() {
                oldest.notify_one();
            }
        }
        let (id, close) = (p.next_id, Arc::new(tokio::sync::Notify::new()));
        p.next_id += 1;
        p.pending.push_back((id, close.clone()));
        Some(Ticket {
            cap: self.clone(),
            id,
            key,
            close,
            checked: std::sync::atomic::AtomicBool::new(false),
        })
    }
}

/// One connection's place in the [`ConnectionCap`], given back when
/// dropped.
pub(crate) struct Ticket {
    cap: ConnectionCap,
    id: u64,
    key: PeerKey,
    close: Arc<tokio::sync::Notify>,
    checked: std::sync::atomic::AtomicBool,
}

impl Ticket {
    /// Moves the connection from the pending pool to the checked one
    /// (once): its first request passed the access check.
    pub(crate) fn checked(&self) {
        use std::sync::atomic::Ordering;
        if self.checked.swap(true, Ordering::SeqCst) {
            return;
        }
        let mut p = self.cap.pools();
        p.pending.retain(|(id, _)| *id != self.id);
        p.checked += 1;
        *p.per_peer.entry(self.key).or_insert(0) += 1;
    }

    /// Completes when a pending connection must close: evicted for a newer
    /// one, or not checked within [`CHECK_WITHIN`]. Never, once checked.
    pub(crate) async fn cut_off(&self) {
        tokio::select! {
            () = self.close.notified() => {}
            () = tokio::time::sleep(CHECK_WITHIN) => {}
        }
        if self.checked.load(std::sync::atomic::Ordering::SeqCst) {
            std::future::pending::<()>().await;
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut p = self.cap.pools();
        if !self.checked.load(std::sync::atomic::Ordering::SeqCst) {
            p.pending.retain(|(id, _)| *id != self.id);
            return;
        }
        p.checked = p.checked.saturating_sub(1);
        if let Some(n) = p.per_peer.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                p.per_peer.remove(&self.key);
            }
        }
    }
}

//! The counts that must agree across a gateway's replicas (a stop's
//! blocks in a row, a quality gate's retries), kept in a store they share
//! when the embedder gives one ([`StateStore`]; `hookhost serve --state
//! redis://…`). The policies themselves stay plain and in process: before
//! a stop's chain the counts of its keys are read from the store into the
//! host's tables, after it the counts it changed are written back
//! (`chain/stops.rs`). One agent session sends its stops one at a time,
//! so two replicas do not race on one session's counts.
//!
//! Each session's counts are one hash, `hookhost:session:<sha256 half>`,
//! expiring [`TTL`] after its last change: the store is bounded by the
//! sessions of a day, and no session id is stored.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use super::session::SessionKey;

/// How long a session's counts outlive their last change.
pub const TTL: Duration = Duration::from_secs(24 * 3600);

/// A store's answer, boxed so that the trait stays object-safe.
pub type StateFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StateError>> + Send + 'a>>;

/// Why the shared store did not answer: unreachable, too slow, or an
/// answer that is not a count. The policies then act as stated in
/// `chain/stops.rs`, never as if the count were zero.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("shared state: {0}")]
pub struct StateError(pub String);

/// Hashes of counts shared by a gateway's replicas. An implementation
/// bounds every call in time (an error is better than a wait: the call
/// path is waiting on it).
pub trait StateStore: Send + Sync + std::fmt::Debug {
    /// The counts of `key`'s `fields`, in order (`None`: not set).
    fn get<'a>(&'a self, key: &'a str, fields: &'a [String]) -> StateFuture<'a, Vec<Option<u32>>>;
    /// Sets `key`'s `fields` (a count of 0 removes the field) and makes the
    /// hash expire `ttl` from now.
    fn set<'a>(
        &'a self,
        key: &'a str,
        fields: &'a [(String, u32)],
        ttl: Duration,
    ) -> StateFuture<'a, ()>;
    /// Forgets the whole hash `key`.
    fn forget<'a>(&'a self, key: &'a str) -> StateFuture<'a, ()>;
}

/// The store's name of a session's hash.
pub(crate) fn session_hash(session: SessionKey) -> String {
    format!("hookhost:session:{}", session.hex())
}

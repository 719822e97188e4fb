//! Identical evaluations within a TTL are answered from memory: the same
//! model asked the same thing about the same event decides once.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use super::decide::Decision;

/// Entries kept at once; expired ones go first, then the oldest.
const MAX_ENTRIES: usize = 1024;
/// A question longer than this is not cached (memory, not correctness).
const MAX_KEY_BYTES: usize = 64 * 1024;

/// Decisions by the exact text the model was asked.
#[derive(Debug)]
pub(super) struct Cache {
    ttl: Duration,
    entries: Mutex<HashMap<String, (Instant, Decision)>>,
}

impl Cache {
    pub(super) fn new(ttl: Duration) -> Cache {
        Cache {
            ttl,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// The decision for `key` if one is fresh.
    pub(super) fn get(&self, key: &str) -> Option<Decision> {
        if self.ttl.is_zero() {
            return None;
        }
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let (at, d) = entries.get(key)?;
        (at.elapsed() < self.ttl).then(|| d.clone())
    }

    /// Keeps `decision` for `key`.
    pub(super) fn put(&self, key: String, decision: Decision) {
        if self.ttl.is_zero() || key.len() > MAX_KEY_BYTES {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= MAX_ENTRIES {
            let ttl = self.ttl;
            entries.retain(|_, (at, _)| at.elapsed() < ttl);
        }
        if entries.len() >= MAX_ENTRIES {
            let oldest = entries.iter().min_by_key(|(_, (at, _))| *at);
            if let Some(k) = oldest.map(|(k, _)| k.clone()) {
                entries.remove(&k);
            }
        }
        entries.insert(key, (Instant::now(), decision));
    }
}

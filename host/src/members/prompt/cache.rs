//! Identical evaluations within a TTL are answered from memory: the same
//! model asked the same thing about the same event decides once.
//!
//! With a shared store (`serve --state`) a decision is also kept there
//! for the TTL, under `hookhost:prompt:<hook>:<sha256 of the question>`,
//! so that every replica answers a question one of them asked. A store
//! that does not answer is a miss (the model is asked: it costs, it never
//! allows), and a decision it does not take is kept in memory only.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use sha2::{Digest, Sha256};

use super::decide::Decision;
use crate::observe::chain::hex;
use crate::policy::shared::{self, Slot};

/// Entries kept at once; expired ones go first, then the oldest.
const MAX_ENTRIES: usize = 1024;
/// A question longer than this is not cached (memory, not correctness).
const MAX_KEY_BYTES: usize = 64 * 1024;

/// Decisions by the exact text the model was asked.
#[derive(Debug)]
pub(super) struct Cache {
    /// The hook, as the store's keys name it.
    hook: String,
    ttl: Duration,
    entries: Mutex<HashMap<String, (Instant, Decision)>>,
    /// The store decisions are shared through, when replicas share one.
    pub(super) shared: Slot,
}

impl Cache {
    pub(super) fn new(hook: &str, ttl: Duration) -> Cache {
        Cache {
            hook: shared::hook_part(hook),
            ttl,
            entries: Mutex::new(HashMap::new()),
            shared: Slot::new(),
        }
    }

    /// The decision for `key` if one is fresh, here or in the store.
    pub(super) async fn get(&self, key: &str) -> Option<Decision> {
        if self.ttl.is_zero() || key.len() > MAX_KEY_BYTES {
            return None;
        }
        if let Some(d) = self.local(key) {
            return Some(d);
        }
        let store = self.shared.get()?;
        match store.text(&self.store_key(key)).await {
            Ok(text) => text.as_deref().and_then(Decision::from_text),
            Err(e) => {
                tracing::debug!(error = %e, "a prompt hook's shared cache did not answer: the model is asked");
                None
            }
        }
    }

    fn local(&self, key: &str) -> Option<Decision> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let (at, d) = entries.get(key)?;
        (at.elapsed() < self.ttl).then(|| d.clone())
    }

    /// The store's key of question `key`.
    fn store_key(&self, key: &str) -> String {
        let digest = hex(&Sha256::digest(key.as_bytes()));
        format!("hookhost:prompt:{}:{digest}", self.hook)
    }

    /// Keeps `decision` for `key`, and gives it to the store off the
    /// call's path.
    pub(super) fn put(&self, key: String, decision: Decision) {
        if self.ttl.is_zero() || key.len() > MAX_KEY_BYTES {
            return;
        }
        if let (Some(store), Ok(rt)) = (self.shared.get(), tokio::runtime::Handle::try_current()) {
            let (store, ttl) = (store.clone(), self.ttl);
            let (at, text) = (self.store_key(&key), decision.to_text());
            rt.spawn(async move {
                if let Err(e) = store.put_text(&at, &text, ttl).await {
                    tracing::debug!(error = %e, "a prompt hook's decision was not shared");
                }
            });
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

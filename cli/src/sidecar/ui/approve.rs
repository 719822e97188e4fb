//! The console's trust list and its approve and revoke buttons: the
//! project hooks of the config in force, and the user's store changed as
//! `hookhost trust approve|revoke` changes it, one whole fingerprint at a
//! time (the page names hooks exactly).

use std::path::Path;

use hookhost::Config;
use hookhost::trust::TrustedHook;
use serde_json::Value;

use crate::shared::approvals::{row_json, store};

/// The project hooks of the hookhost config at `path`.
pub fn rows(path: &Path) -> Result<Vec<Value>, String> {
    let config = Config::read(path).map_err(|e| e.to_string())?;
    Ok(config.project_hooks().iter().map(row_json).collect())
}

/// Approves the project hook of the config at `path` whose whole
/// fingerprint is `hash` (the console names it exactly).
pub fn approve_fingerprint(path: &Path, hash: &str) -> Result<(), String> {
    let config = Config::read(path).map_err(|e| e.to_string())?;
    let hooks = config.project_hooks();
    let found = hooks
        .iter()
        .find(|h| h.source.trust.fingerprint() == Some(hash))
        .ok_or_else(|| {
            format!(
                "no project hook of {} has fingerprint {hash}",
                path.display()
            )
        })?;
    let mut store = store()?;
    store.approve(hash, TrustedHook::new(found.source, found.hook));
    store.save().map_err(|e| e.to_string())
}

/// Takes back the approval of fingerprint `hash` (whole).
pub fn revoke_fingerprint(hash: &str) -> Result<(), String> {
    let mut store = store()?;
    store
        .revoke(hash)
        .ok_or_else(|| format!("no approved hook has fingerprint {hash}"))?;
    store.save().map_err(|e| e.to_string())
}

//! The user's approvals of the hooks a project's files name: the store
//! they are kept in and how one project hook is shown, the same in
//! `hookhost trust` and in the console (`hookhost::trust`).

use hookhost::trust::{ProjectHook, TrustStore, describe};
use serde_json::{Value, json};

/// The user's store, refused (not emptied) when it cannot be used, so
/// that approving never writes over a file that is not the user's.
pub fn store() -> Result<TrustStore, String> {
    let path = TrustStore::default_path().map_err(|e| e.to_string())?;
    TrustStore::open(&path).map_err(|e| e.to_string())
}

/// The hook's name; a docker-agent group's hook with its place in it.
pub fn name(h: &ProjectHook<'_>) -> String {
    match h.index {
        Some(i) => format!("{}[{i}]", h.name),
        None => h.name.to_string(),
    }
}

/// One project hook as `trust list --json` and the console show it.
pub fn row_json(h: &ProjectHook<'_>) -> Value {
    json!({
        "hook": name(h),
        "trusted": !h.source.trust.is_untrusted(),
        "fingerprint": h.source.trust.fingerprint(),
        "file": h.source.file,
        "event": h.source.event,
        "matcher": h.source.matcher,
        "command": describe(h.hook),
    })
}

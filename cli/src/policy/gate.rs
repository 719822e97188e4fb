//! What a gateway serves before its first signed policy is loaded: one
//! builtin, `signed_policy`, at every stage, that fails with a reason
//! saying so, under `on_error = "deny"` and without a breaker. The chain's
//! fail-closed rule then refuses every refusable event on every route in
//! that stage's and dialect's own terms (deny_tool, a refused approval, a
//! block, abort_turn) and lets the events that cannot be refused go on,
//! answered as no hook decided: never an allow made up.

use std::path::Path;
use std::sync::Arc;

use hookhost::protocol::Stage;
use hookhost::{BuiltinConfig, BuiltinHook, BuiltinRegistry, Config, HookFuture};
use serde_json::{Value, json};

/// The builtin's registry name, which the refusals name.
pub const NAME: &str = "signed_policy";

/// The builtin: every call fails with `reason`.
struct NoPolicyYet {
    reason: String,
}

impl BuiltinHook for NoPolicyYet {
    fn intercepts(&self) -> Vec<Stage> {
        Stage::ALL.to_vec()
    }

    fn call<'a>(&'a self, _stage: Stage, _params: &'a Value) -> HookFuture<'a> {
        let reason = self.reason.clone();
        Box::pin(async move { Err(reason) })
    }
}

/// The library's builtins plus [`NAME`], refusing for a policy awaited
/// from `source`.
pub fn registry(source: &str) -> BuiltinRegistry {
    let reason = format!(
        "no signed policy is loaded yet (waiting for a valid bundle from {source}); \
         every refusable event is refused until one is"
    );
    let mut registry = BuiltinRegistry::with_defaults();
    registry.register(
        NAME,
        Arc::new(move |_: &Value| {
            let hook: Arc<dyn BuiltinHook> = Arc::new(NoPolicyYet {
                reason: reason.clone(),
            });
            Ok(hook)
        }),
    );
    registry
}

/// The config served until a bundle loads: [`NAME`] alone.
pub fn config(base_dir: &Path) -> Result<Config, String> {
    let settings = json!({"on_error": "deny", "breaker": false});
    let builtin: BuiltinConfig = serde_json::from_value(settings).map_err(|e| e.to_string())?;
    let mut config = Config::empty(base_dir);
    config.builtins.insert(NAME.into(), builtin);
    Ok(config)
}

//! The agent-wide switches of [`super::check::Rules`], read from the
//! layers with each agent's own precedence.

use hookhost::Dialect;
use serde_json::Value;

use super::check::Rules;
use super::layers::Layer;

/// `agent`'s rules from `layers` (managed first, as
/// [`super::layers::layers`] lists them).
pub(super) fn rules(agent: Dialect, layers: &[Layer]) -> Rules {
    match agent {
        Dialect::ClaudeCode => claude(layers),
        Dialect::Codex => codex(layers),
        _ => gemini(layers),
    }
}

fn is_true(v: Option<&Value>) -> bool {
    v.and_then(Value::as_bool) == Some(true)
}

fn claude(layers: &[Layer]) -> Rules {
    let (managed, others): (Vec<&Layer>, Vec<&Layer>) = layers.iter().partition(|l| l.managed);
    let mut rules = empty();
    if managed.iter().any(|l| is_true(l.get("disableAllHooks"))) {
        rules.hooks_on = Err("the managed settings set disableAllHooks".into());
    }
    rules.managed_only = managed
        .iter()
        .any(|l| is_true(l.get("allowManagedHooksOnly")));
    // The most specific file that says wins: local, project, user.
    let said = others.iter().rev().find_map(|l| {
        let v = l.get("disableAllHooks").and_then(Value::as_bool)?;
        Some((l, v))
    });
    if let Some((layer, true)) = said {
        let file = layer.path.display();
        rules.unmanaged_off = Some(format!("{file} sets disableAllHooks"));
        rules.notes.push(format!(
            "{file} sets disableAllHooks: it turns off the hooks of user and project files, \
             not managed ones (Claude Code 2.1.49 on)"
        ));
    }
    rules.notes.push(
        "server-managed settings (the claude.ai admin console) and OS policy, where a device has \
         them, take the place of managed-settings.json; doctor reads only the file"
            .into(),
    );
    if !rules.managed_only {
        rules.notes.push(
            "allowManagedHooksOnly is not set in the managed settings: a hook added to a user \
             or project file would run beside hookhost"
                .into(),
        );
    }
    rules
}

fn codex(layers: &[Layer]) -> Rules {
    let mut rules = empty();
    let requirements = layers.iter().find(|l| l.name == "requirements");
    let pinned = requirements.and_then(feature);
    rules.managed_only = requirements.is_some_and(|r| is_true(r.get("allow_managed_hooks_only")));
    match pinned {
        Some(true) => {}
        Some(false) => {
            rules.hooks_on = Err("requirements.toml pins [features] hooks = false".into())
        }
        None => {
            // Later layers override earlier ones: system, user, project.
            let off = layers
                .iter()
                .rev()
                .filter(|l| l.name != "requirements")
                .find_map(|l| Some((l, feature(l)?)));
            if let Some((layer, false)) = off {
                rules.hooks_on = Err(format!(
                    "{} sets [features] hooks = false, and requirements.toml does not pin it on",
                    layer.path.display()
                ));
            }
        }
    }
    if !rules.managed_only {
        rules.notes.push(
            "allow_managed_hooks_only is not set in requirements.toml: a user's or project's \
             hook runs beside hookhost once trusted (or with --dangerously-bypass-hook-trust)"
                .into(),
        );
    }
    rules
}

/// `[features] hooks` (or its old name, `codex_hooks`) in one layer.
fn feature(layer: &Layer) -> Option<bool> {
    ["features.hooks", "features.codex_hooks"]
        .iter()
        .find_map(|k| layer.get(k).and_then(Value::as_bool))
}

fn gemini(layers: &[Layer]) -> Rules {
    let mut rules = empty();
    // System settings have the last word; then project, user, defaults.
    let order = ["system", "project", "user", "system-defaults"];
    let enabled = order.iter().find_map(|name| {
        let layer = layers.iter().find(|l| l.name == *name)?;
        Some((layer, layer.get("hooksConfig.enabled")?.as_bool()?))
    });
    if let Some((layer, false)) = enabled {
        rules.hooks_on = Err(format!(
            "{} sets hooksConfig.enabled = false",
            layer.path.display()
        ));
    }
    for layer in layers {
        let listed = layer.get("hooksConfig.disabled").and_then(Value::as_array);
        rules.disabled.extend(
            listed
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(String::from),
        );
    }
    rules.notes.push(
        "Gemini CLI reads its system settings from $GEMINI_CLI_SYSTEM_SETTINGS_PATH when set, \
         which any user can set: its docs call these settings not a security boundary"
            .into(),
    );
    rules
}

fn empty() -> Rules {
    Rules {
        hooks_on: Ok(()),
        managed_only: false,
        disabled: Vec::new(),
        unmanaged_off: None,
        notes: Vec::new(),
    }
}

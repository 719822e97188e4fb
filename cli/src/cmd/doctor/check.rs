//! Whether each event an agent can refuse reaches hookhost and fails
//! closed, given its layers ([`super::layers`]), and what in them could
//! get around it. The agents' rules, as their pinned versions apply them:
//!
//! - Claude Code: a managed `disableAllHooks` turns every hook off; one in
//!   any other file leaves managed hooks running (2.1.49 on). With
//!   `allowManagedHooksOnly` only managed hooks run. Hooks of an event
//!   run side by side, so another hook there can allow or rewrite what
//!   hookhost checked. A hook fails closed with `onFailure: "block"`.
//! - Codex: `[features] hooks = false` turns every hook off, managed ones
//!   too, unless `requirements.toml` pins it on. Non-managed hooks run
//!   once trusted (or with `--dangerously-bypass-hook-trust`) unless
//!   `allow_managed_hooks_only`. A hook that cannot start is no
//!   objection, so failing closed rests on the relay's `--unreachable deny`.
//! - Gemini CLI: `hooksConfig.enabled` (system settings have the last
//!   word), `hooksConfig.disabled` (a union over every file: any file can
//!   switch a hook off by name or command).

use hookhost::Dialect;
use serde::Serialize;
use serde_json::Value;

use super::layers::Layer;
use crate::cmd::install::route::{guarded_events, is_ours, words};

/// One event's verdict.
#[derive(Serialize)]
pub(super) struct EventLine {
    pub(super) event: &'static str,
    /// hookhost's handler that runs here, described; `None`: none does.
    pub(super) route: Option<String>,
    /// The file holding it.
    pub(super) file: Option<String>,
    /// Whether that file is the admin's.
    pub(super) managed: bool,
    pub(super) fails_closed: bool,
    /// What here lets an action past hookhost.
    pub(super) bypasses: Vec<String>,
    /// hookhost's handler, for the canary.
    #[serde(skip)]
    pub(super) handler: Option<Value>,
}

impl EventLine {
    pub(super) fn live(&self) -> bool {
        self.route.is_some() && self.fails_closed && self.bypasses.is_empty()
    }
}

/// The agent-wide rules read from the layers.
pub(super) struct Rules {
    /// `Err(why)` when the agent runs no hook at all.
    pub(super) hooks_on: Result<(), String>,
    /// Only managed hooks run.
    pub(super) managed_only: bool,
    /// Switched off by name or command (Gemini's `hooksConfig.disabled`).
    pub(super) disabled: Vec<String>,
    /// Non-managed hooks off (Claude's `disableAllHooks` in a user file).
    pub(super) unmanaged_off: Option<String>,
    /// What the agent-wide reading found worth saying.
    pub(super) notes: Vec<String>,
}

/// One handler of an event, where it is, and whether the agent runs it.
struct Found<'a> {
    layer: &'a Layer,
    handler: &'a Value,
    ours: bool,
    runs: Result<(), String>,
}

/// The verdict for every guarded event of `agent`.
pub(super) fn events(agent: Dialect, layers: &[Layer], rules: &Rules) -> Vec<EventLine> {
    guarded_events(agent)
        .into_iter()
        .map(|event| {
            let found = found(agent, layers, rules, event);
            line(agent, event, &found)
        })
        .collect()
}

fn found<'a>(agent: Dialect, layers: &'a [Layer], rules: &Rules, event: &str) -> Vec<Found<'a>> {
    let mut out = Vec::new();
    for layer in layers {
        let Some(Value::Array(groups)) = layer.get("hooks").and_then(|h| h.get(event)) else {
            continue;
        };
        let handlers = groups
            .iter()
            .filter_map(|g| g.get("hooks").and_then(Value::as_array))
            .flatten();
        for handler in handlers {
            out.push(Found {
                layer,
                handler,
                ours: is_ours(agent, handler),
                runs: runs(layer, handler, rules),
            });
        }
    }
    out
}

/// Whether the agent runs `handler` of `layer`, by the agent-wide rules.
fn runs(layer: &Layer, handler: &Value, rules: &Rules) -> Result<(), String> {
    rules.hooks_on.clone()?;
    if let Some(name) = rules.disabled.iter().find(|d| names(handler, d)) {
        return Err(format!("hooksConfig.disabled lists `{name}`"));
    }
    if layer.managed {
        return Ok(());
    }
    if rules.managed_only {
        return Err("only managed hooks run".into());
    }
    match &rules.unmanaged_off {
        Some(why) => Err(why.clone()),
        None => Ok(()),
    }
}

/// Whether `name` names `handler` (its `name` or its command).
fn names(handler: &Value, name: &str) -> bool {
    ["name", "command"]
        .iter()
        .any(|k| handler.get(*k).and_then(Value::as_str) == Some(name))
}

fn line(agent: Dialect, event: &'static str, found: &[Found]) -> EventLine {
    let ours = found.iter().find(|f| f.ours && f.runs.is_ok());
    let mut bypasses: Vec<String> = found
        .iter()
        .filter(|f| !f.ours && f.runs.is_ok())
        .map(|f| {
            format!(
                "another hook runs beside hookhost ({} {}: {}); it can allow or rewrite what \
                 hookhost checked",
                f.layer.name,
                f.layer.path.display(),
                describe(f.handler)
            )
        })
        .collect();
    if ours.is_none() {
        let off = found
            .iter()
            .filter(|f| f.ours)
            .filter_map(|f| match &f.runs {
                Err(why) => Some(format!(
                    "hookhost's entry in {} does not run: {why}",
                    f.layer.path.display()
                )),
                Ok(()) => None,
            });
        bypasses.extend(off);
    }
    EventLine {
        event,
        route: ours.map(|f| describe(f.handler)),
        file: ours.map(|f| f.layer.path.display().to_string()),
        managed: ours.is_some_and(|f| f.layer.managed),
        fails_closed: ours.is_some_and(|f| closed(agent, f.handler)),
        bypasses,
        handler: ours.map(|f| f.handler.clone()),
    }
}

/// A handler in a line: `http URL` or its command.
pub(super) fn describe(handler: &Value) -> String {
    let text = |k: &str| handler.get(k).and_then(Value::as_str);
    match text("type") {
        Some("http") => format!("http {}", text("url").unwrap_or("?")),
        _ => text("command")
            .or_else(|| text("bash"))
            .unwrap_or("?")
            .to_string(),
    }
}

/// Whether `handler` sends the gateway's token from the environment
/// (an http hook whose headers name `$HOOKHOST_TOKEN`, or a relay to a
/// URL, which reads it).
pub(super) fn reads_token(handler: &Value) -> bool {
    let text = handler.to_string();
    text.contains(super::TOKEN_VAR) || text.contains("--connect http")
}

/// Whether hookhost's `handler` refuses when hookhost cannot answer.
fn closed(agent: Dialect, handler: &Value) -> bool {
    let blocks = handler.get("onFailure").and_then(Value::as_str) == Some("block");
    let relay_denies = handler
        .get("command")
        .and_then(Value::as_str)
        .and_then(words)
        .is_some_and(|w| {
            !w.windows(2)
                .any(|p| p[0] == "--unreachable" && p[1] == "allow")
        });
    match agent {
        Dialect::ClaudeCode => blocks && (handler["type"] == "http" || relay_denies),
        _ => relay_denies,
    }
}

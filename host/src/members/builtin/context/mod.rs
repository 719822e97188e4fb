//! docker-agent's context builtins: `add_date`, `add_environment_info`,
//! `add_prompt_files`, `add_git_status`, `add_git_diff`,
//! `add_directory_listing`, `add_user_info` and `add_recent_commits`.
//!
//! Each one answers a lifecycle request event that takes context
//! (`turn_start` or `session_start` by default, as in docker-agent) with
//! `additional_context`, computed from the working directory of the call.
//! Each reads only what its name says (a date, named files, a directory's
//! top level, git's own output), and every answer is bounded: text at
//! [`MAX_CONTEXT`] bytes, files at [`MAX_FILE`], git at [`GIT_TIMEOUT`]
//! with its output capped while it is read.
//!
//! ```toml
//! [hooks.builtins.add_git_status]                 # turn_start
//! [hooks.builtins.add_recent_commits]
//! config = { count = 5, events = ["session_start"] }
//! [hooks.builtins.add_prompt_files]
//! config = { files = ["AGENTS.md"], depth = 2 }
//! ```
//!
//! docker-agent writes a builtin's options as `args` strings; `args` is
//! accepted too (`["--full"]`, `["5"]`, `["--depth=2", "AGENTS.md"]`), so a
//! hook imported from an agent YAML needs no translation.

mod git;
mod settings;
mod sources;

use std::error::Error;
use std::path::PathBuf;
use std::sync::Arc;

use hookhost_protocol::Stage;
use hookhost_protocol::lifecycle::LifecycleEvent;
use serde_json::{Value, json};

use super::{BuiltinHook, BuiltinRegistry, HookFuture, continue_answer, not_intercepted};
use settings::Settings;
pub(crate) use sources::Source;

/// The longest context one builtin adds, in bytes; more is cut at a
/// character boundary and marked.
pub(crate) const MAX_CONTEXT: usize = 32 * 1024;

/// The most read of one prompt file, in bytes.
pub(crate) const MAX_FILE: usize = 32 * 1024;

/// How long a git command may run before it is killed.
pub(crate) const GIT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// The names and what each reads, in docker-agent's order.
pub(crate) const NAMES: [&str; 8] = [
    "add_date",
    "add_environment_info",
    "add_prompt_files",
    "add_git_status",
    "add_git_diff",
    "add_directory_listing",
    "add_user_info",
    "add_recent_commits",
];

/// One context builtin, built.
#[derive(Debug)]
pub(crate) struct ContextHook {
    /// Its registry name, for error texts.
    name: &'static str,
    /// The events it answers; every other lifecycle event continues.
    events: Vec<LifecycleEvent>,
    /// Where it reads when the call names no working directory.
    dir: Option<PathBuf>,
    /// What it reads.
    source: Source,
}

impl ContextHook {
    /// Builds `name` from its `config` table.
    fn build(
        name: &'static str,
        config: &Value,
    ) -> Result<ContextHook, Box<dyn Error + Send + Sync>> {
        let settings = Settings::parse(name, config)?;
        Ok(ContextHook {
            name,
            events: settings.events,
            dir: settings.dir,
            source: settings.source,
        })
    }

    /// The directory the call is about: `meta.cwd`, then `payload.cwd`
    /// (agents that send it there), then the configured `dir`. Never the
    /// host's own directory: as in docker-agent, a call that names no
    /// directory gets no directory context rather than the host's.
    fn working_dir(&self, params: &Value) -> Option<PathBuf> {
        ["meta", "payload"]
            .into_iter()
            .find_map(|key| {
                params
                    .get(key)
                    .and_then(|v| v.get("cwd"))
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map(PathBuf::from)
            })
            .or_else(|| self.dir.clone())
    }

    /// Its answer: the context for one of its events, else continue.
    async fn answer(&self, params: &Value) -> Result<Value, String> {
        let event = params
            .get("event")
            .and_then(|e| serde_json::from_value::<LifecycleEvent>(e.clone()).ok());
        if !event.is_some_and(|e| self.events.contains(&e)) {
            return Ok(continue_answer());
        }
        let dir = self.working_dir(params);
        if dir.is_none() && self.source.needs_dir() {
            return Ok(continue_answer());
        }
        let text = self
            .source
            .read(dir.as_deref().unwrap_or(std::path::Path::new(".")))
            .await
            .map_err(|e| format!("{}: {e}", self.name))?;
        Ok(match text {
            Some(text) if !text.trim().is_empty() => {
                json!({"additional_context": bounded(text, MAX_CONTEXT)})
            }
            _ => continue_answer(),
        })
    }
}

impl BuiltinHook for ContextHook {
    fn intercepts(&self) -> Vec<Stage> {
        vec![Stage::Lifecycle]
    }

    fn call<'a>(&'a self, stage: Stage, params: &'a Value) -> HookFuture<'a> {
        match stage {
            Stage::Lifecycle => Box::pin(self.answer(params)),
            other => super::ready(Err(not_intercepted(self.name, other))),
        }
    }
}

/// `text` cut to at most `cap` bytes at a character boundary, with a note
/// saying so.
pub(crate) fn bounded(mut text: String, cap: usize) -> String {
    if text.len() <= cap {
        return text;
    }
    let mut end = cap;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str("\n[… cut at ");
    text.push_str(&cap.to_string());
    text.push_str(" bytes]");
    text
}

/// Adds the eight context builtins to `registry`.
pub(crate) fn register(registry: &mut BuiltinRegistry) {
    for name in NAMES {
        registry.register(
            name,
            Arc::new(move |config: &Value| {
                Ok(Arc::new(ContextHook::build(name, config)?) as Arc<dyn BuiltinHook>)
            }),
        );
    }
}

#[cfg(test)]
mod tests;

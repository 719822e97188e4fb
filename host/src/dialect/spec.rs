//! The shape of a dialect's definition: plain data that each dialect's
//! file fills in, read by the translations in both directions.

use hookhost_protocol::Stage;
use serde_json::{Map, Value};

use std::path::Path;

use super::Dialect;

/// What a native event stands for in hookhost's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// A tool or model stage.
    Stage(Stage),
    /// A lifecycle event, by its snake_case name (spec §5.9, or an open
    /// name such as `post_tool_use_failure`).
    Lifecycle(&'static str),
}

/// One native event name.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Event {
    /// The name as the agent writes it (`PreToolUse`, `BeforeTool`).
    pub(crate) native: &'static str,
    /// What it stands for.
    pub(crate) target: Target,
    /// Only for these canonical tools (Cursor's `beforeShellExecution` is
    /// before_tool of the shell tool only; `mcp` stands for every MCP
    /// tool); every tool when empty.
    pub(crate) tools: &'static [&'static str],
    /// At after_tool: only results that failed (`Some(true)`, Claude's
    /// PostToolUseFailure) or succeeded (`Some(false)`, its PostToolUse).
    pub(crate) failed: Option<bool>,
    /// What an answer may do at this event, where the dialect states it
    /// per event (docker-agent's event contracts); `None`: hookhost's
    /// rules for the target.
    pub(crate) caps: Option<Caps>,
}

/// The payload an event's answer may replace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Replaces {
    /// Nothing.
    Nothing,
    /// The tool's arguments (`updated_input`).
    ToolInput,
    /// The messages sent to the model (`updated_messages`).
    Messages,
    /// The tool's result text (`updated_tool_response`).
    ToolResponse,
}

/// What an answer may do at one event, and what a failure of the hook
/// decides there: docker-agent states this per event, and a hook written
/// for it must get the same, so that an output the agent would ignore is
/// ignored (with a warning) rather than obeyed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Caps {
    /// `decision: "block"`, `continue: false` and exit 2 stop the event.
    pub(crate) block: bool,
    /// A failure refuses, whatever `on_error` says (a security guard).
    pub(crate) fail_closed: bool,
    /// `permission_decision` (allow / ask / deny) is read.
    pub(crate) decision: bool,
    /// What a rewrite replaces.
    pub(crate) replaces: Replaces,
    /// `metadata` (key/value annotations for the approval prompt).
    pub(crate) metadata: bool,
    /// `additional_context`, and plain stdout as context.
    pub(crate) context: bool,
    /// `instruction_context`.
    pub(crate) instructions: bool,
    /// `summary` (the compaction summary).
    pub(crate) summary: bool,
    /// The answer is text, never JSON: trimmed stdout on exit 0 is the
    /// hook's contribution as written (JSON on stdout is that text too),
    /// and any other exit a failure with no effect, 2 included (Codex's
    /// UserInstructions, `codex-rs/hooks/src/events/user_instructions.rs`).
    pub(crate) literal: bool,
}

impl Caps {
    /// An observe-only event: its answer changes nothing.
    pub(crate) const OBSERVE: Caps = Caps {
        block: false,
        fail_closed: false,
        decision: false,
        replaces: Replaces::Nothing,
        metadata: false,
        context: false,
        instructions: false,
        summary: false,
        literal: false,
    };
}

/// Shorthand for a table row that covers every tool.
pub(crate) const fn ev(native: &'static str, target: Target) -> Event {
    Event {
        native,
        target,
        tools: &[],
        failed: None,
        caps: None,
    }
}

/// A row with its own capabilities (docker-agent's contracts).
pub(crate) const fn with_caps(native: &'static str, target: Target, caps: Caps) -> Event {
    Event {
        native,
        target,
        tools: &[],
        failed: None,
        caps: Some(caps),
    }
}

/// A row for some tools only.
pub(crate) const fn for_tools(
    native: &'static str,
    stage: Stage,
    tools: &'static [&'static str],
) -> Event {
    Event {
        native,
        target: Target::Stage(stage),
        tools,
        failed: None,
        caps: None,
    }
}

/// An after_tool row for failed (`true`) or successful (`false`) results.
pub(crate) const fn after(native: &'static str, failed: bool) -> Event {
    Event {
        native,
        target: Target::Stage(Stage::AfterTool),
        tools: &[],
        failed: Some(failed),
        caps: None,
    }
}

/// A tool stage's row.
pub(crate) const fn st(native: &'static str, stage: Stage) -> Event {
    ev(native, Target::Stage(stage))
}

/// A lifecycle row.
pub(crate) const fn lc(native: &'static str, canonical: &'static str) -> Event {
    ev(native, Target::Lifecycle(canonical))
}

/// A lifecycle row for an event hookhost's protocol does not wait on, but
/// whose agent lets a hook block it (Claude Code's ConfigChange): a
/// command hook's block there is the agent's answer too.
pub(crate) const fn lc_blocks(native: &'static str, canonical: &'static str) -> Event {
    Event {
        caps: Some(Caps {
            block: true,
            ..Caps::OBSERVE
        }),
        ..lc(native, canonical)
    }
}

impl Event {
    /// Whether a hook's block stops this event: a stage, a lifecycle
    /// request event that can be blocked, or an agent's own event that it
    /// lets a hook block ([`lc_blocks`]).
    pub(crate) fn can_block(&self) -> bool {
        match self.target {
            Target::Stage(_) => true,
            Target::Lifecycle(name) => {
                self.caps.is_some_and(|c| c.block)
                    || name
                        .parse::<hookhost_protocol::LifecycleEvent>()
                        .is_ok_and(hookhost_protocol::LifecycleEvent::can_block)
            }
        }
    }
}

/// How the input keys are spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Casing {
    /// `session_id`, `tool_input` (Claude Code and most others).
    Snake,
    /// `sessionId`, `toolArgs` (Copilot CLI's camelCase events).
    Camel,
}

/// How a timestamp is sent, when the dialect sends one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stamp {
    /// No `timestamp` key.
    None,
    /// RFC 3339 text.
    Iso,
    /// Milliseconds since the epoch, a number.
    Millis,
}

/// What a rewrite of the tool input means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rewrite {
    /// The whole new input (Claude's `updatedInput`, Gemini's
    /// `tool_input`): keys it leaves out are removed.
    Replace,
    /// A shallow merge over the input (docker-agent's `updated_input`).
    Merge,
}

/// How a `matcher` string is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Matching {
    /// Claude Code: a string of `[A-Za-z0-9_|, -]` is an exact list split
    /// on `|` and `,`; anything else an unanchored regex.
    ClaudeList,
    /// Codex: a string of `[A-Za-z0-9_|]` is an exact list split on `|`;
    /// anything else (a comma, a space or a hyphen too) an unanchored
    /// regex, so `Bash,Edit` selects nothing and `mcp__git-hub` selects
    /// `mcp__git-hub__push`.
    CodexList,
    /// A regex that must match the whole name (Copilot, docker-agent).
    Anchored,
    /// An unanchored regex at tool events, an exact string at lifecycle
    /// events (Gemini CLI).
    RegexTools,
}

/// What an env var a dialect sets holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EnvValue {
    /// The project folder: the agent's working directory (the event's
    /// `cwd`) for a hook its agent runs there, else the hook's folder.
    ProjectDir,
    /// The session id.
    SessionId,
    /// The agent's working directory.
    Cwd,
    /// A value only the agent knows (Gemini CLI's `GEMINI_PLANS_DIR`, from
    /// its project registry): the agent set it for the relay, so it is
    /// hookhost's own variable of the same name, passed on when set and
    /// left unset otherwise, never made up.
    FromAgent,
}

/// The host variables every command hook gets, besides `PATH`: who the
/// user is and how their terminal and locale are set, which a script
/// reads (`$HOME` under `set -u`) and no agent withholds. Secrets (keys,
/// tokens) are not among them: they reach a hook only when named in its
/// `inherit_env` or `env`.
pub(crate) const IDENTITY_ENV: [&str; 8] = [
    "HOME", "USER", "LOGNAME", "SHELL", "LANG", "TZ", "TMPDIR", "TERM",
];

/// Prefixes of further identity variables: the locale categories
/// (`LC_ALL`, `LC_CTYPE`...) and the XDG base directories.
pub(crate) const IDENTITY_PREFIXES: [&str; 2] = ["LC_", "XDG_"];

/// Whether host variable `name` is an identity or locale variable that
/// every command hook gets ([`IDENTITY_ENV`], [`IDENTITY_PREFIXES`]).
pub(crate) fn is_identity(name: &str) -> bool {
    IDENTITY_ENV.contains(&name) || IDENTITY_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// An agent that writes another agent's dialect from a settings folder of
/// its own (spec/dialects.md §8): its files' hooks get its variables
/// instead of the dialect's, and their `timeout` in its unit.
#[derive(Debug)]
pub(crate) struct Family {
    /// Its settings folder in a project (`.qwen`).
    pub(crate) folder: &'static str,
    /// The dialect its files are written in.
    pub(crate) dialect: Dialect,
    /// The variables it sets for a command hook, in place of the dialect's.
    pub(crate) env: &'static [(&'static str, EnvValue)],
    /// Milliseconds per unit of a command handler's `timeout`.
    pub(crate) timeout_unit_ms: f64,
}

/// The family members hookhost knows. Qwen Code sets all three project
/// variables and counts command timeouts in milliseconds (its
/// `docs/users/features/hooks.md`); Factory names the project
/// `FACTORY_PROJECT_DIR` and counts in seconds (its hooks reference).
pub(crate) const FAMILIES: [Family; 2] = [
    Family {
        folder: ".qwen",
        dialect: Dialect::ClaudeCode,
        env: &[
            ("QWEN_PROJECT_DIR", EnvValue::ProjectDir),
            ("CLAUDE_PROJECT_DIR", EnvValue::ProjectDir),
            ("GEMINI_PROJECT_DIR", EnvValue::ProjectDir),
        ],
        timeout_unit_ms: 1.0,
    },
    Family {
        folder: ".factory",
        dialect: Dialect::ClaudeCode,
        env: &[("FACTORY_PROJECT_DIR", EnvValue::ProjectDir)],
        timeout_unit_ms: 1000.0,
    },
];

/// The family member whose settings folder is named `folder`, writing
/// `dialect`.
pub(crate) fn family(folder: &str, dialect: Dialect) -> Option<&'static Family> {
    FAMILIES
        .iter()
        .find(|f| f.folder == folder && f.dialect == dialect)
}

/// The family member of `dialect` whose settings folder holds `file`,
/// directly (`.qwen/settings.json`) or in its `hooks/` folder.
pub(crate) fn family_of_file(file: &Path, dialect: Dialect) -> Option<&'static Family> {
    let parent = file.parent()?;
    let name = |p: &Path| p.file_name().and_then(|n| n.to_str()).map(str::to_string);
    let folder = match name(parent)?.as_str() {
        "hooks" => name(parent.parent()?)?,
        other => other.to_string(),
    };
    family(&folder, dialect)
}

/// One dialect, as data.
#[derive(Debug)]
pub(crate) struct Spec {
    /// Which one.
    pub(crate) dialect: Dialect,
    /// Its events. Names are matched exactly.
    pub(crate) events: &'static [Event],
    /// The spelling of input keys.
    pub(crate) casing: Casing,
    /// The `timestamp` it sends.
    pub(crate) stamp: Stamp,
    /// The env vars it sets for a hook.
    pub(crate) env: &'static [(&'static str, EnvValue)],
    /// The timeout of a hook that sets none, in milliseconds.
    pub(crate) default_timeout_ms: u64,
    /// How `matcher` is read.
    pub(crate) matching: Matching,
    /// What a rewrite of the tool input means.
    pub(crate) rewrite: Rewrite,
    /// Whether `ask` is an answer it takes (Codex refuses it).
    pub(crate) ask: bool,
    /// Whether it takes `continue: false` at its before-tool event. Codex
    /// does not: it counts the whole answer as a failed hook and runs the
    /// tool, so a halt there is written as the refusal alone.
    pub(crate) tool_halt: bool,
    /// Other names a `matcher` selects a native tool by, per tool: Codex
    /// runs an `Edit` or `Write` hook for `apply_patch`, so a guard written
    /// for those names must not be skipped for a patch.
    pub(crate) matcher_aliases: &'static [(&'static str, &'static [&'static str])],
    /// The canonical events at which plain (non-JSON) stdout is context.
    pub(crate) plain_context: &'static [&'static str],
    /// JSON is read from stderr when stdout is empty (Gemini CLI).
    pub(crate) json_from_stderr: bool,
    /// The answers the agent reads as having no effect, by event: `Err`
    /// says why such an answer is set aside (logged, and read as no
    /// answer) rather than obeyed. Codex checks every answer against its
    /// event's schema; the others take any answer.
    pub(crate) unusable: fn(&str, &Map<String, Value>) -> Result<(), String>,
    /// An exit 2 with nothing on stderr is not a block (Codex).
    pub(crate) block_needs_reason: bool,
}

/// [`Spec::unusable`] of a dialect that takes every answer.
pub(crate) fn takes_any(_event: &str, _answer: &Map<String, Value>) -> Result<(), String> {
    Ok(())
}

impl Event {
    /// Whether it is about one tool call (a tool stage), so that its
    /// hooks are selected by a matcher on the tool's name.
    pub(crate) fn is_about_a_tool(&self) -> bool {
        matches!(
            self.target,
            Target::Stage(Stage::BeforeTool | Stage::ApproveTool | Stage::AfterTool)
        )
    }

    /// What an answer may do here: the dialect's own contract where it
    /// states one (docker-agent), else what hookhost's reading of an
    /// answer uses at the target (spec/dialects.md §6), so that a checker
    /// can name the parts of an answer nobody will act on.
    #[cfg(feature = "conformance")]
    pub(crate) fn answer_caps(&self) -> Caps {
        if let Some(caps) = self.caps {
            return caps;
        }
        match self.target {
            Target::Stage(Stage::BeforeTool | Stage::ApproveTool) => Caps {
                block: true,
                decision: true,
                replaces: Replaces::ToolInput,
                context: self.target == Target::Stage(Stage::BeforeTool),
                ..Caps::OBSERVE
            },
            Target::Stage(Stage::AfterTool) => Caps {
                block: true,
                context: true,
                ..Caps::OBSERVE
            },
            Target::Stage(_) => Caps {
                block: true,
                ..Caps::OBSERVE
            },
            Target::Lifecycle(name) => lifecycle_caps(name),
        }
    }

    /// Whether a hook's answer here is literal text ([`Caps::literal`]).
    pub(crate) fn is_literal(&self) -> bool {
        self.caps.is_some_and(|c| c.literal)
    }

    /// Whether a failure of the hook refuses at this event whatever its
    /// `on_error` says (docker-agent's pre_tool_use and tool_guard).
    pub(crate) fn fails_closed(&self) -> bool {
        self.caps.is_some_and(|c| c.fail_closed)
    }
}

/// What a lifecycle event's answer may do: block where it can be
/// blocked, context and a summary where it takes them.
#[cfg(feature = "conformance")]
fn lifecycle_caps(name: &str) -> Caps {
    use hookhost_protocol::lifecycle::LifecycleEvent;
    let Ok(ev) = name.parse::<LifecycleEvent>() else {
        return Caps::OBSERVE;
    };
    Caps {
        block: ev.can_block(),
        context: ev.takes_context(),
        summary: ev.takes_summary(),
        ..Caps::OBSERVE
    }
}

impl Spec {
    /// Whether plain (non-JSON) stdout on exit 0 is context at `event`:
    /// the event's own contract where the dialect states one
    /// (docker-agent), else the dialect's `plain_context` list. Stated
    /// once, for the answer reader and the conformance checker alike.
    pub(crate) fn plain_is_context(&self, event: &Event) -> bool {
        match event.caps {
            Some(caps) => caps.context,
            None => {
                let name = match event.target {
                    Target::Stage(s) => s.as_str(),
                    Target::Lifecycle(n) => n,
                };
                self.plain_context.contains(&name)
            }
        }
    }

    /// The row of a native event name.
    pub(crate) fn event(&self, native: &str) -> Option<&'static Event> {
        self.events.iter().find(|e| e.native == native)
    }

    /// The casing of the input for `native`: Copilot picks VS Code's
    /// snake_case payload for an event configured in PascalCase.
    pub(crate) fn casing_of(&self, native: &str) -> Casing {
        if self.casing == Casing::Camel && native.starts_with(|c: char| c.is_ascii_uppercase()) {
            return Casing::Snake;
        }
        self.casing
    }

    /// The names a matcher may select native tool `tool` by: its own,
    /// then its aliases.
    pub(crate) fn matcher_names<'a>(&self, tool: &'a str) -> impl Iterator<Item = &'a str> {
        let aliases = self
            .matcher_aliases
            .iter()
            .find(|(t, _)| *t == tool)
            .map_or(&[][..], |(_, a)| *a);
        std::iter::once(tool).chain(aliases.iter().copied())
    }

    /// Every native name, for error messages.
    pub(crate) fn event_names(&self) -> String {
        self.events
            .iter()
            .map(|e| e.native)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

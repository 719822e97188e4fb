//! What an agent makes of a settings file it cannot fully read, so that an
//! imported file gives the hooks its own agent would run: no more (a hook
//! the agent skips is listed in [`super::SkippedHook`]s, with the reason,
//! for `hookhost check`) and no fewer (one malformed entry does not cost
//! the file's other hooks where the agent keeps them).
//!
//! - Gemini CLI skips each malformed event list, group or handler with a
//!   warning and keeps the rest (`hookRegistry.ts`, gemini-cli 5411f113);
//!   an invalid matcher regex matches the tool's exact name
//!   (`hookPlanner.ts`).
//! - Claude Code (2.1.330) strips a malformed entry with a warning, except
//!   under PreToolUse or PermissionRequest: such a hook "may be what guards
//!   the permissions declared beside it, so nothing it sits in is
//!   applied": the whole file gives no hooks. An invalid matcher regex is
//!   logged ("Invalid regex pattern in hook matcher") and never matches.
//! - Codex reads a hooks file as one typed document: a malformed entry
//!   fails the parse, and Codex runs none of the file's hooks ("failed to
//!   parse hooks config"); a matcher that is no valid regex skips its group
//!   (`codex-rs/hooks/src/engine/discovery.rs`, openai/codex ac0800ed).
//! - Cursor and Copilot are not open source; hookhost skips just the
//!   malformed entry for them.

use super::{Bad, File, Found, Run};
use crate::dialect::Dialect;
use crate::dialect::matcher::Matcher;
use crate::dialect::spec::Target;

/// `found` as the file's agent takes it: each malformed entry skipped, or,
/// where the agent then loads nothing of the file, one skipped entry that
/// stands for the whole file.
pub(super) fn tolerate(dialect: Dialect, file: &File, found: Vec<Found>) -> Vec<Found> {
    let whole = found.iter().find_map(|f| match &f.run {
        Run::Invalid(bad) => file_reason(dialect, file, &f.event, bad).map(|why| (f, why)),
        _ => None,
    });
    if let Some((first, why)) = whole {
        tracing::warn!("{}: none of its hooks run: {why}", file.path.display());
        return vec![Found {
            event: first.event.clone(),
            matcher: None,
            run: Run::skip("file", why),
            key: None,
        }];
    }
    found
}

/// Why a malformed entry under `event` costs the whole file, for an agent
/// that then runs none of it; `None` where it skips the entry alone.
fn file_reason(dialect: Dialect, file: &File, event: &str, bad: &Bad) -> Option<String> {
    let what = format!("{}: {}", bad.at, bad.message);
    match dialect {
        Dialect::Codex => Some(format!(
            "{what}; Codex cannot parse the file, so it runs none of its hooks"
        )),
        Dialect::ClaudeCode
            if file.family.is_none() && matches!(event, "PreToolUse" | "PermissionRequest") =>
        {
            Some(format!(
                "{what}; a {event} hook Claude Code cannot load may guard the permissions \
                 beside it, so it applies nothing of the file"
            ))
        }
        _ => None,
    }
}

/// Why a malformed entry that its agent skips alone is not run.
pub(super) fn entry_reason(bad: &Bad) -> String {
    format!(
        "{}: {}; its agent skips this entry and runs the rest",
        bad.at, bad.message
    )
}

/// Why a hook the file lists would not run under its agent: an event
/// hookhost does not know for the dialect, or a matcher the agent cannot
/// read (Gemini CLI's falls back to the exact name instead, see
/// [`Matcher::new`]); `None` when it runs.
pub(super) fn unusable(dialect: Dialect, file: &File, found: &Found) -> Option<String> {
    let Run::Hook(_) = &found.run else {
        return None;
    };
    let spec = dialect.spec();
    let Some(event) = spec.event(&found.event) else {
        return Some(format!(
            "`{}` is not a {dialect} event that hookhost knows, so it never fires here",
            found.event
        ));
    };
    let tool_event = matches!(event.target, Target::Stage(_));
    let error = Matcher::new(found.matcher.as_deref(), spec.matching, tool_event).err()?;
    Some(match dialect {
        Dialect::ClaudeCode if file.family.is_none() => {
            format!("{error}; Claude Code logs it and never runs the hook")
        }
        Dialect::Codex => format!("{error}; Codex skips this matcher group"),
        _ => error.to_string(),
    })
}

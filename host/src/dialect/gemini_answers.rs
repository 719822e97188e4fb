//! How Gemini CLI reads a command hook's run (packages/core/src/hooks/
//! hookRunner.ts, at 5411f11): the text is stdout, else stderr, whatever
//! the exit code; JSON (or a JSON string holding JSON) is the answer at
//! any exit code; other text is a message for the user on exit 0,
//! `Warning: <text>` on exit 1, and a refusal with the text as the reason
//! on any other exit. A run with no text has no answer. A run that exits
//! non-zero with JSON is used and still counted as a failed hook.

use serde_json::Value;

use super::Dialect;
use super::keys;
use super::reply::{Ending, ReadError, Reply, non_empty, unquote};

/// A finished run of a gemini-cli hook, read as Gemini CLI reads it.
pub(crate) fn read(end: Ending<'_>) -> Result<Reply, ReadError> {
    let text = match end.stdout.trim() {
        "" => end.stderr.trim(),
        out => out,
    };
    if text.is_empty() {
        // No output: nothing to use; a failed run is the hook's failure.
        return match end.code {
            0 => Ok(Reply::default()),
            _ => Err(ReadError::Exit),
        };
    }
    let parsed = serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| unquote(v).ok())
        .filter(Value::is_object);
    if let Some(answer) = parsed {
        let reply = Reply::from_json(&own_keys(answer)).map_err(ReadError::Invalid)?;
        return Ok(Reply {
            failed: end.code != 0,
            ..reply
        });
    }
    let text = non_empty(Some(text.to_string()));
    Ok(match end.code {
        0 => Reply {
            system_message: text,
            ..Reply::default()
        },
        1 => Reply {
            system_message: text.as_ref().map(|t| format!("Warning: {t}")),
            warned: text,
            ..Reply::default()
        },
        // A refusal by exit code, passed on as one (the agent says the
        // hook failed, as it does for its own).
        _ => Reply {
            by_exit: text.as_ref().map(|t| format!("{t}\n")),
            block: Some(text),
            ..Reply::default()
        },
    })
}

/// The keys Gemini CLI reads of an answer (`DefaultHookOutput` and its
/// event classes in types.ts; `keys.rs`): another agent's spelling in a
/// gemini-cli hook (Claude Code's `permissionDecision`) means nothing to
/// Gemini, so it means nothing here either.
fn own_keys(answer: Value) -> Value {
    let (top_keys, specific_keys) = keys::keys(Dialect::GeminiCli.spec(), "BeforeTool");
    let Value::Object(mut top) = answer else {
        return answer;
    };
    top.retain(|k, _| top_keys.contains(&k.as_str()));
    if let Some(Value::Object(s)) = top.get_mut("hookSpecificOutput") {
        s.retain(|k, _| specific_keys.contains(&k.as_str()));
    }
    Value::Object(top)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(code: i32, stdout: &str, stderr: &str) -> Result<Reply, ReadError> {
        read(Ending {
            code,
            stdout,
            stderr,
            truncated: false,
        })
    }

    #[test]
    fn text_json_and_exit_codes_read_as_gemini_reads_them() {
        let warned = run(1, "", "Command failed").expect("read");
        assert_eq!(
            warned.system_message.as_deref(),
            Some("Warning: Command failed")
        );
        let broken = run(0, "{ \"decision\": \"allow\", incomplete", "").expect("read");
        assert_eq!(
            broken.system_message.as_deref(),
            Some("{ \"decision\": \"allow\", incomplete")
        );
        let denied = run(3, "no way", "").expect("read");
        assert_eq!(denied.refusal(), Some(Some("no way".into())));
        let json_on_exit_1 = run(1, r#"{"decision":"deny","reason":"r"}"#, "").expect("read");
        let claude_spelling = r#"{"hookSpecificOutput":{"permissionDecision":"deny"}}"#;
        assert_eq!(run(0, claude_spelling, "").expect("read").refusal(), None);
        assert_eq!(json_on_exit_1.refusal(), Some(Some("r".into())));
        assert!(json_on_exit_1.failed, "used, counted failed, not handed on");
        assert!(!run(0, r#"{"decision":"deny"}"#, "").expect("read").failed);
        assert_eq!(run(1, "", ""), Err(ReadError::Exit));
        assert_eq!(run(0, " ", ""), Ok(Reply::default()));
    }
}

//! Claude Code's side: a fake Messages API following the case's plan,
//! `claude -p` in the project, and what it did.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::case::Case;
use crate::claude;
use crate::place::{self, Place};
use crate::{Mode, observe};

/// Claude's shell tool.
const SHELL: &str = "Bash";

/// The model's turn: the next call of the plan while calls remain, then
/// the case's text.
fn turn(case: &Case, body: &Value) -> (Value, &'static str) {
    let made = tool_results_in(body);
    let offers_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    match case.calls.get(made) {
        Some(input) if offers_tools => {
            let name = case.tool.clone().unwrap_or_else(|| SHELL.into());
            let call = json!({"type": "tool_use", "id": format!("toolu_{made:02}"),
                "name": name, "input": input});
            (json!([call]), "tool_use")
        }
        _ => {
            let say = case.say.clone().unwrap_or_else(|| "done".into());
            (json!([{"type": "text", "text": say}]), "end_turn")
        }
    }
}

/// How many tool results the request carries: how many calls were made.
fn tool_results_in(body: &Value) -> usize {
    let messages = body["messages"].as_array().into_iter().flatten();
    let parts = messages.flat_map(|m| m["content"].as_array().into_iter().flatten());
    parts.filter(|p| p["type"] == "tool_result").count()
}

/// Runs the case once in `mode`; what Claude did, normalised.
pub fn run(case: &Case, place: &Place, mode: Mode) -> Value {
    case.lay_out("claude-code", &place.project);
    let plugin = case.plugin.as_ref().map(|p| place.project.join(p));
    let _daemon = (mode == Mode::Hookhost).then(|| {
        let imports: Vec<_> = plugin.iter().map(|p| p.join("hooks/hooks.json")).collect();
        place.set_up_hookhost("claude-code", &imports)
    });
    let plan = case.in_project(&place.project);
    let (url, seen) = claude::fake_model_with(Arc::new(move |body| turn(&plan, body)));
    let mut cmd = claude::command(&place.project, &place.home, &url, crate::PROMPT);
    place.env(&mut cmd);
    cmd.env("ANTHROPIC_BASE_URL", &url)
        .env("ANTHROPIC_API_KEY", "sk-test-offline")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    if !case.allowed_tools.is_empty() {
        cmd.arg("--allowedTools").arg(case.allowed_tools.join(","));
    }
    if let (Some(dir), Mode::Native) = (&plugin, mode) {
        cmd.arg("--plugin-dir").arg(dir);
    }
    let ran = place::run_bounded(cmd, &place.dir);
    let requests: Vec<Value> = seen.lock().unwrap().clone();
    let main: Vec<&Value> = requests
        .iter()
        .filter(|r| r["tools"].as_array().is_some_and(|t| !t.is_empty()))
        .collect();
    let model = json!({
        "requests": main.len(),
        "last_messages": main.last().map(|r| r["messages"].clone()),
    });
    let result = result(&ran.stdout);
    observe(
        place,
        "claude-code",
        case,
        &ran,
        model,
        result,
        &ignore_line,
    )
}

/// Lines of Claude's stderr that say nothing about the case.
fn ignore_line(_line: &str) -> bool {
    false
}

/// The fields of `--output-format json` a user reads: the answer, whether
/// it is an error, what was refused, how many turns.
fn result(stdout: &str) -> Value {
    let Ok(r) = serde_json::from_str::<Value>(stdout.trim()) else {
        return json!({"unparsed_stdout": stdout});
    };
    let denials: Vec<Value> = r["permission_denials"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| json!({"tool_name": d["tool_name"], "tool_input": d["tool_input"]}))
        .collect();
    json!({
        "type": r["type"], "subtype": r["subtype"], "is_error": r["is_error"],
        "result": r["result"], "num_turns": r["num_turns"],
        "stop_reason": r["stop_reason"], "permission_denials": denials,
    })
}

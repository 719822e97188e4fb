//! Codex's side: a fake Responses API following the case's plan, `codex
//! exec` in the project (its hooks in the project's `.codex/hooks.json`,
//! the project trusted in `~/.codex/config.toml`), and what it did.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::case::Case;
use crate::codex_model::{self, FakeModel};
use crate::place::{self, Place};
use crate::{Mode, observe};

/// A model slug Codex 0.169.0 ships metadata for (it then offers
/// `apply_patch`).
const MODEL: &str = "gpt-5.5";

/// The model's turn: the next call of the plan while calls remain, then
/// the case's text.
fn turn(case: &Case, body: &Value) -> Value {
    let items = codex_model::items(body);
    let made = items
        .iter()
        .filter(|i| codex_model::is_tool_output(i))
        .count();
    match case.calls.get(made) {
        Some(Value::String(patch)) => {
            // A freeform tool (apply_patch): its input is the text.
            let name = case.tool.clone().unwrap_or_else(|| "apply_patch".into());
            json!({"type": "custom_tool_call", "id": format!("ctc_{made}"),
                "call_id": format!("call_{made}"), "name": name, "input": patch})
        }
        Some(input) => {
            let name = case.tool.clone().unwrap_or_else(|| "exec_command".into());
            let mut args = input.clone();
            if name == "exec_command" && args.get("login").is_none() {
                // A login shell reads /etc/profile, which resets PATH.
                args["login"] = json!(false);
            }
            json!({"type": "function_call", "id": format!("fc_{made}"),
                "call_id": format!("call_{made}"), "name": name,
                "arguments": args.to_string()})
        }
        None => {
            let say = case.say.clone().unwrap_or_else(|| "done".into());
            json!({"type": "message", "role": "assistant", "id": format!("msg_{made}"),
                "content": [{"type": "output_text", "text": say}]})
        }
    }
}

/// `~/.codex/config.toml`: the fake model, nothing online, the project
/// trusted (so its `.codex/hooks.json` is read).
fn write_config(place: &Place, base_url: &str) {
    let trust = format!(
        "\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
        place.project.display()
    );
    let config = codex_model::offline_config(MODEL, base_url) + &trust;
    let dir = place.home.join(".codex");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), config).unwrap();
}

/// Runs the case once in `mode`; what Codex did, normalised.
pub fn run(case: &Case, place: &Place, mode: Mode) -> Value {
    case.lay_out("codex", &place.project);
    let _daemon = (mode == Mode::Hookhost).then(|| place.set_up_hookhost("codex", &[]));
    let plan = case.in_project(&place.project);
    let model = FakeModel::start_with(Arc::new(move |body| turn(&plan, body)));
    write_config(place, &model.base_url);
    let bin = crate::agent_bin("codex");
    let mut cmd = std::process::Command::new(bin);
    place.env(&mut cmd);
    cmd.args(["exec", "--skip-git-repo-check", "--color", "never"])
        .args(["--dangerously-bypass-approvals-and-sandbox"])
        .args(["--dangerously-bypass-hook-trust", crate::PROMPT])
        .current_dir(&place.project)
        .env("HOOKHOST_TEST_OPENAI_KEY", "sk-test-offline");
    let ran = place::run_bounded(cmd, &place.dir);
    let requests = model.requests();
    let seen = json!({
        "requests": requests.len(),
        "last_input": requests.last().map(|r| r["input"].clone()),
    });
    let result = json!({"stdout": ran.stdout.trim()});
    observe(place, "codex", case, &ran, seen, result, &ignore_line)
}

/// Lines of Codex's stderr that differ from run to run and say nothing
/// about the hooks: its banner (version, session id, token counts), and
/// its progress lines for each hook it starts (`hook: PreToolUse`, `…
/// Completed`), whose number is the number of hooks configured: under
/// hookhost one relay stands for them all. A hook's `Blocked` and
/// `Stopped` are kept: they are outcomes.
fn ignore_line(line: &str) -> bool {
    let banner = ["session id:", "tokens used", "OpenAI Codex v"];
    let progress =
        line.starts_with("hook: ") && !line.ends_with(" Blocked") && !line.ends_with(" Stopped");
    progress || banner.iter().any(|p| line.contains(p))
}

//! Gemini CLI's side: a fake Gemini API following the case's plan,
//! headless `gemini -p` in a trusted project, and what it did (see
//! `tests/gemini_cli.rs` for what driving it offline takes).

use std::sync::Arc;

use serde_json::{Value, json};

use crate::case::Case;
use crate::fake_gemini::{self, FakeGemini, Request};
use crate::place::{self, Place};
use crate::{Mode, observe};

/// The model's turn: the next call of the plan while calls remain (and
/// tools are offered), then the case's text.
fn turn(case: &Case, body: &Value) -> Value {
    let contents = body["contents"].as_array().into_iter().flatten();
    let parts = contents.flat_map(|c| c["parts"].as_array().into_iter().flatten());
    let made = parts
        .filter(|p| p.get("functionResponse").is_some())
        .count();
    let offers_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    match case.calls.get(made) {
        Some(args) if offers_tools => {
            let name = case
                .tool
                .clone()
                .unwrap_or_else(|| "run_shell_command".into());
            json!({"functionCall": {"name": name, "args": args}})
        }
        _ => json!({"text": case.say.clone().unwrap_or_else(|| "done".into())}),
    }
}

/// Gemini's user settings for an offline run.
fn write_home(place: &Place) {
    let dir = place.home.join(".gemini");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = fake_gemini::offline_user_settings();
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
}

/// Whether a request is a turn of the session (not a side call asking
/// for JSON: the router, the next-speaker check).
fn is_main(r: &Request) -> bool {
    r.path.contains("enerateContent")
        && r.body["generationConfig"]["responseMimeType"] != "application/json"
}

/// Runs the case once in `mode`; what Gemini did, normalised.
pub fn run(case: &Case, place: &Place, mode: Mode) -> Value {
    case.lay_out("gemini-cli", &place.project);
    write_home(place);
    let _daemon = (mode == Mode::Hookhost).then(|| place.set_up_hookhost("gemini-cli", &[]));
    let plan = case.in_project(&place.project);
    let fake = FakeGemini::start_with(Arc::new(move |body| turn(&plan, body)));
    let mut cmd = std::process::Command::new(crate::agent_bin("gemini"));
    place.env(&mut cmd);
    cmd.args(["-p", crate::PROMPT, "--output-format", "json", "--yolo"])
        .current_dir(&place.project)
        .env("GEMINI_API_KEY", "dummy")
        .env("GOOGLE_GEMINI_BASE_URL", &fake.url)
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true");
    let ran = place::run_bounded(cmd, &place.dir);
    let requests = fake.requests();
    let main: Vec<&Request> = requests.iter().filter(|r| is_main(r)).collect();
    let model = json!({
        "requests": main.len(),
        "models": main.iter().map(|r| r.path.split('?').next().unwrap_or("").to_string()).collect::<Vec<_>>(),
        "tool_config": main.iter().map(|r| r.body["toolConfig"].clone()).collect::<Vec<_>>(),
        "last_contents": main.last().map(|r| r.body["contents"].clone()),
    });
    let result = result(&ran.stdout);
    observe(place, "gemini-cli", case, &ran, model, result, &ignore_line)
}

/// Lines of Gemini's stderr that say nothing about the case: its own
/// start-up metrics, which it prints or not depending on timing (seen in
/// one of two native runs of the same case).
fn ignore_line(line: &str) -> bool {
    line.starts_with("[STARTUP] ")
}

/// What `--output-format json` tells the user: the answer and any error.
fn result(stdout: &str) -> Value {
    match serde_json::from_str::<Value>(stdout.trim()) {
        Ok(r) => json!({"response": r["response"], "error": r["error"]}),
        Err(_) => json!({"unparsed_stdout": stdout}),
    }
}

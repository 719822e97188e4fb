//! The agents' own hook tests, ported to `hookhost relay`.
//!
//! Each case under `tests/ported/<agent>/*.json` is one test of an agent's
//! own suite (Codex's `codex-rs`, Gemini CLI's `packages/core/src/hooks/`)
//! or one documented behaviour (Cursor, Copilot), named after it, with the
//! source file and commit in its file. A case is the settings file the test
//! implies (the agent's own format, in the user's settings folder), the
//! event the agent sends, tiny hook scripts that answer as the test's hooks
//! do, and what the AGENT does with the answer. The relay stands in for the
//! whole chain as one command hook of that agent; its exit code, stdout and
//! stderr are read here exactly as that agent reads a command hook (the
//! readers below follow the agents' own parsers), and the outcome must be
//! the one the agent reaches with the hooks run by itself.
//!
//! One run reports every diverging case by name with expected and actual,
//! then fails if any diverged. `PORTED_FILTER=substring` runs a subset.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Map, Value, json};

const HOOKHOST: &str = env!("CARGO_BIN_EXE_hookhost");

/// One ported case, with the file it came from.
struct Case {
    agent: String,
    file: String,
    spec: Value,
}

fn ported_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ported")
}

/// Every case of every agent, in file order.
fn load_cases() -> Vec<Case> {
    let mut out = Vec::new();
    for agent in ["codex", "gemini-cli", "cursor", "copilot"] {
        let dir = ported_dir().join(agent);
        if !dir.exists() {
            continue;
        }
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for path in files {
            let text = std::fs::read_to_string(&path).unwrap();
            let doc: Value =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(
                doc["source"].is_string() && doc["commit"].is_string(),
                "{}: names no source and commit",
                path.display()
            );
            let file = path.file_name().unwrap().to_string_lossy().into_owned();
            for spec in doc["cases"].as_array().unwrap() {
                out.push(Case {
                    agent: agent.to_string(),
                    file: file.clone(),
                    spec: spec.clone(),
                });
            }
        }
    }
    out
}

/// A scratch folder: `home/` (the user's settings folder lives there, so
/// its hooks are the user's own and trusted), `proj/` (the session's
/// folder), `xdg/` and the hook scripts.
struct Scratch {
    root: PathBuf,
}

impl Scratch {
    fn new(index: usize) -> Self {
        let root =
            std::env::temp_dir().join(format!("hookhost-ported-{}-{index}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for d in ["home", "proj", "xdg"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        Self { root }
    }
    fn path(&self, p: &str) -> PathBuf {
        self.root.join(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Writes hook `i` of a case as an executable script and returns the
/// command that runs it. A hook is `stdout` (text, or JSON written as is),
/// `stderr` and `exit`, or its own `run` (sh; `$DIR` is the scratch folder).
fn write_hook(s: &Scratch, i: usize, hook: &Value) -> String {
    use std::os::unix::fs::PermissionsExt;
    let dir = s.root.display().to_string();
    let body = if let Some(run) = hook["run"].as_str() {
        run.replace("$DIR", &dir)
    } else {
        let out = match &hook["stdout"] {
            Value::Null => String::new(),
            Value::String(t) => t.clone(),
            v => v.to_string(),
        };
        std::fs::write(s.path(&format!("h{i}.out")), out).unwrap();
        std::fs::write(
            s.path(&format!("h{i}.err")),
            hook["stderr"].as_str().unwrap_or_default(),
        )
        .unwrap();
        format!(
            "cat >/dev/null\ncat '{dir}/h{i}.out'\ncat '{dir}/h{i}.err' >&2\nexit {}",
            hook["exit"].as_i64().unwrap_or(0)
        )
    };
    let script = s.path(&format!("h{i}.sh"));
    std::fs::write(&script, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script.display().to_string()
}

/// Merges `extra`'s keys into `target` (an object).
fn merge(target: &mut Value, extra: &Value) {
    if let (Some(t), Some(e)) = (target.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            t.insert(k.clone(), v.clone());
        }
    }
}

/// The settings file a case implies, in its agent's own format: each hook
/// its own matcher group (or the previous one, with `same_group`), in case
/// order; or the case's own `settings` with `{{H0}}`... for the commands.
fn settings(agent: &str, case: &Value, commands: &[String], root: &Path) -> Value {
    if let Some(raw) = case.get("settings") {
        return serde_json::from_str(&subst(&raw.to_string(), commands, root)).unwrap();
    }
    let event = case["event"].as_str().unwrap();
    let hooks = case["hooks"].as_array().cloned().unwrap_or_default();
    let mut list: Vec<Value> = Vec::new();
    for (hook, command) in hooks.iter().zip(commands) {
        let entry = hook_entry(agent, hook, command);
        if matches!(agent, "cursor" | "copilot") {
            list.push(entry);
            continue;
        }
        if hook["same_group"] == true
            && let Some(last) = list.last_mut()
        {
            last["hooks"].as_array_mut().unwrap().push(entry);
            continue;
        }
        let mut group = json!({"hooks": [entry]});
        if let Some(m) = hook.get("matcher") {
            group["matcher"] = m.clone();
        }
        merge(&mut group, &hook["group"]);
        list.push(group);
    }
    let mut doc = json!({"hooks": {event: list}});
    if matches!(agent, "cursor" | "copilot") {
        doc["version"] = json!(1);
    }
    merge(&mut doc, &case["settings_extra"]);
    doc
}

/// One hook's entry in its agent's settings format.
fn hook_entry(agent: &str, hook: &Value, command: &str) -> Value {
    let mut entry = match agent {
        "cursor" => json!({"command": command}),
        "copilot" => json!({"type": "command", "bash": command}),
        _ => json!({"type": "command", "command": command}),
    };
    if agent == "cursor"
        && let Some(m) = hook.get("matcher")
    {
        entry["matcher"] = m.clone();
    }
    merge(&mut entry, &hook["entry"]);
    entry
}

/// `{{H0}}`, `{{H1}}`... replaced by the hooks' commands, `{{HOME}}` by
/// the user's home and `{{DIR}}` by the scratch folder.
fn subst(text: &str, commands: &[String], root: &Path) -> String {
    let mut text = text
        .replace("{{HOME}}", &root.join("home").display().to_string())
        .replace("{{DIR}}", &root.display().to_string());
    for (i, c) in commands.iter().enumerate() {
        text = text.replace(&format!("{{{{H{i}}}}}"), c);
    }
    text
}

/// Writes the case's settings file under `home/` and returns its path:
/// the generated JSON, or `settings_file` (`path`, `text` with `{{H0}}`...)
/// for other formats (Codex's `config.toml`).
fn write_settings(agent: &str, case: &Value, commands: &[String], s: &Scratch) -> PathBuf {
    let (rel, text) = match case.get("settings_file") {
        Some(f) => {
            let text = subst(f["text"].as_str().unwrap(), commands, &s.root);
            (f["path"].as_str().unwrap().to_string(), text)
        }
        None => (
            settings_path(agent).to_string(),
            serde_json::to_string_pretty(&settings(agent, case, commands, &s.root)).unwrap(),
        ),
    };
    let file = s.path("home").join(rel);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, text).unwrap();
    // Files the case's agent would also find (a plugin's manifest).
    if let Some(extra) = case["extra_files"].as_object() {
        for (rel, text) in extra {
            let path = s.path("home").join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(
                path,
                subst(text.as_str().unwrap_or_default(), commands, &s.root),
            )
            .unwrap();
        }
    }
    file
}

/// Where the agent keeps the user's settings file (relative to `home/`).
fn settings_path(agent: &str) -> &'static str {
    match agent {
        "codex" => ".codex/hooks.json",
        "gemini-cli" => ".gemini/settings.json",
        "cursor" => ".cursor/hooks.json",
        _ => ".copilot/hooks/ported.json",
    }
}

/// The event exactly as the agent sends it: its defaults for the event,
/// then the case's `input` keys (a key set to `"$DELETE"` is removed).
fn event_input(agent: &str, event: &str, case: &Value, proj: &Path) -> Value {
    let cwd = proj.display().to_string();
    let mut input = match agent {
        "codex" => codex_input(event, &cwd),
        "gemini-cli" => gemini_input(event, &cwd),
        "cursor" => cursor_input(event, &cwd),
        _ => copilot_input(event, &cwd),
    };
    if let Some(extra) = case["input"].as_object() {
        let obj = input.as_object_mut().unwrap();
        for (k, v) in extra {
            if v == "$DELETE" {
                obj.remove(k);
            } else {
                obj.insert(k.clone(), v.clone());
            }
        }
    }
    input
}

fn codex_input(event: &str, cwd: &str) -> Value {
    let mut v = json!({"session_id": "0190aaaa-bbbb-7ccc-8ddd-eeeeffff0000", "turn_id": "turn-1",
        "transcript_path": null, "cwd": cwd, "hook_event_name": event,
        "model": "gpt-test", "permission_mode": "default"});
    let extra = match event {
        "PreToolUse" => {
            json!({"tool_name": "Bash", "tool_use_id": "call-1", "tool_input": {"command": "echo hello"}})
        }
        "PostToolUse" => json!({"tool_name": "Bash", "tool_use_id": "call-1",
            "tool_input": {"command": "echo hello"}, "tool_response": "hello"}),
        "PermissionRequest" => {
            json!({"tool_name": "Bash", "tool_input": {"command": "echo hello", "description": null}})
        }
        "UserPromptSubmit" => json!({"prompt": "hello"}),
        "Stop" => json!({"stop_hook_active": false, "last_assistant_message": "done"}),
        "SessionStart" => json!({"source": "startup"}),
        "PreCompact" | "PostCompact" => json!({"trigger": "manual"}),
        "StopFailure" => json!({"error": "server_error", "error_details": null,
            "last_assistant_message": null}),
        _ => json!({}),
    };
    merge(&mut v, &extra);
    let o = v.as_object_mut().unwrap();
    if event == "SessionStart" {
        o.remove("turn_id");
    }
    // compact.rs: PreCompact/PostCompact inputs carry no permission_mode.
    if matches!(event, "PreCompact" | "PostCompact") {
        o.remove("permission_mode");
    }
    v
}

fn gemini_input(event: &str, cwd: &str) -> Value {
    let mut v = json!({"session_id": "s-ported", "transcript_path": "/tmp/ported-transcript.json",
        "cwd": cwd, "hook_event_name": event, "timestamp": "2026-01-01T00:00:00.000Z"});
    let request =
        json!({"model": "gemini-2.5-flash", "messages": [{"role": "user", "content": "hello"}]});
    let extra = match event {
        "BeforeTool" => json!({"tool_name": "run_shell_command", "tool_input": {"command": "ls"}}),
        "AfterTool" => json!({"tool_name": "run_shell_command", "tool_input": {"command": "ls"},
            "tool_response": {"llmContent": "ok", "returnDisplay": "ok"}}),
        "BeforeAgent" => json!({"prompt": "hello"}),
        "AfterAgent" => {
            json!({"prompt": "hello", "prompt_response": "hi", "stop_hook_active": false})
        }
        "BeforeModel" | "BeforeToolSelection" => json!({"llm_request": request}),
        "AfterModel" => json!({"llm_request": request, "llm_response":
            {"candidates": [{"content": {"role": "model", "parts": ["hi"]}, "finishReason": "STOP"}]}}),
        "SessionStart" => json!({"source": "startup"}),
        "SessionEnd" => json!({"reason": "exit"}),
        "PreCompress" => json!({"trigger": "manual"}),
        "Notification" => {
            json!({"notification_type": "ToolPermission", "message": "m", "details": {}})
        }
        _ => json!({}),
    };
    merge(&mut v, &extra);
    v
}

fn cursor_input(event: &str, cwd: &str) -> Value {
    let mut v = json!({"conversation_id": "c-ported", "generation_id": "g-1", "model": "claude-4.5-sonnet",
        "hook_event_name": event, "cursor_version": "2.4.0", "workspace_roots": [cwd],
        "user_email": null, "transcript_path": null});
    let extra = match event {
        "preToolUse" => json!({"tool_name": "Shell", "tool_input": {"command": "ls"},
            "tool_use_id": "t-1", "cwd": cwd}),
        "postToolUse" => json!({"tool_name": "Shell", "tool_input": {"command": "ls"},
            "tool_output": "{\"output\":\"ok\"}", "tool_use_id": "t-1", "cwd": cwd, "duration": 5}),
        "beforeShellExecution" => json!({"command": "ls", "cwd": cwd, "sandbox": false}),
        "afterShellExecution" => json!({"command": "ls", "output": "ok", "duration": 5}),
        "beforeMCPExecution" => json!({"tool_name": "get_issue", "tool_input": "{\"id\":1}",
            "command": "npx issues-mcp"}),
        "beforeReadFile" => {
            json!({"file_path": format!("{cwd}/a.txt"), "content": "x", "attachments": []})
        }
        "afterFileEdit" => json!({"file_path": format!("{cwd}/a.txt"), "edits": []}),
        "beforeSubmitPrompt" => json!({"prompt": "hello", "attachments": []}),
        "stop" => json!({"status": "completed", "loop_count": 0}),
        "sessionStart" => json!({"session_id": "c-ported", "is_background_agent": false,
            "composer_mode": "agent"}),
        _ => json!({}),
    };
    merge(&mut v, &extra);
    v
}

fn copilot_input(event: &str, cwd: &str) -> Value {
    let mut v = json!({"sessionId": "6d0f4b2e-8c1a-4f3d-b5e7-9a2c4e6f8b10",
        "timestamp": 1_767_225_600_000_u64, "cwd": cwd});
    let tool = json!({"toolName": "bash", "toolArgs": "{\"command\":\"ls\"}"});
    let transcript = "/home/dev/.copilot/session-state/ported/events.jsonl";
    let extra = match event {
        "preToolUse" | "permissionRequest" => tool,
        "postToolUse" => json!({"toolName": "bash", "toolArgs": "{\"command\":\"ls\"}",
            "toolResult": {"resultType": "success", "textResultForLlm": "ok"}}),
        "postToolUseFailure" => json!({"toolName": "bash", "toolArgs": "{\"command\":\"ls\"}",
            "error": "exit status 1"}),
        "userPromptSubmitted" => json!({"prompt": "hello"}),
        "sessionStart" => json!({"source": "new", "initialPrompt": "hello"}),
        "sessionEnd" => json!({"reason": "complete"}),
        "agentStop" => json!({"transcriptPath": transcript, "stopReason": "end_turn"}),
        "subagentStart" => json!({"transcriptPath": transcript, "agentName": "explore"}),
        "subagentStop" => json!({"transcriptPath": transcript, "agentName": "explore",
            "stopReason": "end_turn"}),
        "notification" => json!({"hook_event_name": "Notification", "message": "Shell completed",
            "title": "Shell completed", "notification_type": "shell_completed"}),
        "preCompact" => json!({"transcriptPath": transcript, "trigger": "manual",
            "customInstructions": ""}),
        "errorOccurred" => json!({"error": {"message": "boom", "name": "Error", "stack": ""},
            "errorContext": "system", "recoverable": true}),
        _ => json!({}),
    };
    merge(&mut v, &extra);
    v
}

/// The relay's exit code, stdout and stderr for one case.
struct Answer {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run_relay(agent: &str, case: &Value, s: &Scratch) -> Answer {
    let hooks = case["hooks"].as_array().cloned().unwrap_or_default();
    let commands: Vec<String> = hooks
        .iter()
        .enumerate()
        .map(|(i, h)| write_hook(s, i, h))
        .collect();
    let file = write_settings(agent, case, &commands, s);
    let event = case["event"].as_str().unwrap();
    let input = event_input(agent, event, case, &s.path("proj"));
    let mut cmd = Command::new(HOOKHOST);
    cmd.args(["relay", "--dialect", agent, "-c"]).arg(&file);
    if agent == "copilot" && !event.starts_with(|c: char| c.is_ascii_uppercase()) {
        cmd.args(["--event", event]);
    }
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", s.path("home"))
        .env("XDG_CONFIG_HOME", s.path("xdg"))
        .env("USER", "ported")
        .current_dir(s.path("proj"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        let _ = stdin.write_all(input.to_string().as_bytes());
    }
    let out = child.wait_with_output().unwrap();
    Answer {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

// ---------------------------------------------------------------------
// Codex: codex-rs/hooks/src/engine/output_parser.rs and the
// parse_completed of each event in codex-rs/hooks/src/events/*.rs, for one
// handler (the relay). Outcome keys: block (PreToolUse refusal reason),
// context (list), updated_input, system_message, stop (continue:false or a
// prompt block: its reason, or null), feedback (PostToolUse text replacing
// the tool output), continuation (Stop: the next prompt), permission
// ("allow" or {"deny": message}).
// ---------------------------------------------------------------------

fn trimmed(s: &str) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

fn looks_like_json(s: &str) -> bool {
    let t = s.trim_start();
    t.starts_with('{') || t.starts_with('[')
}

/// Codex's `parse_json`: one JSON object, else nothing.
fn json_object(stdout: &str) -> Option<Map<String, Value>> {
    let t = stdout.trim();
    if t.is_empty() {
        return None;
    }
    serde_json::from_str::<Value>(t).ok()?.as_object().cloned()
}

/// Codex's universal fields: (continue, stopReason, suppressOutput,
/// systemMessage); None when a field has the wrong type (serde refuses
/// the whole answer).
fn codex_universal(o: &Map<String, Value>) -> Option<(bool, Option<String>, bool, Option<String>)> {
    let opt_str = |k: &str| match o.get(k) {
        None | Some(Value::Null) => Some(None),
        Some(Value::String(s)) => Some(Some(s.clone())),
        _ => None,
    };
    let opt_bool = |k: &str, d: bool| match o.get(k) {
        None => Some(d),
        Some(Value::Bool(b)) => Some(*b),
        _ => None,
    };
    Some((
        opt_bool("continue", true)?,
        opt_str("stopReason")?,
        opt_bool("suppressOutput", false)?,
        opt_str("systemMessage")?,
    ))
}

fn codex_read(event: &str, a: &Answer) -> Value {
    let mut out = Map::new();
    match a.code {
        0 => codex_read_stdout(event, &a.stdout, &mut out),
        2 => {
            if let Some(reason) = trimmed(&a.stderr) {
                let (k, v) = match event {
                    "PreToolUse" => ("block", json!(reason)),
                    "PostToolUse" => ("feedback", json!(reason)),
                    "UserPromptSubmit" => ("stop", json!(reason)),
                    "Stop" | "SubagentStop" => ("continuation", json!(reason)),
                    "PermissionRequest" => ("permission", json!({"deny": reason})),
                    _ => ("ignored", Value::Null),
                };
                if k != "ignored" {
                    out.insert(k.into(), v);
                }
            }
        }
        _ => {}
    }
    Value::Object(out)
}

fn codex_read_stdout(event: &str, stdout: &str, out: &mut Map<String, Value>) {
    if stdout.trim().is_empty() {
        return;
    }
    let Some(o) = json_object(stdout) else {
        // Plain text: context where Codex takes it, else ignored (Stop
        // fails on anything that is not JSON: no effect either).
        if !looks_like_json(stdout)
            && matches!(event, "SessionStart" | "SubagentStart" | "UserPromptSubmit")
        {
            out.insert("context".into(), json!([stdout.trim()]));
        }
        return;
    };
    if !codex_schema_ok(event, &o) {
        return;
    }
    let Some((cont, stop_reason, suppress, system)) = codex_universal(&o) else {
        return;
    };
    if let Some(m) = system {
        out.insert("system_message".into(), json!(m));
    }
    let hso = o.get("hookSpecificOutput").and_then(Value::as_object);
    let context = hso
        .and_then(|h| h.get("additionalContext"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let reason = o.get("reason").and_then(Value::as_str).map(str::to_string);
    let decision = o.get("decision").and_then(Value::as_str);
    let ctx = |out: &mut Map<String, Value>| {
        if let Some(c) = &context {
            out.insert("context".into(), json!([c]));
        }
    };
    match event {
        "PreToolUse" => codex_pre_tool_use(&o, cont, stop_reason.is_some(), suppress, out),
        "PostToolUse" => {
            if suppress {
                return;
            }
            let block = decision == Some("block");
            let invalid_block = (block && reason.as_deref().and_then(trimmed).is_none())
                || (!block && cont && reason.is_some());
            if !invalid_block {
                ctx(out);
            }
            if !cont {
                let text = stop_reason
                    .clone()
                    .unwrap_or_else(|| "PostToolUse hook stopped execution".into());
                out.insert("stop".into(), json!(stop_reason));
                let fb = reason.as_deref().and_then(trimmed).unwrap_or(text);
                out.insert("feedback".into(), json!(fb));
            } else if block && !invalid_block {
                out.insert("feedback".into(), json!(reason));
            }
        }
        "UserPromptSubmit" => {
            let block = decision == Some("block");
            let invalid_block = block && reason.as_deref().and_then(trimmed).is_none();
            if !invalid_block {
                ctx(out);
            }
            if !cont {
                out.insert("stop".into(), json!(stop_reason));
            } else if block && !invalid_block {
                out.insert("stop".into(), json!(reason));
            }
        }
        "Stop" | "SubagentStop" => {
            if !cont {
                out.insert("stop".into(), json!(stop_reason));
            } else if decision == Some("block")
                && let Some(r) = reason.as_deref().and_then(trimmed)
            {
                out.insert("continuation".into(), json!(r));
            }
        }
        "SessionStart" | "SubagentStart" => {
            ctx(out);
            if event == "SessionStart" && !cont {
                out.insert("stop".into(), json!(stop_reason));
            }
        }
        "PermissionRequest" => codex_permission(hso, cont, stop_reason.is_some(), suppress, out),
        "PreCompact" | "PostCompact" => {
            if !cont {
                out.insert("stop".into(), json!(stop_reason));
            }
        }
        "StopFailure" => codex_stop_failure(hso, out),
        _ => {}
    }
}

/// The keys each event's output schema allows
/// (`codex-rs/hooks/schema/generated/*.command.output.schema.json`:
/// `additionalProperties: false`, `hookEventName` required): any other
/// key, and Codex refuses the whole answer.
fn codex_schema_ok(event: &str, o: &Map<String, Value>) -> bool {
    const UNIVERSAL: [&str; 4] = ["continue", "stopReason", "suppressOutput", "systemMessage"];
    let (top, hso): (&[&str], &[&str]) = match event {
        "PreToolUse" => (
            &["decision", "reason", "hookSpecificOutput"],
            &[
                "additionalContext",
                "permissionDecision",
                "permissionDecisionReason",
                "updatedInput",
            ],
        ),
        "PostToolUse" => (
            &["decision", "reason", "hookSpecificOutput"],
            &[
                "additionalContext",
                "updatedMCPToolOutput",
                "updatedToolOutput",
            ],
        ),
        "Stop" | "SubagentStop" => (&["decision", "reason"], &[]),
        "UserPromptSubmit" => (
            &["decision", "reason", "hookSpecificOutput"],
            &["additionalContext"],
        ),
        "SessionStart" | "SubagentStart" => {
            (&["hookSpecificOutput"], &["additionalContext", "env"])
        }
        "PermissionRequest" => (&["hookSpecificOutput"], &["decision"]),
        "StopFailure" => (&["hookSpecificOutput"], &["recovery"]),
        _ => (&[], &[]),
    };
    let keys_ok = o
        .keys()
        .all(|k| UNIVERSAL.contains(&k.as_str()) || top.contains(&k.as_str()));
    let hso_ok = match o.get("hookSpecificOutput") {
        None | Some(Value::Null) => true,
        Some(Value::Object(h)) => {
            h.contains_key("hookEventName")
                && h.keys()
                    .all(|k| k == "hookEventName" || hso.contains(&k.as_str()))
        }
        Some(_) => false,
    };
    keys_ok && hso_ok
}

/// StopFailure (`events/stop_failure.rs`): a `recovery` of action `retry`
/// retries the turn on the model it selects; an `id` selector with a
/// blank id refuses the answer.
fn codex_stop_failure(hso: Option<&Map<String, Value>>, out: &mut Map<String, Value>) {
    let Some(r) = hso
        .and_then(|h| h.get("recovery"))
        .and_then(Value::as_object)
    else {
        return;
    };
    if r.get("action") != Some(&json!("retry")) {
        return;
    }
    let model = r
        .get("model")
        .cloned()
        .unwrap_or(json!({"selector": "current"}));
    let blank_id = model.get("selector") == Some(&json!("id"))
        && model
            .get("id")
            .and_then(Value::as_str)
            .and_then(trimmed)
            .is_none();
    if !blank_id {
        out.insert("recovery".into(), json!({"retry": model}));
    }
}

fn codex_pre_tool_use(
    o: &Map<String, Value>,
    cont: bool,
    has_stop_reason: bool,
    suppress: bool,
    out: &mut Map<String, Value>,
) {
    if !cont || has_stop_reason || suppress {
        return;
    }
    let hso = o.get("hookSpecificOutput").and_then(Value::as_object);
    let get = |k: &str| hso.and_then(|h| h.get(k)).filter(|v| !v.is_null());
    let pd = get("permissionDecision").and_then(Value::as_str);
    let pdr = get("permissionDecisionReason").and_then(Value::as_str);
    let updated = get("updatedInput").cloned();
    if let Some(c) = get("additionalContext").and_then(Value::as_str) {
        out.insert("context".into(), json!([c]));
    }
    let specific = pd.is_some() || pdr.is_some() || updated.is_some();
    let invalid = if specific {
        (updated.is_some() && pd != Some("allow"))
            || match pd {
                Some("allow") => updated.is_none(),
                Some("deny") => pdr.and_then(trimmed).is_none(),
                Some(_) => true,
                None => pdr.is_some(),
            }
    } else {
        let reason = o.get("reason").and_then(Value::as_str);
        match o.get("decision").and_then(Value::as_str) {
            Some("block") => reason.and_then(trimmed).is_none(),
            Some(_) => true,
            None => reason.is_some(),
        }
    };
    if invalid {
        out.remove("context");
        return;
    }
    if specific {
        if pd == Some("deny") {
            out.insert("block".into(), json!(pdr.and_then(trimmed)));
        } else if let Some(u) = updated {
            out.insert("updated_input".into(), u);
        }
    } else if o.get("decision").and_then(Value::as_str) == Some("block") {
        let r = o.get("reason").and_then(Value::as_str).and_then(trimmed);
        out.insert("block".into(), json!(r));
    }
}

fn codex_permission(
    hso: Option<&Map<String, Value>>,
    cont: bool,
    has_stop_reason: bool,
    suppress: bool,
    out: &mut Map<String, Value>,
) {
    if !cont || has_stop_reason || suppress {
        return;
    }
    let Some(d) = hso
        .and_then(|h| h.get("decision"))
        .and_then(Value::as_object)
    else {
        return;
    };
    if d.get("updatedInput").is_some()
        || d.get("updatedPermissions").is_some()
        || d.get("interrupt") == Some(&json!(true))
    {
        return;
    }
    match d.get("behavior").and_then(Value::as_str) {
        Some("allow") => {
            out.insert("permission".into(), json!("allow"));
        }
        Some("deny") => {
            let m = d
                .get("message")
                .and_then(Value::as_str)
                .and_then(trimmed)
                .unwrap_or_else(|| "PermissionRequest hook denied approval".into());
            out.insert("permission".into(), json!({"deny": m}));
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------
// Gemini CLI: hookRunner.ts (stdout || stderr, JSON or plain text by exit
// code), hookAggregator.ts (the event's merge, here of the relay's one
// output) and the accessors of types.ts the callers read. Outcome keys:
// block (isBlockingDecision: getEffectiveReason), ask, stop
// (shouldStopExecution: getEffectiveReason), system_message (unless
// suppressOutput), context, tool_input, tail_tool_call, clear_context,
// llm_request, llm_response, tool_config.
// ---------------------------------------------------------------------

fn gemini_output(a: &Answer) -> Option<Map<String, Value>> {
    let text = trimmed(&a.stdout).or_else(|| trimmed(&a.stderr))?;
    match serde_json::from_str::<Value>(&text) {
        Ok(v) => {
            let v = match v {
                Value::String(s) => serde_json::from_str::<Value>(&s).ok()?,
                v => v,
            };
            match v {
                Value::Object(o) => Some(o),
                Value::Array(_) => Some(Map::new()),
                _ => None,
            }
        }
        Err(_) => {
            let code = if a.code == -1 { 0 } else { a.code };
            Some(match code {
                0 => json!({"decision": "allow", "systemMessage": text}),
                1 => json!({"decision": "allow", "systemMessage": format!("Warning: {text}")}),
                _ => json!({"decision": "deny", "reason": text}),
            })
            .and_then(|v| v.as_object().cloned())
        }
    }
}

/// hookAggregator's merge of one output for `event`.
fn gemini_merge(event: &str, o: Map<String, Value>) -> Map<String, Value> {
    match event {
        "BeforeTool" | "AfterTool" | "BeforeAgent" | "AfterAgent" | "SessionStart" => {
            let mut m = o.clone();
            let decision = o.get("decision").and_then(Value::as_str);
            let blocking_or_ask = matches!(decision, Some("block" | "deny" | "ask"));
            if !blocking_or_ask && o.get("continue") != Some(&json!(false)) {
                m.insert("decision".into(), json!("allow"));
            }
            if o.get("continue") != Some(&json!(false)) {
                m.insert("continue".into(), json!(true));
                m.remove("stopReason");
            }
            m
        }
        "BeforeToolSelection" => {
            let tc = o
                .get("hookSpecificOutput")
                .and_then(|h| h.get("toolConfig"))
                .cloned()
                .unwrap_or(Value::Null);
            let mode = match tc.get("mode").and_then(Value::as_str) {
                Some("NONE") => "NONE",
                Some("ANY") => "ANY",
                _ => "AUTO",
            };
            let mut names: Vec<String> = if mode == "NONE" {
                Vec::new()
            } else {
                tc.get("allowedFunctionNames")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|v| v.as_str().map(String::from))
                            .collect()
                    })
                    .unwrap_or_default()
            };
            names.sort();
            names.dedup();
            json!({"hookSpecificOutput": {"hookEventName": "BeforeToolSelection",
                "toolConfig": {"mode": mode, "allowedFunctionNames": names}}})
            .as_object()
            .cloned()
            .unwrap()
        }
        _ => o,
    }
}

fn gemini_read(event: &str, a: &Answer) -> Value {
    let mut out = Map::new();
    let Some(o) = gemini_output(a) else {
        return Value::Object(out);
    };
    let m = gemini_merge(event, o);
    let s = |k: &str| m.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
    let reason = || {
        s("stopReason")
            .or(s("reason"))
            .unwrap_or("No reason provided")
            .to_string()
    };
    match s("decision") {
        Some("block" | "deny") => {
            out.insert("block".into(), json!(reason()));
        }
        Some("ask") => {
            out.insert("ask".into(), json!(true));
        }
        _ => {}
    }
    if m.get("continue") == Some(&json!(false)) {
        out.insert("stop".into(), json!(reason()));
    }
    if let Some(msg) = s("systemMessage")
        && m.get("suppressOutput") != Some(&json!(true))
    {
        out.insert("system_message".into(), json!(msg));
    }
    gemini_specific(event, m.get("hookSpecificOutput"), &mut out);
    // Every caller checks shouldStopExecution before the decision
    // (client.ts, coreToolHookTriggers.ts, hook-utils.ts): a stop hides it.
    if out.contains_key("stop") {
        out.remove("block");
        out.remove("ask");
    }
    Value::Object(out)
}

fn gemini_specific(event: &str, hso: Option<&Value>, out: &mut Map<String, Value>) {
    let Some(h) = hso.and_then(Value::as_object) else {
        return;
    };
    if let Some(c) = h.get("additionalContext").and_then(Value::as_str) {
        out.insert(
            "context".into(),
            json!(c.replace('<', "&lt;").replace('>', "&gt;")),
        );
    }
    let obj = |k: &str| h.get(k).filter(|v| v.is_object()).cloned();
    match event {
        "BeforeTool" => {
            if let Some(v) = obj("tool_input") {
                out.insert("tool_input".into(), v);
            }
        }
        "AfterTool" => {
            if let Some(v) = obj("tailToolCallRequest") {
                out.insert("tail_tool_call".into(), v);
            }
        }
        "AfterAgent" => {
            if h.get("clearContext") == Some(&json!(true)) {
                out.insert("clear_context".into(), json!(true));
            }
        }
        "BeforeModel" => {
            for k in ["llm_request", "llm_response"] {
                if let Some(v) = h.get(k).filter(|v| !v.is_null()) {
                    out.insert(k.into(), v.clone());
                }
            }
        }
        "AfterModel" => {
            let parts = h.get("llm_response").and_then(|r| {
                r.pointer("/candidates/0/content/parts")
                    .and_then(Value::as_array)
                    .filter(|p| !p.is_empty())
            });
            if parts.is_some() {
                out.insert("llm_response".into(), h["llm_response"].clone());
            }
        }
        "BeforeToolSelection" => {
            if let Some(v) = h.get("toolConfig") {
                out.insert("tool_config".into(), v.clone());
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------
// Cursor, as documented (https://cursor.com/docs/agent/hooks): exit 2 is a
// deny; any other non-zero exit is a failed hook (the relay's own entry
// is what the agent reads, so a failure shows as `failed`); on exit 0 the
// JSON keys the event reads: permission, user_message, agent_message
// (before* and preToolUse), updated_input (preToolUse),
// additional_context (context), continue (beforeSubmitPrompt),
// followup_message (followup; stop and subagentStop read only this).
// ---------------------------------------------------------------------

fn cursor_keys(event: &str) -> &'static [(&'static str, &'static str)] {
    match event {
        "beforeShellExecution" | "beforeMCPExecution" => &[
            ("permission", "permission"),
            ("user_message", "user_message"),
            ("agent_message", "agent_message"),
        ],
        "beforeReadFile" => &[("permission", "permission")],
        "preToolUse" => &[
            ("permission", "permission"),
            ("user_message", "user_message"),
            ("agent_message", "agent_message"),
            ("updated_input", "updated_input"),
        ],
        "postToolUse" | "postToolUseFailure" | "sessionStart" => {
            &[("additional_context", "context")]
        }
        "beforeSubmitPrompt" => &[("continue", "continue"), ("user_message", "user_message")],
        "stop" | "subagentStop" => &[("followup_message", "followup")],
        _ => &[],
    }
}

/// Copies `keys` (wire name, outcome name) present in `o` into `out`.
fn pick(o: &Map<String, Value>, keys: &[(&str, &str)], out: &mut Map<String, Value>) {
    for (wire, key) in keys {
        if let Some(v) = o.get(*wire).filter(|v| !v.is_null()) {
            out.entry(key.to_string()).or_insert_with(|| v.clone());
        }
    }
}

fn cursor_read(event: &str, a: &Answer) -> Value {
    let mut out = Map::new();
    match a.code {
        0 => {
            if let Some(o) = json_object(&a.stdout) {
                pick(&o, cursor_keys(event), &mut out);
            }
        }
        2 => {
            out.insert("permission".into(), json!("deny"));
        }
        code => {
            out.insert("failed".into(), json!(code));
        }
    }
    Value::Object(out)
}

// ---------------------------------------------------------------------
// GitHub Copilot CLI, as documented (github/docs
// content/copilot/reference/copilot-cli-reference/cli-hooks-reference.md):
// hook failures (non-zero exits, timeouts) are logged and skipped, except
// exit 2 at permissionRequest (a deny, stdout JSON merged in, stderr
// ignored) and at postToolUseFailure (stderr is recovery guidance, read
// like additionalContext). On
// exit 0: preToolUse permissionDecision (permission),
// permissionDecisionReason (reason), modifiedArgs (updated_input);
// permissionRequest behavior, message, interrupt; agentStop/subagentStop
// decision block + reason (continuation); notification, subagentStart and
// postToolUseFailure additionalContext (context). Other events' output is
// not processed.
// ---------------------------------------------------------------------

fn copilot_read(event: &str, a: &Answer) -> Value {
    let mut out = Map::new();
    let json = json_object(&a.stdout);
    match (event, a.code) {
        ("permissionRequest", 2) => {
            let mut o = json.unwrap_or_default();
            o.insert("behavior".into(), json!("deny"));
            pick(&o, COPILOT_PERMISSION, &mut out);
        }
        ("postToolUseFailure", 2) => {
            // Recovery guidance reaches the assistant as additional
            // context, whichever way the hook gave it.
            if let Some(g) = trimmed(&a.stderr) {
                out.insert("context".into(), json!(g));
            }
        }
        (_, 0) => copilot_stdout(event, json.unwrap_or_default(), &mut out),
        _ => {}
    }
    Value::Object(out)
}

const COPILOT_PERMISSION: &[(&str, &str)] = &[
    ("behavior", "behavior"),
    ("message", "message"),
    ("interrupt", "interrupt"),
];

fn copilot_stdout(event: &str, o: Map<String, Value>, out: &mut Map<String, Value>) {
    match event {
        "preToolUse" => {
            pick(
                &o,
                &[
                    ("permissionDecision", "permission"),
                    ("permissionDecisionReason", "reason"),
                    ("modifiedArgs", "updated_input"),
                ],
                out,
            );
            // modifiedArgs may come as JSON text, as toolArgs does.
            if let Some(Value::String(text)) = out.get("updated_input").cloned()
                && let Ok(v) = serde_json::from_str::<Value>(&text)
            {
                out.insert("updated_input".into(), v);
            }
        }
        "permissionRequest" => pick(&o, COPILOT_PERMISSION, out),
        "agentStop" | "subagentStop" => {
            if o.get("decision") == Some(&json!("block")) {
                out.insert(
                    "continuation".into(),
                    o.get("reason").cloned().unwrap_or(Value::Null),
                );
            }
        }
        "notification" | "subagentStart" | "postToolUseFailure" => {
            pick(&o, &[("additionalContext", "context")], out);
        }
        _ => {}
    }
}

/// Texts the agent hands the model as one or several messages (context,
/// a stop hook's next prompt, PostToolUse feedback) compare as their
/// non-empty lines: two hooks' contexts as two messages or one joined
/// message reach the model alike.
fn normalize(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        for k in ["context", "continuation", "feedback"] {
            let lines = |s: &str| -> Vec<Value> {
                s.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map(|l| json!(l))
                    .collect()
            };
            let new = match o.get(k) {
                Some(Value::String(s)) => lines(s),
                Some(Value::Array(a)) => a
                    .iter()
                    .flat_map(|x| lines(x.as_str().unwrap_or_default()))
                    .collect(),
                _ => continue,
            };
            o.insert(k.into(), Value::Array(new));
        }
    }
    v
}

fn read(agent: &str, event: &str, a: &Answer) -> Value {
    match agent {
        "codex" => codex_read(event, a),
        "gemini-cli" => gemini_read(event, a),
        "cursor" => cursor_read(event, a),
        _ => copilot_read(event, a),
    }
}

/// At most 400 characters of `s`, for the report.
fn clip(s: &str) -> String {
    match s.char_indices().nth(400) {
        Some((i, _)) => format!("{}... ({} bytes)", &s[..i], s.len()),
        None => s.to_string(),
    }
}

/// Runs one case; a divergence report, or None when the agent's outcome
/// is reached.
fn check(index: usize, case: &Case) -> Option<String> {
    let spec = &case.spec;
    let name = spec["name"].as_str().unwrap();
    let event = spec["event"].as_str().unwrap();
    let scratch = Scratch::new(index);
    let answer = run_relay(&case.agent, spec, &scratch);
    let mut got = normalize(read(&case.agent, event, &answer));
    let want = normalize(spec["expect"].clone());
    // `compare`: only these outcome keys are documented for the case.
    if let (Some(keys), Some(o)) = (spec["compare"].as_array(), got.as_object_mut()) {
        o.retain(|k, _| keys.iter().any(|x| x == k.as_str()));
    }
    // A listed addition (spec/dialects.md): hookhost's documented answer
    // where it deliberately differs, allowed only when it adds.
    let addition = spec["addition"]["expect"].clone();
    let mut problems = Vec::new();
    if got != want && (addition.is_null() || got != normalize(addition)) {
        problems.push(format!(
            "  expected (agent): {}\n  actual (relay):   {}",
            clip(&want.to_string()),
            clip(&got.to_string())
        ));
    }
    // Gemini reads stderr as the hook's text when stdout is empty, and
    // the agents show it: the relay writes there only a refusal's reason.
    if answer.code == 0 && !answer.stderr.trim().is_empty() && spec["stderr_ok"] != true {
        problems.push("  relay wrote on stderr with exit 0 (the agent may read it)".to_string());
    }
    if problems.is_empty() {
        return None;
    }
    Some(format!(
        "{name}  [{}/{}]\n{}\n  relay exit {}, stdout: {}, stderr: {}",
        case.agent,
        case.file,
        problems.join("\n"),
        answer.code,
        clip(answer.stdout.trim()),
        clip(answer.stderr.trim())
    ))
}

#[test]
fn ported_agent_hook_tests() {
    let filter = std::env::var("PORTED_FILTER").unwrap_or_default();
    let cases: Vec<Case> = load_cases()
        .into_iter()
        .filter(|c| c.spec["name"].as_str().unwrap().contains(&filter))
        .collect();
    let mut names = std::collections::HashSet::new();
    for c in &cases {
        assert!(
            names.insert(c.spec["name"].as_str().unwrap().to_string()),
            "duplicate case name {}",
            c.spec["name"]
        );
    }
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(4, |n| n.get() * 2);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(case) = cases.get(i) else { break };
                    if let Some(report) = check(i, case) {
                        failures.lock().unwrap().push((i, report));
                    }
                }
            });
        }
    });
    let mut failures = failures.into_inner().unwrap();
    failures.sort();
    for (_, report) in &failures {
        eprintln!("DIVERGES {report}\n");
    }
    let mut per_agent = std::collections::BTreeMap::<&str, (usize, usize)>::new();
    for (i, c) in cases.iter().enumerate() {
        let e = per_agent.entry(c.agent.as_str()).or_default();
        e.0 += 1;
        if failures.iter().any(|(j, _)| *j == i) {
            e.1 += 1;
        }
    }
    for (agent, (total, bad)) in &per_agent {
        eprintln!(
            "{agent}: {total} cases, {} as the agent, {bad} diverge",
            total - bad
        );
    }
    assert!(
        failures.is_empty(),
        "{} of {} ported cases diverge from their agent (listed above)",
        failures.len(),
        cases.len()
    );
}

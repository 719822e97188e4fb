//! The real Claude Code under hookhost, as a user sets it up: `hookhost
//! install claude-code --via http` writes the user's settings (HTTP hooks
//! to the daemon carrying the user's token, fail-closed where hookhost can
//! refuse), `hookhost serve
//! --socket --listen` runs the chain warm, and `claude -p` runs offline
//! against a fake Messages API. The chain mixes kinds: the example Python
//! SDK guard, a Python SDK policy hook (`tests/agents/policy.py`: a rewrite,
//! prompt context, one stop refused), and two Claude-format command hooks.
//! Then, with the daemon stopped, the same install refuses.

#![allow(clippy::unwrap_used)]

#[path = "common/claude.rs"]
mod claude;
mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

/// The daemon's hooks.toml, in `dir`.
fn hooks_toml(dir: &Path) -> PathBuf {
    let repo = repo();
    let describe = r#"jq -c '{hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision: "allow", updatedInput: (.tool_input + {description: "audited by hookhost"})}}'"#;
    let text = format!(
        r#"[hooks.audit]
path = "audit.jsonl"

[hooks.processes.guard]
command = ["python3", "{guard}"]
intercept = ["before_tool"]
priority = 10
on_error = "deny"

[hooks.processes.policy]
command = ["python3", "{policy}"]
env = {{ PYTHONPATH = "{sdk}" }}
intercept = ["before_tool", "lifecycle"]
priority = 20

[hooks.commands.describe]
dialect = "claude-code"
events = ["PreToolUse"]
matcher = "Bash"
command = {describe:?}
priority = 30

[hooks.commands.record]
dialect = "claude-code"
events = ["PostToolUse"]
command = "cat >> '{post}'; echo >> '{post}'"
"#,
        guard = repo.join("examples/python/guard.py").display(),
        policy = repo.join("cli/tests/agents/policy.py").display(),
        sdk = repo.join("sdk-python/src").display(),
        post = dir.join("post.jsonl").display(),
    );
    let path = dir.join("hooks.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// The daemon, reading the token install made under `dir/config`.
fn daemon(config: &Path, port: u16, socket: &Path) -> Child {
    use std::io::BufRead;
    let mut child = Command::new(common::HOOKHOST)
        .env("XDG_CONFIG_HOME", config.with_file_name("config"))
        .args(["serve", "-c"])
        .arg(config)
        .args(["--listen", &format!("127.0.0.1:{port}"), "--socket"])
        .arg(socket)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    for _ in 0..2 {
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        assert!(line.starts_with("listening on "), "{line:?}");
    }
    child
}

/// A project with a `build/` folder, and hookhost installed for the user
/// (HTTP hooks: a project's settings would carry the token).
fn project(dir: &Path, port: u16) -> PathBuf {
    let project = dir.join("project");
    std::fs::create_dir_all(project.join("build")).unwrap();
    std::fs::create_dir_all(dir.join("home")).unwrap();
    let url = format!("http://127.0.0.1:{port}");
    let out = Command::new(common::HOOKHOST)
        .args(["install", "claude-code", "--via", "http", "--url", &url])
        .env_remove("CLAUDE_CONFIG_DIR")
        .env("HOME", dir.join("home"))
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    project
}

/// Every request the model was sent, as text.
fn requests(seen: &claude::Seen) -> Vec<String> {
    seen.lock().unwrap().iter().map(Value::to_string).collect()
}

#[test]
fn claude_code_under_the_daemon_composes_refuses_and_fails_closed() {
    let dir = common::scratch();
    let port = free_port();
    let project = project(&dir, port);
    let config = hooks_toml(&dir);
    let mut child = daemon(&config, port, &dir.join("hookhost.sock"));
    let home = dir.join("home");

    // Session 1: the guard refuses `rm -rf build`, the prompt got the
    // policy's context, and the first stop is refused once.
    let (url, seen) = claude::fake_model(claude::scenario);
    let out = claude::run(&project, &home, &url, "SCENARIO-CLEAN: clean the build");
    let first = claude::result(&out);
    assert!(project.join("build").exists(), "the denied rm ran: {first}");
    assert_eq!(
        first["permission_denials"][0]["tool_input"]["command"], "rm -rf build",
        "{first}"
    );
    let results = claude::tool_results(&seen);
    assert!(
        results[0].to_string().contains("rm-recursive-force"),
        "{results:?}"
    );
    let sent = requests(&seen);
    assert!(
        sent[0].contains("CTX-MARKER-7"),
        "the prompt's context is missing: {}",
        sent[0]
    );
    let asked_again = sent.iter().filter(|r| r.contains("STOP-MARKER-9")).count();
    assert!(
        asked_again >= 1,
        "the stop hook's reason never reached the model"
    );
    assert_eq!(first["is_error"], false, "{first}");

    // Session 2: two hooks each rewrite a field; what ran carries both.
    let (url, _) = claude::fake_model(claude::scenario);
    let out = claude::run(&project, &home, &url, "SCENARIO-WRITE: write the file");
    let second = claude::result(&out);
    let written = std::fs::read_to_string(project.join("out.txt")).unwrap_or_default();
    assert_eq!(written.trim(), "rewritten", "{second}");
    let post = std::fs::read_to_string(dir.join("post.jsonl")).unwrap();
    let ran: Value = serde_json::from_str(post.lines().next().unwrap()).unwrap();
    assert_eq!(
        ran["tool_input"],
        json!({"command": "echo rewritten > out.txt", "description": "audited by hookhost"})
    );

    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    assert!(child.wait().unwrap().success());
    audit_names_both_sessions(&dir, &first, &second);

    // Session 3, hookhost stopped: install's fail-closed setting refuses.
    let (url, seen) = claude::fake_model(claude::scenario);
    let out = claude::run(&project, &home, &url, "SCENARIO-CLEAN: clean the build");
    assert!(
        project.join("build").exists(),
        "rm ran with hookhost stopped"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("onFailure") || stderr.contains("onFailure"),
        "no fail-closed refusal: {stdout}\n{stderr}"
    );
    assert!(claude::tool_results(&seen).is_empty());
}

/// The audit log has both sessions, each with its decisions.
fn audit_names_both_sessions(dir: &Path, first: &Value, second: &Value) {
    let audit = std::fs::read_to_string(dir.join("audit.jsonl")).unwrap();
    let lines: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let of = |session: &Value| -> Vec<(String, String)> {
        let id = session["session_id"].as_str().unwrap();
        lines
            .iter()
            .filter(|l| l["session"] == id && l["stage"] == "before_tool")
            .map(|l| {
                (
                    l["hook"].as_str().unwrap().to_string(),
                    l["outcome"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    assert_ne!(first["session_id"], second["session_id"]);
    assert!(
        of(first).contains(&("guard".into(), "deny_tool".into())),
        "{audit}"
    );
    let wrote = of(second);
    assert!(
        wrote.contains(&("policy".into(), "modify".into())),
        "{audit}"
    );
    // The Claude hook said `allow` with its rewrite: its own allow is kept.
    assert!(
        wrote.contains(&("describe".into(), "allow".into())),
        "{audit}"
    );
}

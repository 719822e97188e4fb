//! The real OpenAI Codex CLI (`@openai/codex` 0.169.0, pinned in
//! `tests/agents/package.json`, installed by scripts/test with `npm ci`)
//! runs whole `codex exec` sessions offline against a fake Responses API on
//! loopback, with `hookhost relay --dialect codex` as its only hook (in
//! `$CODEX_HOME/hooks.json`). The relay runs the Codex hooks of
//! `examples/dialects/codex/`, imported by a hooks.toml, through hookhost's
//! chain, and Codex must act on the answer: the command is refused with the
//! hook's reason and does not run, or runs rewritten.
//!
//! Three of them pin what hookhost's codex dialect got wrong before Codex
//! itself was driven: a halt written as `continue: false` at PreToolUse,
//! which Codex rejects (and runs the tool); an `Edit|Write` hook skipped
//! for `apply_patch`, which Codex runs it for; and PostToolUse's
//! `tool_response` handed to Codex hooks as an object, where Codex sends
//! the output text.
//!
//! Offline: the model provider is the fake server, and plugins (which
//! resolve github.com and chatgpt.com at start), analytics and update
//! checks are off; under strace the sessions connect to 127.0.0.1 only.
//! `--dangerously-bypass-hook-trust` runs the hook without the review a
//! user gives it once in `/hooks`.

#![allow(clippy::unwrap_used)]

#[path = "common/codex_model.rs"]
mod codex_model;
mod common;
#[path = "common/gateway.rs"]
mod gw;

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use codex_model::{FakeModel, apply_patch, exec_command, is_tool_output, items, text};
use serde_json::{Value, json};

/// A model slug Codex 0.169.0 ships metadata for: for an unknown slug it
/// offers no `apply_patch` tool.
const MODEL: &str = "gpt-5.5";

/// A session that takes longer than this is killed and fails the test.
const SESSION_LIMIT: Duration = Duration::from_secs(60);

/// The pinned Codex CLI, or `None` (with a loud message) when it is not
/// installed, so `cargo test` without `npm ci` still runs the rest.
fn codex() -> Option<PathBuf> {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/node_modules/.bin/codex");
    if bin.exists() {
        return Some(bin);
    }
    eprintln!(
        "\n!!! SKIPPED: {} is missing, so the Codex CLI tests did not run.\n\
         !!! Run `npm ci --prefix cli/tests/agents` (scripts/test does).\n",
        bin.display()
    );
    None
}

/// What a test adds to the session: more settings files to import, and
/// more hooks.toml (written after `[hooks.import]`).
#[derive(Default)]
struct Extra {
    imports: Vec<PathBuf>,
    toml: String,
    /// More events of `$CODEX_HOME/hooks.json`, beside the relay's.
    events: serde_json::Map<String, Value>,
    /// The hook command instead of `hookhost relay --dialect codex -c
    /// hooks.toml`.
    relay: Option<String>,
    /// More of Codex's environment (what the user's shell would give it).
    env: Vec<(String, String)>,
}

/// One finished session.
struct Run {
    project: PathBuf,
    requests: Vec<Value>,
    log: String,
}

impl Run {
    /// The output of the model's tool call, as the next request carried it.
    fn tool_output(&self) -> String {
        let next = self
            .requests
            .get(1)
            .unwrap_or_else(|| panic!("no request after the tool call; codex said:\n{}", self.log));
        items(next)
            .iter()
            .find(|i| is_tool_output(i) && i["call_id"] == codex_model::CALL_ID)
            .map(text)
            .unwrap_or_else(|| panic!("no tool output in {next}\ncodex said:\n{}", self.log))
    }

    /// Every message of one role the model was sent, in order, once each.
    fn messages(&self, role: &str) -> Vec<String> {
        let last = self.requests.last().cloned().unwrap_or_default();
        items(&last)
            .iter()
            .filter(|i| i["type"] == "message" && i["role"] == role)
            .map(text)
            .collect()
    }
}

/// A stand-in npm: records its arguments, and `npm test` fails 3 tests.
const FAKE_NPM: &str = r#"#!/bin/sh
echo "$*" >> npm-args.txt
case "$1" in
  test) printf '  41 passing (2s)\n  3 failing\n'; exit 1 ;;
  *) echo "fake npm: $*" ;;
esac
"#;

/// Writes the project, the stand-in npm, hooks.toml and `$CODEX_HOME`
/// under `dir`; returns the project folder.
fn lay_out(dir: &Path, base_url: &str, extra: Extra) -> PathBuf {
    let project = dir.join("project");
    for sub in ["project/build", "bin", "home", "codex-home"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    std::fs::write(project.join("build/keep"), "built\n").unwrap();
    let npm = dir.join("bin/npm");
    std::fs::write(&npm, FAKE_NPM).unwrap();
    std::fs::set_permissions(&npm, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    // The example's hooks, adopted into the session's project, where Codex
    // (and so hookhost) runs them.
    let example = common::adopted_example("codex", &project);
    let imports: Vec<String> = std::iter::once(example)
        .chain(extra.imports)
        .map(|p| p.display().to_string())
        .collect();
    let hooks = dir.join("hooks.toml");
    let toml = format!("[hooks.import]\ncodex = {imports:?}\n\n{}", extra.toml);
    std::fs::write(&hooks, toml).unwrap();
    // The relay runs under the session's HOME: the imported hooks are
    // approved in its trust store, as the user would.
    common::trust_all(&hooks, None, &dir.join("home/.config"));
    let relay = extra.relay.unwrap_or_else(|| {
        let hookhost = common::HOOKHOST;
        format!(
            "'{hookhost}' relay --dialect codex -c '{}'",
            hooks.display()
        )
    });
    write_codex_home(&dir.join("codex-home"), base_url, &relay, extra.events);
    project
}

/// `config.toml`, a model provider on the fake server; `hooks.json`, the
/// relay for every tool and for Stop (the example hooks' events), and
/// `events`.
fn write_codex_home(
    home: &Path,
    base_url: &str,
    relay: &str,
    events: serde_json::Map<String, Value>,
) {
    let config = codex_model::offline_config(MODEL, base_url);
    std::fs::write(home.join("config.toml"), config).unwrap();
    let group = json!([{"hooks": [{"type": "command", "command": relay, "timeout": 30}]}]);
    let mut settings = json!({"hooks": {"PreToolUse": group, "PostToolUse": group, "Stop": group}});
    settings["hooks"].as_object_mut().unwrap().extend(events);
    std::fs::write(home.join("hooks.json"), settings.to_string()).unwrap();
}

/// `codex exec` in `project`, with nothing of this process's environment
/// but `PATH` (the stand-in npm first), in its own process group; output
/// to `log`.
fn spawn_codex(
    codex: &Path,
    dir: &Path,
    project: &Path,
    log: &Path,
    env: &[(String, String)],
) -> Child {
    let path = format!(
        "{}:{}",
        dir.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new(codex)
        .args([
            "exec",
            "--skip-git-repo-check",
            "--strict-config",
            "--color",
            "never",
        ])
        .args(["--dangerously-bypass-approvals-and-sandbox"])
        .args(["--dangerously-bypass-hook-trust", "Do what the task needs."])
        .current_dir(project)
        .env_clear()
        .env("PATH", path)
        .env("HOME", dir.join("home"))
        .env("CODEX_HOME", dir.join("codex-home"))
        .env("HOOKHOST_TEST_OPENAI_KEY", "sk-test-offline")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(File::create(log).unwrap())
        .stderr(File::options().append(true).open(log).unwrap())
        .process_group(0)
        .spawn()
        .unwrap()
}

/// Runs a Codex session to its end, killed with its whole process group
/// after [`SESSION_LIMIT`]; returns what it printed.
fn run_codex(codex: &Path, dir: &Path, project: &Path, env: &[(String, String)]) -> String {
    let log = dir.join("codex.log");
    let mut child = spawn_codex(codex, dir, project, &log, env);
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > SESSION_LIMIT {
            // SAFETY: signals the process group this test started.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            let log = std::fs::read_to_string(&log).unwrap_or_default();
            panic!("codex ran over {SESSION_LIMIT:?} and was killed:\n{log}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    eprintln!("codex session: {:.2} s", started.elapsed().as_secs_f64());
    assert!(status.success(), "codex failed ({status}):\n{log}");
    log
}

/// One Codex session whose model first makes the tool call `first`; `None`
/// when Codex is not installed.
fn session(first: Value, extra: impl FnOnce(&Path) -> Extra) -> Option<Run> {
    let codex = codex()?;
    let dir = common::scratch();
    let model = FakeModel::start(first);
    let mut extra = extra(&dir);
    let env = std::mem::take(&mut extra.env);
    let project = lay_out(&dir, &model.base_url, extra);
    let log = run_codex(&codex, &dir, &project, &env);
    Some(Run {
        project,
        requests: model.requests(),
        log,
    })
}

#[test]
fn codex_refuses_the_command_a_relayed_hook_denies() {
    let Some(run) = session(exec_command("rm -rf build"), |_| Extra::default()) else {
        return;
    };
    assert!(
        run.project.join("build/keep").exists(),
        "rm -rf build ran:\n{}",
        run.log
    );
    let output = run.tool_output();
    assert!(
        output.contains("rm -rf is not allowed here; remove specific paths."),
        "the model was not told why: {output}"
    );
}

/// Codex 0.169.0 predates UserInstructions. A hooks.json that keeps a
/// user's UserInstructions hook beside hookhost's routes (what `install
/// --adopt` leaves, spec/dialects.md §1) is read all the same: the relayed
/// guard still refuses, and the unknown event's hook never runs.
#[test]
fn codex_0_169_reads_a_hooks_file_holding_a_user_instructions_hook() {
    let Some(run) = session(exec_command("rm -rf build"), |dir| {
        let touch = format!("touch '{}'", dir.join("instructions-ran").display());
        let hook = json!([{"hooks": [{"type": "command", "command": touch}]}]);
        Extra {
            events: [("UserInstructions".to_string(), hook)]
                .into_iter()
                .collect(),
            ..Extra::default()
        }
    }) else {
        return;
    };
    assert!(
        run.project.join("build/keep").exists(),
        "rm -rf build ran:\n{}",
        run.log
    );
    let dir = run.project.parent().unwrap();
    assert!(!dir.join("instructions-ran").exists(), "{}", run.log);
}

#[test]
fn codex_runs_the_command_a_relayed_hook_rewrote() {
    let Some(run) = session(exec_command("npm install"), |_| Extra::default()) else {
        return;
    };
    let ran = std::fs::read_to_string(run.project.join("npm-args.txt")).unwrap_or_default();
    assert_eq!(
        ran, "ci\n",
        "npm install was not run as npm ci:\n{}",
        run.log
    );
    let output = run.tool_output();
    assert!(output.contains("fake npm: ci"), "{output}");
}

#[test]
fn codex_does_not_run_a_command_a_relayed_hook_halts() {
    // A Claude Code hook in the same chain stops the agent. Codex rejects
    // `continue: false` at PreToolUse (the hook counts as failed and the
    // command runs), so the relay must answer with the refusal alone.
    let Some(run) = session(exec_command("touch deployed"), |dir| {
        let freeze = dir.join("freeze.sh");
        let halt = r#"{"continue": false, "stopReason": "deploys are frozen until Monday"}"#;
        std::fs::write(&freeze, format!("cat >/dev/null\necho '{halt}'\n")).unwrap();
        let toml = format!(
            "[hooks.commands.freeze]\ndialect = \"claude-code\"\nargs = [\"sh\", {:?}]\n\
             events = [\"PreToolUse\"]\nrule = \"Bash(touch deployed*)\"\n",
            freeze.display().to_string()
        );
        Extra {
            toml,
            ..Extra::default()
        }
    }) else {
        return;
    };
    assert!(
        !run.project.join("deployed").exists(),
        "the halted command ran:\n{}",
        run.log
    );
    let output = run.tool_output();
    assert!(
        output.contains("deploys are frozen until Monday"),
        "{output}"
    );
}

#[test]
fn codex_edit_and_write_hooks_guard_apply_patch() {
    // A Codex user's own hook for `Edit|Write`: Codex runs it for
    // apply_patch, so hookhost must too.
    let patch = "*** Begin Patch\n*** Add File: .env\n+TOKEN=x\n*** End Patch\n";
    let Some(run) = session(apply_patch(patch), |dir| {
        let guard = dir.join("edit-guard.json");
        let hook = json!({"type": "command",
            "command": "echo 'write files by hand here, not by patch' >&2; exit 2"});
        let settings =
            json!({"hooks": {"PreToolUse": [{"matcher": "Edit|Write", "hooks": [hook]}]}});
        std::fs::write(&guard, settings.to_string()).unwrap();
        Extra {
            imports: vec![guard],
            ..Extra::default()
        }
    }) else {
        return;
    };
    let offered = run.requests[0]["tools"].to_string();
    assert!(
        offered.contains("apply_patch"),
        "no apply_patch tool: {offered}"
    );
    assert!(
        !run.project.join(".env").exists(),
        "the patch was applied:\n{}",
        run.log
    );
    let output = run.tool_output();
    assert!(output.contains("write files by hand here"), "{output}");
}

#[test]
fn codex_gets_a_relayed_context_and_a_stop_hook_keeps_it_going_once() {
    // Besides the examples, a hook that keeps what it was sent after the
    // tool: Codex hooks read `tool_response` as the output text.
    let mut dump = PathBuf::new();
    let Some(run) = session(exec_command("npm test"), |dir| {
        dump = dir.join("post-tool-use.json");
        let hook = json!({"type": "command", "command": format!("cat > '{}'", dump.display())});
        let settings = json!({"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [hook]}]}});
        std::fs::write(dir.join("dump.json"), settings.to_string()).unwrap();
        Extra {
            imports: vec![dir.join("dump.json")],
            ..Extra::default()
        }
    }) else {
        return;
    };
    let sent: Value = serde_json::from_str(&std::fs::read_to_string(&dump).unwrap()).unwrap();
    assert_eq!(
        sent["tool_response"], "  41 passing (2s)\n  3 failing\n",
        "{sent}"
    );
    let developer = run.messages("developer");
    assert!(
        developer
            .iter()
            .any(|m| m.contains("3 tests failing: fix them first")),
        "no PostToolUse context reached the model: {developer:?}"
    );
    let prompts: Vec<String> = run
        .messages("user")
        .into_iter()
        .filter(|m| m.contains("Run npm test and report the result before you finish."))
        .collect();
    assert_eq!(
        prompts.len(),
        1,
        "the Stop hook's continuation: {prompts:?}"
    );
    assert_eq!(run.requests.len(), 3, "tool call, answer, one continuation");
}

/// A PreToolUse hook that writes where and with what it runs to
/// `env.log` in `dir`, the scratch folder written `<dir>`: its folder, the
/// variables a Codex hook might read, and the names of all it got.
fn env_hook_file(dir: &Path) -> PathBuf {
    let line = "$(pwd) ${CLAUDE_PROJECT_DIR-unset} $HOME ${CODEX_HOME-unset} \
                ${HOOKHOST_TEST_OPENAI_KEY-withheld}";
    let dir = dir.canonicalize().unwrap();
    let command = format!(
        "cat > /dev/null; printf '%s\\n' \"{line}\" | sed \"s|{d}|<dir>|g\" >> '{d}/env.log'; \
         env | cut -d= -f1 | sort | tr '\\n' ' ' >> '{d}/env.log'",
        d = dir.display()
    );
    let hooks =
        json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": command}]}]}});
    let file = dir.join("env-hooks/hooks.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, hooks.to_string()).unwrap();
    file
}

/// A hook runs in the same folder, with the same HOME and project folder,
/// under Codex and under hookhost behind the relay; what Codex hands it
/// from its own environment (CODEX_HOME, the API key's variable) hookhost
/// withholds unless named (an addition, spec/dialects.md §3).
#[test]
fn a_hook_runs_where_and_with_what_codex_runs_it() {
    let Some(codex) = codex() else {
        return;
    };
    // Codex itself: its hooks.json is the env hook.
    let dir = common::scratch().canonicalize().unwrap();
    let model = FakeModel::start(exec_command("true"));
    let project = lay_out(&dir, &model.base_url, Extra::default());
    std::fs::copy(env_hook_file(&dir), dir.join("codex-home/hooks.json")).unwrap();
    run_codex(&codex, &dir, &project, &[]);
    let by_codex = std::fs::read_to_string(dir.join("env.log")).unwrap_or_default();
    // hookhost: the relay imports it.
    let Some(run) = session(exec_command("true"), |dir| Extra {
        imports: vec![env_hook_file(dir)],
        ..Extra::default()
    }) else {
        return;
    };
    let relayed = run.project.parent().unwrap().join("env.log");
    let by_hookhost = std::fs::read_to_string(relayed).unwrap_or_default();
    let first = |t: &str| t.lines().next().unwrap_or_default().to_string();
    assert_eq!(
        first(&by_codex),
        "<dir>/project unset <dir>/home <dir>/codex-home sk-test-offline",
        "{by_codex}"
    );
    assert_eq!(
        first(&by_hookhost),
        "<dir>/project unset <dir>/home unset withheld",
        "{by_hookhost}"
    );
}

/// A team's policy for acme: no `rm` through any agent.
const TEAM_POLICY: &str = r#"
[hooks.commands.no_rm]
command = "case \"$(jq -r .tool_input.command)\" in rm*) echo 'acme policy: no rm, ask the platform team' >&2; exit 2;; esac"
dialect = "codex"
events = ["PreToolUse"]
scope = { tenants = ["acme"] }
"#;

/// Codex's hook is `hookhost relay --connect https://…` to a team's TLS
/// gateway, the token and the team's CA in the environment the user's
/// shell gives Codex: the gateway's policy refuses, for the token's
/// tenant, and the model is told why; with the gateway stopped, the
/// relay refuses.
#[test]
fn codex_through_relay_connect_gets_the_team_gateways_answer() {
    let mut gateway = gw::Gateway::start("codex", TEAM_POLICY);
    let env: Vec<(String, String)> = gateway
        .client_env("acme", "ann")
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    let relay = format!(
        "'{}' relay --dialect codex --connect {}",
        common::HOOKHOST,
        gateway.url()
    );
    let extra = |_: &Path| Extra {
        relay: Some(relay.clone()),
        env: env.clone(),
        ..Extra::default()
    };
    let Some(run) = session(exec_command("rm -rf build"), extra) else {
        return;
    };
    assert!(
        run.project.join("build/keep").exists(),
        "rm -rf build ran:\n{}",
        run.log
    );
    let output = run.tool_output();
    assert!(
        output.contains("acme policy: no rm, ask the platform team"),
        "{output}"
    );
    gateway.stop();
    let run = session(exec_command("ls"), extra).unwrap();
    let output = run.tool_output();
    assert!(
        output.contains("refusing (--unreachable deny)"),
        "a stopped gateway refuses: {output}"
    );
}

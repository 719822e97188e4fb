//! The real Gemini CLI (`@google/gemini-cli`, pinned in
//! `tests/agents/package.json`, installed by scripts/test with `npm ci`)
//! runs a whole non-interactive session offline against a fake Gemini API
//! on loopback, with `hookhost relay --dialect gemini-cli` as its
//! BeforeTool command hook. The relay runs the Gemini-format hooks of
//! `examples/dialects/gemini-cli/` through hookhost's chain, and Gemini
//! must act on the answer: the shell call is refused with the hook's
//! reason, or runs rewritten, exactly as Gemini runs it with those hooks
//! configured directly.
//!
//! What it takes to drive Gemini CLI 0.61.0 offline, found in its bundle:
//! `GOOGLE_GEMINI_BASE_URL` sends the API calls to the fake, but alone it
//! selects the "gateway" auth that headless mode refuses, so the user
//! settings pin `security.auth.selectedType: "gemini-api-key"`;
//! `privacy.usageStatisticsEnabled: false` stops the usage logging (its
//! DNS lookup is the one outside connection a session makes); project
//! hooks run only in a trusted folder, and `--skip-trust` comes too late
//! for them, so `GEMINI_CLI_TRUST_WORKSPACE=true`.

#![allow(clippy::unwrap_used)]

mod common;
mod fake_gemini;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use fake_gemini::{FakeGemini, Request};
use serde_json::{Value, json};

/// How long one Gemini session may take before it is killed.
const SESSION_LIMIT: Duration = Duration::from_secs(90);

/// The pinned Gemini CLI, or `None` (said loudly) when it is not
/// installed: CI installs it, a bare checkout may not have it.
fn gemini() -> Option<PathBuf> {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/node_modules/.bin/gemini");
    if bin.exists() {
        return Some(bin);
    }
    eprintln!(
        "\n*** SKIPPED: {} is missing; run `npm ci --prefix cli/tests/agents` \
         (scripts/test does) to test hookhost under the real Gemini CLI ***\n",
        bin.display()
    );
    None
}

/// What one session left behind.
struct Session {
    /// Gemini's `--output-format json` result.
    result: Value,
    /// Every request the fake API got.
    requests: Vec<Request>,
    /// The project folder the session ran in.
    project: PathBuf,
    /// The session's HOME (Gemini keeps its transcripts there).
    home: PathBuf,
}

impl Session {
    /// What the tools answered the model, in order.
    fn tool_results(&self) -> Vec<Value> {
        self.requests
            .iter()
            .flat_map(Request::function_responses)
            .collect()
    }

    /// The first tool result sent to the model (later requests repeat it).
    fn first_tool_result(&self) -> Value {
        self.tool_results()
            .first()
            .cloned()
            .unwrap_or_else(|| panic!("no tool result reached the model: {}", self.result))
    }

    /// The arguments Gemini ran `run_shell_command` with, from the
    /// session transcript it records under HOME.
    fn shell_args(&self) -> Value {
        let mut args = None;
        for line in transcript_lines(&self.home) {
            for call in line["toolCalls"].as_array().into_iter().flatten() {
                if call["name"] == "run_shell_command" {
                    args = Some(call["args"].clone());
                }
            }
        }
        args.unwrap_or_else(|| panic!("no shell call in the transcript: {}", self.result))
    }
}

/// Every JSON line of every transcript under `home/.gemini/tmp/*/chats`.
fn transcript_lines(home: &Path) -> Vec<Value> {
    let mut lines = Vec::new();
    for project in std::fs::read_dir(home.join(".gemini/tmp"))
        .unwrap()
        .flatten()
    {
        let Ok(chats) = std::fs::read_dir(project.path().join("chats")) else {
            continue;
        };
        for chat in chats.flatten() {
            let text = std::fs::read_to_string(chat.path()).unwrap();
            lines.extend(text.lines().filter_map(|l| serde_json::from_str(l).ok()));
        }
    }
    lines
}

/// Gemini's user settings for an offline run (see the module doc).
fn write_home(home: &Path) {
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    let settings = fake_gemini::offline_user_settings();
    std::fs::write(home.join(".gemini/settings.json"), settings.to_string()).unwrap();
}

/// A stand-in `npm` first on PATH: it records its arguments in
/// `npm-ran.txt` in the folder it ran in and says what it ran.
fn write_npm(bin: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(bin).unwrap();
    let npm = bin.join("npm");
    std::fs::write(
        &npm,
        "#!/bin/sh\nprintf '%s\\n' \"$*\" >> npm-ran.txt\necho \"fake npm ran: npm $*\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&npm, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A project whose only Gemini hook is `hookhost relay`, on BeforeTool,
/// with a hooks.toml that imports the example's `.gemini/settings.json`.
fn relay_project(dir: &Path) -> PathBuf {
    // The example's hooks, adopted into the session's project, where
    // Gemini CLI (and so hookhost) runs them.
    let project = dir.join("project");
    let import = common::adopted_example("gemini-cli", &project);
    let hooks = dir.join("hooks.toml");
    let toml = format!(
        "[hooks.import]\ngemini-cli = {:?}\n",
        import.display().to_string()
    );
    std::fs::write(&hooks, toml).unwrap();
    // The relay runs under the session's HOME: the example's hooks are
    // approved in its trust store, as the user would.
    common::trust_all(&hooks, None, &dir.join("home/.config"));
    let relay = format!(
        "'{}' relay --dialect gemini-cli -c '{}'",
        common::HOOKHOST,
        hooks.display()
    );
    let settings = json!({"hooks": {"BeforeTool": [{"matcher": "run_shell_command",
        "hooks": [{"name": "hookhost", "type": "command", "command": relay, "timeout": 30000}]}]}});
    std::fs::write(project.join(".gemini/settings.json"), settings.to_string()).unwrap();
    project
}

/// A copy of the example project, whose hooks Gemini runs itself.
fn example_project(dir: &Path) -> PathBuf {
    let project = dir.join("project");
    common::copy_tree(&common::dialect_example("gemini-cli"), &project);
    project
}

/// Runs `gemini -p PROMPT` in the project `make_project` builds, against a
/// fake model that asks to run `command`.
fn session(make_project: fn(&Path) -> PathBuf, command: &str) -> Option<Session> {
    let bin = gemini()?;
    let dir = common::scratch();
    let project = make_project(&dir);
    std::fs::create_dir_all(project.join("build")).unwrap();
    let home = dir.join("home");
    write_home(&home);
    write_npm(&dir.join("bin"));
    let fake = FakeGemini::start(command);
    let stdout = run_bounded(gemini_command(&bin, &dir, &project, &fake.url), &dir);
    let result = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("gemini's output is not JSON ({e}): {stdout}"));
    let requests = fake.requests();
    Some(Session {
        result,
        requests,
        project,
        home,
    })
}

/// Headless Gemini in `project`, offline: nothing from the test's own
/// environment but PATH (behind the stand-in npm), HOME in `dir`, the
/// API at `url`, and a trusted folder so the project's hooks run.
fn gemini_command(bin: &Path, dir: &Path, project: &Path, url: &str) -> Command {
    let path = format!(
        "{}:{}",
        dir.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new(bin);
    cmd.args([
        "-p",
        "Do what the task needs.",
        "--output-format",
        "json",
        "--yolo",
    ])
    .current_dir(project)
    .env_clear()
    .env("PATH", path)
    .env("HOME", dir.join("home"))
    .env("GEMINI_API_KEY", "dummy")
    .env("GOOGLE_GEMINI_BASE_URL", url)
    .env("GEMINI_CLI_TRUST_WORKSPACE", "true");
    cmd
}

/// Runs `cmd` bounded by [`SESSION_LIMIT`] ([`common::run_bounded`]),
/// which must succeed; its stdout.
fn run_bounded(cmd: Command, dir: &Path) -> String {
    let started = Instant::now();
    let ran = common::run_bounded(cmd, dir, SESSION_LIMIT);
    eprintln!(
        "gemini session: {:?} wall, exit {}",
        started.elapsed(),
        ran.code
    );
    assert_eq!(
        ran.code, 0,
        "gemini failed or ran over {SESSION_LIMIT:?}: {}",
        ran.stderr
    );
    ran.stdout
}

#[test]
fn gemini_cli_refuses_the_call_a_relayed_hook_denies() {
    let Some(s) = session(relay_project, "rm -rf build") else {
        return;
    };
    assert!(s.result["error"].is_null(), "{}", s.result);
    assert!(s.project.join("build").is_dir(), "rm -rf build ran");
    // The example's shell-guard.js refused it through hookhost, and Gemini
    // sent the reason back to the model as the tool's error.
    let sent = s.first_tool_result();
    assert_eq!(sent["name"], "run_shell_command", "{sent}");
    let error = sent["response"]["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("Tool execution blocked: rm -rf is blocked by the project policy"),
        "{sent}"
    );
    assert!(
        s.requests
            .iter()
            .all(|r| r.path.starts_with("/v1beta/models/")),
        "Gemini asked the fake API for something else: {:?}",
        s.requests.iter().map(|r| &r.path).collect::<Vec<_>>()
    );
}

#[test]
fn gemini_cli_runs_the_call_a_relayed_hook_rewrote() {
    let Some(s) = session(relay_project, "npm install") else {
        return;
    };
    assert!(s.result["error"].is_null(), "{}", s.result);
    // The example's npm-ci.sh turned `npm install` into `npm ci` through
    // hookhost, and that is what ran.
    let ran = std::fs::read_to_string(s.project.join("npm-ran.txt")).unwrap();
    assert_eq!(ran, "ci\n");
    let sent = s.first_tool_result();
    let output = sent["response"]["output"].as_str().unwrap_or_default();
    assert!(output.contains("fake npm ran: npm ci"), "{sent}");
    assert!(
        output.contains("Tool input parameters were modified by a hook"),
        "{sent}"
    );
    assert_eq!(s.shell_args()["command"], "npm ci", "{}", s.result);
}

#[test]
fn through_the_relay_gemini_cli_runs_what_its_own_hooks_would_run() {
    let Some(direct) = session(example_project, "npm install") else {
        return;
    };
    let relayed = session(relay_project, "npm install").unwrap();
    // Gemini takes a hook's tool_input as the whole new arguments (the
    // example leaves `description` out, so it is gone); hookhost must
    // hand Gemini the same call.
    assert_eq!(direct.shell_args(), json!({"command": "npm ci"}));
    assert_eq!(relayed.shell_args(), direct.shell_args());
}

/// The BeforeTool hook that writes where and with what it runs to
/// `env.log` beside the project, with the scratch folder written `<dir>`.
fn env_hook(dir: &Path) -> Value {
    let line = "$(pwd) $GEMINI_PROJECT_DIR $CLAUDE_PROJECT_DIR $GEMINI_CWD \
                ${GEMINI_PLANS_DIR-unset} $HOME ${GEMINI_API_KEY-withheld}";
    let command = format!(
        "cat > /dev/null; printf '%s\\n' \"{line}\" | sed \"s|{}|<dir>|g\" >> '{}'",
        dir.display(),
        dir.join("env.log").display()
    );
    json!({"hooks": {"BeforeTool": [{"matcher": "run_shell_command",
        "hooks": [{"name": "env", "type": "command", "command": command, "timeout": 30000}]}]}})
}

/// A project whose own settings hold [`env_hook`].
fn env_project(dir: &Path) -> PathBuf {
    let dir = dir.canonicalize().unwrap();
    let project = dir.join("project");
    std::fs::create_dir_all(project.join(".gemini")).unwrap();
    std::fs::write(
        project.join(".gemini/settings.json"),
        env_hook(&dir).to_string(),
    )
    .unwrap();
    project
}

/// The same hook adopted by hookhost: the project's only Gemini hook is
/// the relay, which imports it.
fn env_relay_project(dir: &Path) -> PathBuf {
    let dir = dir.canonicalize().unwrap();
    let project = dir.join("project");
    let adopted = project.join(".gemini/hookhost-adopted.json");
    std::fs::create_dir_all(adopted.parent().unwrap()).unwrap();
    std::fs::write(&adopted, env_hook(&dir).to_string()).unwrap();
    let hooks = dir.join("hooks.toml");
    let toml = format!(
        "[hooks.import]\ngemini-cli = {:?}\n",
        adopted.display().to_string()
    );
    std::fs::write(&hooks, toml).unwrap();
    common::trust_all(&hooks, None, &dir.join("home/.config"));
    let relay = format!(
        "'{}' relay --dialect gemini-cli -c '{}'",
        common::HOOKHOST,
        hooks.display()
    );
    let settings = json!({"hooks": {"BeforeTool": [{"matcher": "run_shell_command",
        "hooks": [{"name": "hookhost", "type": "command", "command": relay, "timeout": 30000}]}]}});
    std::fs::write(project.join(".gemini/settings.json"), settings.to_string()).unwrap();
    project
}

/// A hook runs in the same folder with the same variables under Gemini CLI
/// and under hookhost behind the relay: the project as its folder and
/// GEMINI_PROJECT_DIR, CLAUDE_PROJECT_DIR and GEMINI_CWD, the session's own
/// GEMINI_PLANS_DIR (Gemini's, passed on by the relay), and HOME. Gemini
/// also hands its hooks its API key; hookhost withholds it unless the hook
/// names it (an addition: spec/dialects.md §3).
#[test]
fn a_hook_runs_where_and_with_what_gemini_cli_runs_it() {
    let logged = |make: fn(&Path) -> PathBuf| {
        let s = session(make, "true")?;
        let log = s.project.parent().unwrap().join("env.log");
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let first = text.lines().next().unwrap_or_default().to_string();
        Some(first.split(' ').map(str::to_string).collect::<Vec<_>>())
    };
    let Some(by_gemini) = logged(env_project) else {
        return;
    };
    let by_hookhost = logged(env_relay_project).unwrap();
    let project = "<dir>/project".to_string();
    assert_eq!(
        by_gemini[..4],
        [project.clone(), project.clone(), project.clone(), project]
    );
    assert_eq!(by_hookhost[..4], by_gemini[..4], "{by_hookhost:?}");
    // The plans folder is the session's: each run its own, in one place.
    let plans = |v: &[String]| {
        let p = v.get(4).cloned().unwrap_or_default();
        let session = p.rsplit('/').nth(1).unwrap_or_default().to_string();
        p.replace(&session, "SESSION")
    };
    assert_eq!(
        plans(&by_gemini),
        "<dir>/home/.gemini/tmp/project/SESSION/plans"
    );
    assert_eq!(plans(&by_hookhost), plans(&by_gemini));
    assert_eq!(by_hookhost[5], "<dir>/home");
    assert_eq!(by_gemini[5..], ["<dir>/home", "dummy"]);
    assert_eq!(by_hookhost[5..], ["<dir>/home", "withheld"]);
}

//! The real Claude Code under an admin's managed settings, as `hookhost
//! install claude-code --managed --url URL --root ROOT` writes them: http
//! hooks to a team's hookhost gateway (`serve --listen` over TLS with
//! `--auth tokens:FILE`, its private CA trusted through
//! `NODE_EXTRA_CA_CERTS` and `SSL_CERT_FILE`), the token read from
//! `$HOOKHOST_TOKEN`, `allowManagedHooksOnly`, failing closed.
//!
//! Claude Code 2.1.330 reads its managed file from `/etc/claude-code` and
//! nowhere else (no variable or flag moves it), so each run happens in a
//! private mount namespace (`unshare -m`, as root) where `/etc` is a
//! folder of links to the real one plus ROOT's `etc/claude-code` bound in:
//! the machine's own `/etc` is never written. The user's own settings
//! hold `"disableAllHooks": true` throughout, which must not switch the
//! managed hooks off.

#![allow(clippy::unwrap_used)]

#[path = "common/claude.rs"]
mod claude;
#[path = "common/codex_model.rs"]
mod codex_model;
mod common;
mod fake_gemini;
#[path = "common/gateway.rs"]
mod gw;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};

use serde_json::{Value, json};

/// The gateway's policy: refuse `rm -rf` with a reason of its own.
fn hooks_toml(dir: &Path) -> PathBuf {
    let path = dir.join("hooks.toml");
    std::fs::write(&path, policy("deny", "POLICY-7: no recursive deletes", "")).unwrap();
    path
}

/// A hook that refuses `rm -rf` with `reason`, for the calls `scope` says.
fn policy(name: &str, reason: &str, scope: &str) -> String {
    let deny = format!(
        r#"{{"hookSpecificOutput": {{"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "{reason}"}}}}"#
    );
    format!(
        r#"[hooks.commands.{name}]
dialect = "claude-code"
events = ["PreToolUse"]
matcher = "Bash"
command = '''if grep -q 'rm -rf'; then echo '{deny}'; fi'''
{scope}
"#
    )
}

/// A team's TLS gateway: acme's policy and globex's, each for its own
/// tenant's tokens.
fn team_gateway() -> gw::Gateway {
    let acme = policy(
        "acme",
        "POLICY-7: no recursive deletes",
        "scope = { tenants = [\"acme\"] }",
    );
    let globex = policy(
        "globex",
        "GLOBEX-2: ask ops first",
        "scope = { tenants = [\"globex\"] }",
    );
    gw::Gateway::start("managed-claude", &format!("{acme}\n{globex}"))
}

/// A `hookhost serve` this test started, killed if the test fails first.
struct Running(Option<Child>);

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Stops it as a user would (SIGTERM), which it must take cleanly.
fn stop(mut running: Running) {
    let mut child = running.0.take().unwrap();
    // SAFETY: signals the child this test started and has not reaped.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    assert!(child.wait().unwrap().success());
}

/// `hookhost install claude-code --managed --url URL --root ROOT`.
fn install_managed(root: &Path, url: &str) {
    let out = Command::new(common::HOOKHOST)
        .args([
            "install",
            "claude-code",
            "--managed",
            "--url",
            url,
            "--root",
        ])
        .arg(root)
        .output()
        .unwrap();
    common::succeeded(&["install", "--managed"], &out);
}

/// `command` run in a private mount namespace whose `/etc` holds ROOT's
/// `etc/claude-code` (every other entry links to the real `/etc`, which
/// is bound at `dir/real-etc` there and never written).
fn namespaced(command: &Command, root: &Path, dir: &Path) -> Command {
    namespaced_etc(command, root, "claude-code", dir)
}

/// [`namespaced`] for ROOT's `etc/NAME`.
fn namespaced_etc(command: &Command, root: &Path, name: &str, dir: &Path) -> Command {
    const SCRIPT: &str = r#"set -e
dir=$1; managed=$2; name=$3; shift 3
mkdir -p "$dir/real-etc" "$dir/etc"
mount --bind /etc "$dir/real-etc"
for f in "$dir"/real-etc/* "$dir"/real-etc/.[!.]*; do
  [ -e "$f" ] || [ -L "$f" ] || continue
  ln -sfn "$f" "$dir/etc/$(basename "$f")"
done
rm -f "$dir/etc/$name"; mkdir -p "$dir/etc/$name"
mount --bind "$dir/etc" /etc
mount --bind "$managed" "/etc/$name"
exec "$@"
"#;
    let ns = dir.join(format!("ns-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&ns);
    let mut wrapped = Command::new("unshare");
    wrapped
        .args(["-m", "--propagation", "private", "sh", "-c", SCRIPT, "sh"])
        .arg(&ns)
        .arg(root.join("etc").join(name))
        .arg(name)
        .arg(command.get_program())
        .args(command.get_args())
        .env_clear();
    for (k, v) in command.get_envs() {
        if let Some(v) = v {
            wrapped.env(k, v);
        }
    }
    if let Some(cwd) = command.get_current_dir() {
        wrapped.current_dir(cwd);
    }
    wrapped
}

/// One `claude -p` run under the managed settings, with `token` in its
/// environment and the team's CA (`ca`) trusted.
fn run_claude(
    dir: &Path,
    root: &Path,
    prompt: &str,
    (token, ca): (&str, &Path),
) -> (Output, claude::Seen) {
    let (url, seen) = claude::fake_model(claude::scenario);
    let mut command = claude::command(&dir.join("project"), &dir.join("home"), &url, prompt);
    command
        .args(["--allowedTools", "Bash"])
        .env("HOOKHOST_TOKEN", token)
        .env("NODE_EXTRA_CA_CERTS", ca);
    let out = namespaced(&command, root, dir).output().unwrap();
    (out, seen)
}

/// A project with a `build/` folder, and a user whose own settings turn
/// every hook off.
fn lay_out(dir: &Path) {
    std::fs::create_dir_all(dir.join("project/build")).unwrap();
    std::fs::create_dir_all(dir.join("home/.claude")).unwrap();
    std::fs::write(
        dir.join("home/.claude/settings.json"),
        json!({"disableAllHooks": true}).to_string(),
    )
    .unwrap();
}

/// The clean-up refused for `token`'s tenant with `reason`, reaching the
/// model, though the user's settings say `disableAllHooks`.
fn refused_for(dir: &Path, root: &Path, creds: (&str, &Path), reason: &str) {
    let (out, seen) = run_claude(dir, root, "SCENARIO-CLEAN: clean the build", creds);
    let result = claude::result(&out);
    assert!(dir.join("project/build").exists(), "rm ran: {result}");
    let results = claude::tool_results(&seen);
    assert!(
        results.iter().any(|r| r.to_string().contains(reason)),
        "{reason} did not reach the model: {results:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn claude_code_under_managed_settings_is_governed_by_the_gateway() {
    let dir = common::scratch();
    lay_out(&dir);
    let root = dir.join("root");
    let mut gateway = team_gateway();
    install_managed(&root, &gateway.url());
    let ca = gateway.dir.join("ca.pem");
    let ann = gateway.token("acme", "ann");
    let bob = gateway.token("globex", "bob");

    // Each user's token lands in its own tenant's chain.
    refused_for(&dir, &root, (&ann, &ca), "POLICY-7");
    refused_for(&dir, &root, (&bob, &ca), "GLOBEX-2");

    // What the policy allows runs: the hooks do not simply block.
    let (out, _) = run_claude(&dir, &root, "SCENARIO-WRITE: write the file", (&ann, &ca));
    let written = std::fs::read_to_string(dir.join("project/out.txt")).unwrap_or_default();
    assert_eq!(written.trim(), "original", "{}", claude::result(&out));

    // doctor: live, the user's disableAllHooks named as no bypass.
    let (code, report) = doctor(&dir, &root, (&ann, &ca));
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["live"], true);
    assert!(
        report["notes"].to_string().contains("not managed ones"),
        "{report:#}"
    );
    assert!(
        report["canary"]["said"].to_string().contains("calls went"),
        "{report:#}"
    );
    // With another token the gateway refuses the canary: not live.
    assert_eq!(doctor(&dir, &root, ("not-the-token", &ca)).0, 1);

    // With the gateway stopped, the refusable event is refused.
    gateway.stop();
    let (out, seen) = run_claude(&dir, &root, "SCENARIO-CLEAN: clean the build", (&ann, &ca));
    assert!(
        dir.join("project/build").exists(),
        "rm ran with the gateway stopped: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains("onFailure"), "no fail-closed refusal: {said}");
    assert!(claude::tool_results(&seen).is_empty());
    let (code, report) = doctor(&dir, &root, (&ann, &ca));
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(report["canary"]["ok"], false, "{report:#}");
}

/// `hookhost doctor claude-code --root ROOT --json` as the user of `dir`,
/// with `token` and the team's CA (`ca`, as `SSL_CERT_FILE`).
fn doctor(dir: &Path, root: &Path, (token, ca): (&str, &Path)) -> (i32, Value) {
    let out = Command::new(common::HOOKHOST)
        .args(["doctor", "claude-code", "--json", "--root"])
        .arg(root)
        .arg("--project")
        .arg(dir.join("project"))
        .env("HOME", dir.join("home"))
        .env_remove("CLAUDE_CONFIG_DIR")
        .env("HOOKHOST_TOKEN", token)
        .env("SSL_CERT_FILE", ca)
        .output()
        .unwrap();
    let reports: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    (out.status.code().unwrap_or(-1), reports[0].clone())
}

/// `hookhost install AGENT --managed --url URL --root ROOT EXTRA...`.
fn managed(agent: &str, root: &Path, extra: &[&str]) -> Output {
    Command::new(common::HOOKHOST)
        .args([
            "install",
            agent,
            "--managed",
            "--url",
            "https://gw.corp:8443/",
            "--root",
        ])
        .arg(root)
        .args(extra)
        .output()
        .unwrap()
}

/// The handlers of `event` in a settings object's `hooks`.
fn handlers<'a>(settings: &'a Value, event: &str) -> Vec<&'a Value> {
    settings["hooks"][event]
        .as_array()
        .unwrap_or_else(|| panic!("no {event} in {settings}"))
        .iter()
        .flat_map(|g| g["hooks"].as_array().unwrap())
        .collect()
}

#[test]
fn claude_code_managed_settings_pin_the_gateway_and_keep_the_admins_keys() {
    let root = common::scratch();
    let file = root.join("etc/claude-code/managed-settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, r#"{"permissions": {"deny": ["WebFetch"]}}"#).unwrap();
    common::succeeded(&["install"], &managed("claude-code", &root, &[]));
    let settings: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(settings["permissions"]["deny"][0], "WebFetch", "{settings}");
    assert_eq!(settings["allowManagedHooksOnly"], true);
    assert_eq!(
        settings["httpHookAllowedEnvVars"],
        json!(["HOOKHOST_TOKEN"])
    );
    let pre = handlers(&settings, "PreToolUse");
    assert_eq!(pre.len(), 1, "{settings}");
    assert_eq!(
        *pre[0],
        json!({"type": "http", "url": "https://gw.corp:8443/hooks/claude-code",
            "headers": {"Authorization": "Bearer $HOOKHOST_TOKEN"},
            "allowedEnvVars": ["HOOKHOST_TOKEN"], "onFailure": "block"})
    );
    // A stop must not loop on a stopped gateway: it goes without.
    assert_eq!(handlers(&settings, "Stop")[0].get("onFailure"), None);
    // A second install changes nothing.
    let again = common::succeeded(&["install"], &managed("claude-code", &root, &[]));
    assert!(again.contains("nothing changed"), "{again}");
}

#[test]
fn codex_requirements_run_the_relay_to_the_gateway_and_keep_the_admins_lines() {
    let root = common::scratch();
    let file = root.join("etc/codex/requirements.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(
        &file,
        "# set by IT\nallowed_sandbox_modes = [\"read-only\"]\n",
    )
    .unwrap();
    common::succeeded(&["install"], &managed("codex", &root, &[]));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.starts_with("# set by IT\nallowed_sandbox_modes = [\"read-only\"]\n"),
        "{text}"
    );
    let doc: toml_edit::DocumentMut = text.parse().unwrap();
    assert_eq!(
        doc["allow_managed_hooks_only"].as_bool(),
        Some(true),
        "{text}"
    );
    assert_eq!(doc["features"]["hooks"].as_bool(), Some(true), "{text}");
    let pre = doc["hooks"]["PreToolUse"].as_array_of_tables().unwrap();
    let command = pre.get(0).unwrap()["hooks"]
        .as_array_of_tables()
        .unwrap()
        .get(0)
        .unwrap()["command"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        command,
        format!(
            "{} relay --dialect codex --unreachable deny --connect https://gw.corp:8443",
            common::HOOKHOST
        )
    );
    let again = common::succeeded(&["install"], &managed("codex", &root, &[]));
    assert!(again.contains("nothing changed"), "{again}");
}

#[test]
fn gemini_system_settings_turn_hooks_on_and_run_the_relay_to_the_gateway() {
    let root = common::scratch();
    common::succeeded(&["install"], &managed("gemini-cli", &root, &[]));
    let file = root.join("etc/gemini-cli/settings.json");
    let settings: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(settings["hooksConfig"]["enabled"], true, "{settings}");
    let before = handlers(&settings, "BeforeTool");
    assert_eq!(
        before[0]["command"],
        format!(
            "{} relay --dialect gemini-cli --unreachable deny --connect https://gw.corp:8443",
            common::HOOKHOST
        )
    );
}

#[test]
fn a_managed_dry_run_shows_the_file_and_writes_nothing() {
    let root = common::scratch();
    let out = common::succeeded(&["install"], &managed("claude-code", &root, &["--dry-run"]));
    assert!(out.contains("+++ "), "{out}");
    assert!(out.contains("\"allowManagedHooksOnly\": true"), "{out}");
    assert!(!root.join("etc").exists());
}

#[test]
fn an_agent_without_a_managed_file_is_refused() {
    let root = common::scratch();
    let out = managed("cursor", &root, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no managed settings file"));
    assert!(!root.join("etc").exists());
}

/// `hookhost doctor AGENT --json --root DIR/root` with HOME and CODEX_HOME
/// in `dir`: its exit code and report.
fn doctor_of(agent: &str, dir: &Path) -> (i32, Value) {
    let out = Command::new(common::HOOKHOST)
        .args(["doctor", agent, "--json", "--root"])
        .arg(dir.join("root"))
        .arg("--project")
        .arg(dir)
        .env("HOME", dir.join("home"))
        .env("CODEX_HOME", dir.join("home/.codex"))
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("HOOKHOST_TOKEN")
        .output()
        .unwrap();
    let reports: Value = serde_json::from_slice(&out.stdout).unwrap();
    (out.status.code().unwrap_or(-1), reports[0].clone())
}

/// The report's line for `event`.
fn event<'a>(report: &'a Value, name: &str) -> &'a Value {
    let events = report["events"].as_array().unwrap();
    events.iter().find(|e| e["event"] == name).unwrap()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn doctor_names_a_user_hook_beside_hookhost_unless_managed_hooks_only() {
    let dir = common::scratch();
    common::succeeded(
        &["install"],
        &managed("claude-code", &dir.join("root"), &[]),
    );
    let user_hook = json!({"hooks": {"PreToolUse": [{"matcher": "Bash",
        "hooks": [{"type": "command", "command": "echo allow-all"}]}]}});
    write(
        &dir.join("home/.claude/settings.json"),
        &user_hook.to_string(),
    );
    let (_, report) = doctor_of("claude-code", &dir);
    assert_eq!(
        event(&report, "PreToolUse")["bypasses"],
        json!([]),
        "{report:#}"
    );
    assert_eq!(event(&report, "PreToolUse")["fails_closed"], true);

    let file = dir.join("root/etc/claude-code/managed-settings.json");
    let mut managed: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    managed["allowManagedHooksOnly"] = json!(false);
    std::fs::write(&file, managed.to_string()).unwrap();
    let (code, report) = doctor_of("claude-code", &dir);
    assert_eq!(code, 1);
    let bypasses = event(&report, "PreToolUse")["bypasses"].to_string();
    assert!(
        bypasses.contains("echo allow-all") && bypasses.contains(".claude/settings.json"),
        "{report:#}"
    );

    managed["disableAllHooks"] = json!(true);
    std::fs::write(&file, managed.to_string()).unwrap();
    let (_, report) = doctor_of("claude-code", &dir);
    assert!(
        report["bypasses"].to_string().contains("disableAllHooks"),
        "{report:#}"
    );
    assert_eq!(event(&report, "PreToolUse")["route"], Value::Null);
}

#[test]
fn doctor_sees_a_users_codex_hooks_switch_and_the_requirements_pin() {
    let dir = common::scratch();
    common::succeeded(&["install"], &managed("codex", &dir.join("root"), &[]));
    write(
        &dir.join("home/.codex/config.toml"),
        "[features]\nhooks = false\n",
    );
    let (_, report) = doctor_of("codex", &dir);
    assert_eq!(report["bypasses"], json!([]), "{report:#}");
    let pre = event(&report, "PreToolUse");
    assert!(
        pre["route"]
            .as_str()
            .unwrap()
            .contains("relay --dialect codex"),
        "{pre}"
    );
    assert_eq!(pre["fails_closed"], true);

    let file = dir.join("root/etc/codex/requirements.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("[features]\nhooks = true\n", "")).unwrap();
    let (code, report) = doctor_of("codex", &dir);
    assert_eq!(code, 1);
    assert!(
        report["bypasses"].to_string().contains("hooks = false"),
        "{report:#}"
    );
}

#[test]
fn doctor_sees_a_gemini_user_switching_hookhosts_hook_off_by_name() {
    let dir = common::scratch();
    common::succeeded(&["install"], &managed("gemini-cli", &dir.join("root"), &[]));
    let (_, report) = doctor_of("gemini-cli", &dir);
    assert_eq!(
        event(&report, "BeforeTool")["bypasses"],
        json!([]),
        "{report:#}"
    );
    let off = json!({"hooksConfig": {"disabled": ["hookhost"]}});
    write(&dir.join("home/.gemini/settings.json"), &off.to_string());
    let (code, report) = doctor_of("gemini-cli", &dir);
    assert_eq!(code, 1);
    let before = event(&report, "BeforeTool");
    assert_eq!(before["route"], Value::Null, "{report:#}");
    assert!(
        before["bypasses"]
            .to_string()
            .contains("hooksConfig.disabled"),
        "{report:#}"
    );
}

#[test]
fn doctor_sees_managed_url_and_variable_lists_that_stop_the_hook() {
    let dir = common::scratch();
    common::succeeded(
        &["install"],
        &managed("claude-code", &dir.join("root"), &[]),
    );
    let file = dir.join("root/etc/claude-code/managed-settings.json");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    settings["allowedHttpHookUrls"] = json!(["https://audit.corp/*"]);
    settings["httpHookAllowedEnvVars"] = json!(["OTHER"]);
    std::fs::write(&file, settings.to_string()).unwrap();
    let (code, report) = doctor_of("claude-code", &dir);
    assert_eq!(code, 1);
    let bypasses = report["bypasses"].to_string();
    assert!(bypasses.contains("allowedHttpHookUrls"), "{report:#}");
    assert!(
        bypasses.contains("does not list HOOKHOST_TOKEN"),
        "{report:#}"
    );
    settings["allowedHttpHookUrls"] = json!(["https://gw.corp:8443/*"]);
    settings["httpHookAllowedEnvVars"] = json!(["HOOKHOST_TOKEN"]);
    std::fs::write(&file, settings.to_string()).unwrap();
    let (_, report) = doctor_of("claude-code", &dir);
    assert_eq!(report["bypasses"], json!([]), "{report:#}");
}

/// `codex exec` under the requirements of `root` (bound at /etc/codex),
/// against `model`, with a user whose own config turns hooks off.
fn run_codex(dir: &Path, root: &Path, model: &str) -> common::Ran {
    run_codex_with(dir, root, model, &[])
}

/// [`run_codex`] with more of the user's environment.
fn run_codex_with(dir: &Path, root: &Path, model: &str, env: &[(&str, String)]) -> common::Ran {
    let codex = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/node_modules/.bin/codex");
    let home = dir.join("codex-home");
    std::fs::create_dir_all(&home).unwrap();
    let config = codex_model::offline_config("gpt-5.5", model);
    let off = config.replace("plugins = false\n", "plugins = false\nhooks = false\n");
    assert_ne!(off, config);
    std::fs::write(home.join("config.toml"), off).unwrap();
    let mut command = Command::new(codex);
    command
        .args(["exec", "--skip-git-repo-check", "--color", "never"])
        .args([
            "--dangerously-bypass-approvals-and-sandbox",
            "Clean the build.",
        ])
        .current_dir(dir.join("project"))
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir.join("home"))
        .env("CODEX_HOME", &home)
        .env("HOOKHOST_TEST_OPENAI_KEY", "sk-test-offline")
        .envs(env.iter().map(|(k, v)| (*k, v)));
    let wrapped = namespaced_etc(&command, root, "codex", dir);
    common::run_bounded(wrapped, dir, std::time::Duration::from_secs(60))
}

#[test]
fn codex_under_managed_requirements_refuses_when_the_gateway_is_unreachable() {
    // The fail-closed half of Codex's acceptance: the managed hooks run
    // (a user's `[features] hooks = false` notwithstanding) and refuse
    // with no gateway to ask.
    let dir = common::scratch();
    std::fs::create_dir_all(dir.join("project")).unwrap();
    std::fs::create_dir_all(dir.join("home")).unwrap();
    let root = dir.join("root");
    // Nothing listens there: the managed relay cannot reach a gateway.
    common::succeeded(
        &["install"],
        &managed_to("codex", &root, "http://127.0.0.1:9"),
    );

    let model = codex_model::FakeModel::start(codex_model::exec_command("touch ran.txt"));
    let ran = run_codex(&dir, &root, &model.base_url);
    assert!(
        !dir.join("project/ran.txt").exists(),
        "the command ran: {}\n{}",
        ran.stdout,
        ran.stderr
    );
    // The managed relay refuses the first refusable event, the prompt:
    // the model is never asked, though the user turned hooks off.
    assert!(
        ran.stderr.contains("UserPromptSubmit Blocked"),
        "{}",
        ran.stderr
    );
    assert!(model.requests().is_empty(), "{}", ran.stderr);

    // Control: the same session without the managed file runs it, the
    // user's `hooks = false` leaving nothing in its way.
    let empty = dir.join("no-root");
    std::fs::create_dir_all(empty.join("etc/codex")).unwrap();
    let model = codex_model::FakeModel::start(codex_model::exec_command("touch ran.txt"));
    let ran = run_codex(&dir, &empty, &model.base_url);
    assert!(
        dir.join("project/ran.txt").exists(),
        "the control did not run the command: {}\n{}",
        ran.stdout,
        ran.stderr
    );
}

/// `hookhost install AGENT --managed --url URL --root ROOT`.
fn managed_to(agent: &str, root: &Path, url: &str) -> Output {
    Command::new(common::HOOKHOST)
        .args(["install", agent, "--managed", "--url", url, "--root"])
        .arg(root)
        .output()
        .unwrap()
}

#[test]
fn doctor_sends_its_canary_through_a_users_relay_to_the_daemon() {
    use std::io::BufRead;
    use std::os::unix::fs::PermissionsExt;
    let dir = common::scratch();
    let run = dir.join("run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).unwrap();
    let env = |c: &mut Command| {
        c.env("HOME", dir.join("home"))
            .env("CODEX_HOME", dir.join("home/.codex"))
            .env("XDG_RUNTIME_DIR", &run)
            .env("XDG_CONFIG_HOME", dir.join("home/.config"));
    };
    let mut install = Command::new(common::HOOKHOST);
    install.args(["install", "codex"]);
    env(&mut install);
    common::succeeded(&["install", "codex"], &install.output().unwrap());
    let mut serve = Command::new(common::HOOKHOST);
    serve
        .args(["serve", "--socket", "-c"])
        .arg(hooks_toml(&dir))
        .stdout(std::process::Stdio::piped());
    env(&mut serve);
    let mut child = serve.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let daemon = Running(Some(child));
    let mut line = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("listening on unix:"), "{line}");

    let doctor = || {
        let mut c = Command::new(common::HOOKHOST);
        c.args(["doctor", "codex", "--json", "--root"])
            .arg(dir.join("root"))
            .arg("--project")
            .arg(&dir);
        env(&mut c);
        let out = c.output().unwrap();
        let reports: Value = serde_json::from_slice(&out.stdout).unwrap();
        (out.status.code(), reports[0].clone())
    };
    let (code, report) = doctor();
    assert_eq!(code, Some(0), "{report:#}");
    assert!(
        report["canary"]["said"]
            .to_string()
            .contains("calls went 0 -> 1"),
        "{report:#}"
    );
    assert!(
        report["notes"].to_string().contains("--managed` pins it"),
        "{report:#}"
    );
    stop(daemon);
    let (code, report) = doctor();
    assert_eq!(code, Some(1), "{report:#}");
}

/// Headless Gemini CLI in `dir/project` against `model`, with ROOT's
/// `etc/gemini-cli` at `/etc/gemini-cli` (a mount namespace, as for
/// Claude Code: Gemini CLI 0.61 skips a system settings file any of whose
/// folders others can write, which every folder under /tmp is), and a user
/// whose own settings turn hooks off.
fn run_gemini(dir: &Path, root: &Path, model: &str) -> common::Ran {
    run_gemini_with(dir, root, model, &[])
}

/// [`run_gemini`] with more of the user's environment.
fn run_gemini_with(dir: &Path, root: &Path, model: &str, env: &[(&str, String)]) -> common::Ran {
    let gemini =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/node_modules/.bin/gemini");
    let mut user = fake_gemini::offline_user_settings();
    user["hooksConfig"] = json!({"enabled": false});
    std::fs::create_dir_all(dir.join("home/.gemini")).unwrap();
    std::fs::write(dir.join("home/.gemini/settings.json"), user.to_string()).unwrap();
    let mut command = Command::new(gemini);
    command
        .args([
            "-p",
            "Do what the task needs.",
            "--output-format",
            "json",
            "--yolo",
        ])
        .current_dir(dir.join("project"))
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir.join("home"))
        .env("GEMINI_API_KEY", "dummy")
        .env("GOOGLE_GEMINI_BASE_URL", model)
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .envs(env.iter().map(|(k, v)| (*k, v)));
    let wrapped = namespaced_etc(&command, root, "gemini-cli", dir);
    common::run_bounded(wrapped, dir, std::time::Duration::from_secs(90))
}

#[test]
fn gemini_cli_under_managed_system_settings_refuses_when_the_gateway_is_unreachable() {
    // The fail-closed half: no gateway to reach.
    let dir = common::scratch();
    std::fs::create_dir_all(dir.join("project")).unwrap();
    let root = dir.join("root");
    common::succeeded(
        &["install"],
        &managed_to("gemini-cli", &root, "http://127.0.0.1:9"),
    );
    let model = fake_gemini::FakeGemini::start("touch ran.txt");
    let ran = run_gemini(&dir, &root, &model.url);
    assert!(
        !dir.join("project/ran.txt").exists(),
        "the command ran: {}\n{}",
        ran.stdout,
        ran.stderr
    );
    assert!(
        !ran.stderr.contains("Skipping system settings"),
        "{}",
        ran.stderr
    );
    // The managed relay refused the agent's first turn (BeforeAgent).
    assert!(
        ran.stdout.contains("blocked: hookhost relay") && ran.stdout.contains("--unreachable deny"),
        "{}",
        ran.stdout
    );
    // Control: without the system file the user's `enabled: false` holds
    // and the call runs.
    let empty = dir.join("no-root");
    std::fs::create_dir_all(empty.join("etc/gemini-cli")).unwrap();
    let model = fake_gemini::FakeGemini::start("touch ran.txt");
    let ran = run_gemini(&dir, &empty, &model.url);
    assert!(
        dir.join("project/ran.txt").exists(),
        "the control did not run the command: {}\n{}",
        ran.stdout,
        ran.stderr
    );
}

#[test]
fn doctor_names_a_managed_folder_other_users_can_write() {
    use std::os::unix::fs::PermissionsExt;
    let dir = common::scratch();
    common::succeeded(&["install"], &managed("gemini-cli", &dir.join("root"), &[]));
    let (_, report) = doctor_of("gemini-cli", &dir);
    assert_eq!(report["bypasses"], json!([]), "{report:#}");
    let folder = dir.join("root/etc/gemini-cli");
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o777)).unwrap();
    let (code, report) = doctor_of("gemini-cli", &dir);
    assert_eq!(code, 1);
    let bypasses = report["bypasses"].to_string();
    assert!(
        bypasses.contains("writable by group or others"),
        "{report:#}"
    );
}

/// The positive half: Codex's managed hooks run `hookhost relay --connect
/// https://…` to the team's TLS gateway, with the user's token and the
/// team's CA in their environment; the gateway's policy for the token's
/// tenant refuses the command, and the model is told why.
#[test]
fn codex_under_managed_requirements_gets_the_tls_gateways_answer() {
    let dir = common::scratch();
    std::fs::create_dir_all(dir.join("project")).unwrap();
    std::fs::create_dir_all(dir.join("home")).unwrap();
    let root = dir.join("root");
    let touch = r#"[hooks.commands.no_touch]
dialect = "codex"
events = ["PreToolUse"]
command = "case \"$(jq -r .tool_input.command)\" in touch*) echo 'ACME-3: no new files' >&2; exit 2;; esac"
scope = { tenants = ["acme"] }
"#;
    let gateway = gw::Gateway::start("managed-codex", touch);
    common::succeeded(&["install"], &managed_to("codex", &root, &gateway.url()));
    let env = gateway.client_env("acme", "ann");
    let model = codex_model::FakeModel::start(codex_model::exec_command("touch ran.txt"));
    let ran = run_codex_with(&dir, &root, &model.base_url, &env);
    assert!(
        !dir.join("project/ran.txt").exists(),
        "the command ran: {}",
        ran.stderr
    );
    let told = model
        .requests()
        .iter()
        .any(|r| r.to_string().contains("ACME-3: no new files"));
    assert!(told, "the model was not told why: {}", ran.stderr);
}

/// Gemini CLI's positive half: its system settings run `hookhost relay
/// --connect https://…` to the team's TLS gateway (the token and the CA
/// in the user's environment), and the gateway's policy for the token's
/// tenant refuses the command, its reason reaching the model.
#[test]
fn gemini_cli_under_managed_system_settings_gets_the_tls_gateways_answer() {
    let dir = common::scratch();
    std::fs::create_dir_all(dir.join("project")).unwrap();
    let root = dir.join("root");
    let deny = r#"[hooks.commands.no_touch]
dialect = "gemini-cli"
events = ["BeforeTool"]
command = "case \"$(jq -r .tool_input.command)\" in touch*) echo '{\"decision\":\"deny\",\"reason\":\"ACME-4: no new files\"}';; esac"
scope = { tenants = ["acme"] }
"#;
    let gateway = gw::Gateway::start("managed-gemini", deny);
    common::succeeded(
        &["install"],
        &managed_to("gemini-cli", &root, &gateway.url()),
    );
    let env = gateway.client_env("acme", "ann");
    let model = fake_gemini::FakeGemini::start("touch ran.txt");
    let ran = run_gemini_with(&dir, &root, &model.url, &env);
    assert!(
        !dir.join("project/ran.txt").exists(),
        "the command ran: {}",
        ran.stdout
    );
    let told = model
        .requests()
        .iter()
        .flat_map(|r| r.function_responses())
        .any(|r| r.to_string().contains("ACME-4: no new files"));
    assert!(
        told,
        "the model was not told why: {}\n{}",
        ran.stdout, ran.stderr
    );
}

//! hookhost as the user's daemon: one `hookhost serve --socket --listen`
//! answering agents' HTTP hooks and relays from many sessions, refusing a
//! second daemon, reloading when a settings file changes, and relays that
//! do what `--unreachable` says when no daemon runs.

#![allow(clippy::unwrap_used)]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A Claude Code settings file whose one PreToolUse hook denies any
/// command containing `word`, in plain sh.
fn guard_settings(dir: &Path, word: &str, on_failure: Option<&str>) -> PathBuf {
    let deny = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no WORD here"}}"#
        .replace("WORD", word);
    let script = format!("if grep -q '{word}'; then printf '%s' '{deny}'; fi");
    let mut group = json!({"matcher": "Bash", "hooks": [{"type": "command", "command": script}]});
    if let Some(f) = on_failure {
        group["onFailure"] = json!(f);
    }
    let path = dir.join("settings.json");
    let text = json!({"hooks": {"PreToolUse": [group]}}).to_string();
    std::fs::write(&path, text).unwrap();
    path
}

/// A hooks.toml importing `settings`, with an audit log beside it.
fn hooks_toml(dir: &Path, settings: &Path) -> PathBuf {
    let path = dir.join("hooks.toml");
    let text = format!(
        "[hooks.import]\nclaude-code = {:?}\n\n[hooks.audit]\npath = \"audit.jsonl\"\n",
        settings.display().to_string()
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// The daemon's `XDG_CONFIG_HOME`, beside its config: its trust store
/// approves the config's project hooks.
fn xdg_of(config: &Path) -> PathBuf {
    config.with_file_name("xdg")
}

/// `hookhost serve -c CONFIG --socket SOCKET --listen 127.0.0.1:0 EXTRA`:
/// the child and the TCP address, once both are announced.
/// The daemon's per-user token and trust store live in
/// `XDG_CONFIG_HOME/hookhost`, here `xdg/` beside the config file.
fn daemon(config: &Path, socket: &Path, extra: &[&str]) -> (Child, String) {
    let xdg = xdg_of(config);
    common::trust_all(config, None, &xdg);
    let mut child = Command::new(common::HOOKHOST)
        .args(["serve", "--listen", "127.0.0.1:0", "-c"])
        .arg(config)
        .env("XDG_CONFIG_HOME", &xdg)
        .arg("--socket")
        .arg(socket)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let (mut tcp, mut unix) = (String::new(), String::new());
    out.read_line(&mut tcp).unwrap();
    out.read_line(&mut unix).unwrap();
    assert_eq!(
        unix.trim(),
        format!("listening on unix:{}", socket.display())
    );
    let addr = tcp.trim().strip_prefix("listening on ws://").unwrap();
    (child, addr.to_string())
}

/// The `Authorization` header line with the token the daemon serving
/// `config` created.
fn auth(config: &Path) -> String {
    let path = xdg_of(config).join("hookhost/http-token");
    let token = std::fs::read_to_string(path).unwrap();
    format!("Authorization: Bearer {}\r\n", token.trim())
}

fn stop(mut child: Child) -> Output {
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let _ = child.stdin.take();
    child.wait_with_output().unwrap()
}

/// One POST on an open connection; the status and the body.
fn post(
    stream: &mut TcpStream,
    addr: &str,
    path: &str,
    headers: &str,
    body: &str,
) -> (u16, String) {
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n{headers}\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    read_response(stream)
}

fn read_response(stream: &mut TcpStream) -> (u16, String) {
    let mut reader = BufReader::new(stream);
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    let mut len = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line.trim().is_empty() {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; len];
    reader.read_exact(&mut body).unwrap();
    let code = status.split(' ').nth(1).unwrap().parse().unwrap();
    (code, String::from_utf8(body).unwrap())
}

fn connect(addr: &str) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s
}

fn pre_tool_use(session: &str, command: &str) -> String {
    json!({"session_id": session, "cwd": "/tmp", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": command}})
    .to_string()
}

/// `hookhost relay --dialect claude-code ARGS` with `event` on stdin.
fn relay(args: &[&str], event: &str, env: &[(&str, &Path)]) -> (i32, String, String) {
    let mut cmd = Command::new(common::HOOKHOST);
    cmd.args(["relay", "--dialect", "claude-code"]).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let (code, stdout, stderr) = common::run_with_stdin(&mut cmd, event.as_bytes());
    (code, stdout.trim().to_string(), stderr.trim().to_string())
}

fn decision(body: &str) -> Value {
    let v: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body:?}"));
    v["hookSpecificOutput"]["permissionDecision"].clone()
}

#[test]
fn one_daemon_answers_http_hooks_relays_and_status_for_two_sessions() {
    let dir = common::scratch();
    let settings = guard_settings(&dir, "rm -rf", None);
    let config = hooks_toml(&dir, &settings);
    let socket = dir.join("run/hookhost.sock");
    let (child, addr) = daemon(&config, &socket, &[]);

    // Two requests on one kept-alive connection, as an HTTP client pools.
    let mut s = connect(&addr);
    let auth = auth(&config);
    let (code, body) = post(
        &mut s,
        &addr,
        "/hooks/claude-code",
        &auth,
        &pre_tool_use("s1", "rm -rf build"),
    );
    assert_eq!((code, decision(&body)), (200, json!("deny")), "{body}");
    let (code, body) = post(
        &mut s,
        &addr,
        "/hooks/claude-code",
        &auth,
        &pre_tool_use("s1", "ls"),
    );
    assert_eq!((code, body.as_str()), (200, "{}"));

    let sock = socket.to_str().unwrap();
    let (code, stdout, _) = relay(&["--connect", sock], &pre_tool_use("s2", "rm -rf /"), &[]);
    assert_eq!((code, decision(&stdout)), (0, json!("deny")), "{stdout}");
    let (code, stdout, stderr) = relay(&["--connect", sock], &pre_tool_use("s2", "ls"), &[]);
    assert_eq!((code, stdout.as_str()), (0, ""), "{stderr}");

    let status = Command::new(common::HOOKHOST)
        .args(["status", "--json", "--connect", sock])
        .output()
        .unwrap();
    assert!(status.status.success());
    let status: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(
        status["agents"]["claude-code"],
        json!({"calls": 4, "sessions": 2})
    );
    assert_eq!(status["hooks"][0]["calls"], 4);
    let text = Command::new(common::HOOKHOST)
        .args(["status", "--connect", sock])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("claude-code") && text.contains("import-001-claude-code-PreToolUse"),
        "{text}"
    );

    let out = stop(child);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!socket.exists(), "the socket is removed at exit");
    let audit = std::fs::read_to_string(dir.join("audit.jsonl")).unwrap();
    let lines: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (decided, ran): (Vec<&Value>, Vec<&Value>) =
        lines.iter().partition(|l| l["kind"] == "decision");
    let decisions: Vec<&str> = decided
        .iter()
        .map(|l| l["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(
        decisions,
        ["deny", "continue", "deny", "continue"],
        "{audit}"
    );
    let seen: Vec<(&str, &str)> = ran
        .iter()
        .map(|l| {
            (
                l["session"].as_str().unwrap(),
                l["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("s1", "deny_tool"),
            ("s1", "continue"),
            ("s2", "deny_tool"),
            ("s2", "continue")
        ]
    );
}

#[test]
fn a_second_daemon_is_refused_and_a_dead_one_s_socket_is_replaced() {
    let dir = common::scratch();
    let settings = guard_settings(&dir, "rm -rf", None);
    let config = hooks_toml(&dir, &settings);
    let socket = dir.join("hookhost.sock");
    std::fs::write(&socket, "left by a daemon that was killed").unwrap();
    let (child, _) = daemon(&config, &socket, &[]);
    let second = Command::new(common::HOOKHOST)
        .args(["serve", "-c"])
        .arg(&config)
        .arg("--socket")
        .arg(&socket)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{stderr}");
    let pid = format!("another hookhost (pid {})", child.id());
    assert!(stderr.contains(&pid), "{stderr}");
    let sock = socket.to_str().unwrap();
    let (code, stdout, _) = relay(&["--connect", sock], &pre_tool_use("s", "rm -rf x"), &[]);
    assert_eq!((code, decision(&stdout)), (0, json!("deny")));
    assert!(stop(child).status.success());
}

#[test]
fn a_relay_with_no_daemon_does_what_unreachable_says() {
    let dir = common::scratch();
    let missing = dir.join("nobody.sock");
    let sock = missing.to_str().unwrap();
    let event = pre_tool_use("s", "rm -rf x");
    let (code, stdout, stderr) = relay(&["--connect", sock], &event, &[]);
    assert_eq!((code, stdout.as_str()), (2, ""), "deny is the default");
    assert!(
        stderr.contains("no hookhost answers") && stderr.contains("--unreachable deny"),
        "{stderr}"
    );
    // `allow` lets it through saying nothing the agent reads (Gemini CLI
    // would show any stderr at exit 0 as a system message); its log says
    // why, on stderr only when HOOKHOST_LOG asks for it.
    let state = dir.join("state");
    let quiet = [("XDG_STATE_HOME", state.as_path())];
    let allow = ["--connect", sock, "--unreachable", "allow"];
    let (code, stdout, stderr) = relay(&allow, &event, &quiet);
    assert_eq!((code, stdout.as_str(), stderr.as_str()), (0, "", ""));
    let log = std::fs::read_to_string(state.join("hookhost/relay.log")).unwrap();
    assert!(log.contains("letting the event through"), "{log}");
    let warn = Path::new("warn");
    let (code, _, stderr) = relay(&allow, &event, &[("HOOKHOST_LOG", warn)]);
    assert_eq!(code, 0);
    assert!(stderr.contains("letting the event through"), "{stderr}");

    // `run`: the chain of the user's default config, in the relay itself.
    let home = dir.join("config");
    std::fs::create_dir_all(home.join("hookhost")).unwrap();
    let settings = guard_settings(&home.join("hookhost"), "rm -rf", None);
    hooks_toml(&home.join("hookhost"), &settings);
    let args = ["--connect", sock, "--unreachable", "run"];
    let env = [("XDG_CONFIG_HOME", home.as_path()), ("HOOKHOST_LOG", warn)];
    let (code, stdout, stderr) = relay(&args, &event, &env);
    assert_eq!((code, decision(&stdout)), (0, json!("deny")), "{stderr}");
    assert!(stderr.contains("--unreachable run"), "{stderr}");
    // With no config to run, `run` refuses too.
    let empty = dir.join("empty");
    let (code, _, _) = relay(&args, &event, &[("XDG_CONFIG_HOME", &empty)]);
    assert_eq!(code, 2);
}

/// At a stop, exit 2 tells the agent to keep working: a relay that found
/// no hookhost and refused there would keep every session going for
/// ever (the real Codex did, until killed). There the agent stops, told
/// why; a tool call is still refused.
#[test]
fn a_relay_with_no_daemon_lets_a_stop_happen_with_a_warning() {
    let dir = common::scratch();
    let sock = dir.join("nobody.sock");
    let sock = sock.to_str().unwrap();
    let stop = json!({"session_id": "s", "transcript_path": "/t", "cwd": "/tmp",
        "hook_event_name": "Stop", "stop_hook_active": false});
    let (code, stdout, _) = relay(&["--connect", sock], &stop.to_string(), &[]);
    assert_eq!(code, 0, "{stdout}");
    let answer: Value = serde_json::from_str(&stdout).unwrap();
    let message = answer["systemMessage"].as_str().unwrap_or_default();
    assert!(
        message.contains("no hookhost answers") && message.contains("it stops instead"),
        "{answer}"
    );
    assert!(answer.get("decision").is_none(), "no block: {answer}");
    let (code, _, _) = relay(&["--connect", sock], &pre_tool_use("s", "ls"), &[]);
    assert_eq!(code, 2);
}

#[test]
fn the_daemon_reloads_when_an_imported_settings_file_changes() {
    let dir = common::scratch();
    let settings = guard_settings(&dir, "curl", None);
    let config = hooks_toml(&dir, &settings);
    let socket = dir.join("hookhost.sock");
    let (child, _) = daemon(&config, &socket, &[]);
    let sock = socket.to_str().unwrap();
    let event = pre_tool_use("s", "rm -rf x");
    let (code, stdout, _) = relay(&["--connect", sock], &event, &[]);
    assert_eq!(
        (code, stdout.as_str()),
        (0, ""),
        "the first guard lets rm through"
    );
    guard_settings(&dir, "rm -rf", None);
    // The changed command is untrusted until approved again.
    common::trust_all(&config, None, &xdg_of(&config));
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (_, stdout, _) = relay(&["--connect", sock], &event, &[]);
        if !stdout.is_empty() {
            assert_eq!(decision(&stdout), json!("deny"));
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no reload after the settings file changed"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let out = stop(child);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(
        log.contains("a watched file changed: config reloaded"),
        "{log}"
    );
}

#[test]
fn http_hooks_are_admitted_as_the_sidecar_admits_and_fail_closed() {
    let dir = common::scratch();
    // A guard that breaks (exit 1) under onFailure: block must refuse.
    let settings = dir.join("settings.json");
    let broken = json!({"hooks": {"PreToolUse": [{"matcher": "Bash",
        "hooks": [{"type": "command", "command": "exit 1", "onFailure": "block"}]}]}});
    std::fs::write(&settings, broken.to_string()).unwrap();
    let config = hooks_toml(&dir, &settings);
    let token = dir.join("token");
    std::fs::write(&token, "s3cret\n").unwrap();
    let socket = dir.join("hookhost.sock");
    let (child, addr) = daemon(&config, &socket, &["--token-file", token.to_str().unwrap()]);
    let event = pre_tool_use("s", "ls");
    let auth = "Authorization: Bearer s3cret\r\n";
    let cases: [(&str, &str, u16); 5] = [
        ("/hooks/claude-code", "", 401),
        ("/hooks/claude-code", "Authorization: Bearer nope\r\n", 401),
        (
            "/hooks/claude-code",
            "Origin: https://evil.example\r\nAuthorization: Bearer s3cret\r\n",
            403,
        ),
        ("/hooks/no-such-agent", auth, 404),
        ("/elsewhere", auth, 404),
    ];
    for (path, headers, want) in cases {
        let (code, body) = post(&mut connect(&addr), &addr, path, headers, &event);
        assert_eq!(code, want, "{path} {headers:?}: {body}");
    }
    let (code, body) = post(
        &mut connect(&addr),
        &addr,
        "/hooks/claude-code",
        auth,
        "{not json",
    );
    assert_eq!(code, 400, "{body}");
    let (code, body) = post(
        &mut connect(&addr),
        &addr,
        "/hooks/claude-code",
        auth,
        &event,
    );
    assert_eq!((code, decision(&body)), (200, json!("deny")), "{body}");
    assert!(stop(child).status.success());
}

/// The daemon's TCP port serves no one without the per-user token, on
/// loopback too: not the hook routes, not `/status`, not a WebSocket
/// session. The token is made at first start, 64 hex digits, mode 0600.
#[test]
fn the_daemons_port_requires_the_users_token_by_default() {
    use std::os::unix::fs::PermissionsExt;
    let dir = common::scratch();
    let settings = guard_settings(&dir, "rm -rf", None);
    let config = hooks_toml(&dir, &settings);
    let socket = dir.join("hookhost.sock");
    let (child, addr) = daemon(&config, &socket, &[]);
    let token_file = xdg_of(&config).join("hookhost/http-token");
    let mode = std::fs::metadata(&token_file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let token = std::fs::read_to_string(&token_file).unwrap();
    assert!(
        token.trim().len() == 64 && token.trim().chars().all(|c| c.is_ascii_hexdigit()),
        "{token:?}"
    );
    let event = pre_tool_use("s", "rm -rf x");
    let (code, body) = post(&mut connect(&addr), &addr, "/hooks/claude-code", "", &event);
    assert_eq!(code, 401, "{body}");
    let wrong = "Authorization: Bearer 00\r\n";
    let (code, _) = post(
        &mut connect(&addr),
        &addr,
        "/hooks/claude-code",
        wrong,
        &event,
    );
    assert_eq!(code, 401);
    let mut s = connect(&addr);
    let head = format!("GET /status HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    s.write_all(head.as_bytes()).unwrap();
    assert_eq!(read_response(&mut s).0, 401, "/status");
    let mut s = connect(&addr);
    let upgrade = format!(
        "GET / HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    );
    s.write_all(upgrade.as_bytes()).unwrap();
    assert_eq!(read_response(&mut s).0, 401, "WebSocket upgrade");
    let (code, body) = post(
        &mut connect(&addr),
        &addr,
        "/hooks/claude-code",
        &auth(&config),
        &event,
    );
    assert_eq!((code, decision(&body)), (200, json!("deny")), "{body}");
    // A second start reads the same token rather than making another.
    assert!(stop(child).status.success());
    let (child, _) = daemon(&config, &socket, &[]);
    assert_eq!(std::fs::read_to_string(&token_file).unwrap(), token);
    assert!(stop(child).status.success());
}

/// A Claude Code settings file whose SessionStart hook reports, as its
/// context, the `CLAUDE_ENV_FILE` and `BASH_ENV` it was given.
fn env_reporting_settings(dir: &Path) -> PathBuf {
    let report = r#"{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"env_file=%s bash_env=%s"}}"#;
    let script = format!(
        "cat >/dev/null; printf '{report}' \"${{CLAUDE_ENV_FILE-unset}}\" \"${{BASH_ENV-unset}}\""
    );
    let hooks = json!({"hooks": [{"type": "command", "command": script}]});
    let path = dir.join("settings.json");
    std::fs::write(
        &path,
        json!({"hooks": {"SessionStart": [hooks]}}).to_string(),
    )
    .unwrap();
    path
}

/// The context a relayed SessionStart answer carries.
fn context(stdout: &str) -> String {
    let v: Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout:?}"));
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_else(|| panic!("no context: {stdout}"))
        .to_string()
}

#[test]
fn the_variables_the_agent_gives_a_relay_reach_the_hooks_the_daemon_runs() {
    let dir = common::scratch();
    let settings = env_reporting_settings(&dir);
    let config = hooks_toml(&dir, &settings);
    let socket = dir.join("hookhost.sock");
    let (child, _) = daemon(&config, &socket, &[]);
    let sock = socket.to_str().unwrap();
    let event = json!({"session_id": "s", "cwd": "/tmp", "hook_event_name": "SessionStart",
        "source": "startup"})
    .to_string();

    // Claude Code gives its SessionStart hooks the file they write
    // `export` lines to; through the relay the daemon's hook gets the
    // same path, whatever characters it holds.
    let file = Path::new("/tmp/session-env/é x/sessionstart-hook-0.sh");
    let (code, stdout, stderr) = relay(&["--connect", sock], &event, &[("CLAUDE_ENV_FILE", file)]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        context(&stdout),
        format!("env_file={} bash_env=unset", file.display())
    );

    // Without it, none: the daemon makes up no value.
    let (code, stdout, _) = relay(&["--connect", sock], &event, &[]);
    assert_eq!(
        (code, context(&stdout)),
        (0, "env_file=unset bash_env=unset".into())
    );

    // A caller naming any other variable sets nothing: only the names the
    // dialect's agent sets are taken from the request.
    let mut s = std::os::unix::net::UnixStream::connect(&socket).unwrap();
    let forged = r#"X-Hookhost-Agent-Env: {"BASH_ENV":"/tmp/evil","CLAUDE_ENV_FILE":"/tmp/f"}"#;
    let head = format!(
        "POST /relay/claude-code HTTP/1.1\r\nHost: localhost\r\nContent-Length: {}\r\n\
         Connection: close\r\n{forged}\r\n\r\n{event}",
        event.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    let body = response.split("\r\n\r\n").nth(1).unwrap_or_default();
    let answer: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {response}"));
    let stdout = answer["stdout"].as_str().unwrap_or_default();
    assert_eq!(context(stdout), "env_file=/tmp/f bash_env=unset");
    assert!(stop(child).status.success());
}

//! The canary: a harmless event of the agent's dialect sent the way the
//! agent would send it (an http hook's POST with its headers, or the relay
//! command run with the event on stdin), between two reads of the
//! gateway's `GET /status`. The answer counts as hookhost's only when that
//! status is hookhost's and its count of the agent's calls went up.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hookhost::Dialect;
use serde::Serialize;
use serde_json::{Value, json};

use crate::cmd::install::route::words;
use crate::shared::client::{self, Failed};
use crate::shared::paths;
use crate::shared::remote::Gateway as Remote;

/// How long each step may take.
const WAIT: Duration = Duration::from_secs(15);

/// What the canary found.
#[derive(Serialize)]
pub(super) struct Canary {
    pub(super) ok: bool,
    pub(super) said: String,
}

/// The event the canary is sent as: a tool call about to run `true`.
pub(super) fn event_name(agent: Dialect) -> &'static str {
    match agent {
        Dialect::GeminiCli => "BeforeTool",
        _ => "PreToolUse",
    }
}

fn event(agent: Dialect) -> Value {
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut e = json!({"session_id": "hookhost-doctor", "transcript_path": "", "cwd": cwd,
        "hook_event_name": event_name(agent), "tool_input": {"command": "true"}});
    match agent {
        Dialect::GeminiCli => {
            e["tool_name"] = json!("run_shell_command");
            e["timestamp"] = json!("2026-01-01T00:00:00.000Z");
        }
        _ => {
            e["tool_name"] = json!("Bash");
            e["tool_use_id"] = json!("hookhost-doctor");
        }
    }
    e
}

/// Where the gateway's status is read.
enum Gateway {
    Http {
        base: String,
        headers: Vec<(String, String)>,
    },
    Socket(PathBuf),
}

/// Sends the canary through `handler` (hookhost's, at the canary event).
pub(super) fn send(agent: Dialect, handler: &Value) -> Canary {
    let result = match handler.get("type").and_then(Value::as_str) {
        Some("http") => via_http(agent, handler),
        _ => via_relay(agent, handler),
    };
    match result {
        Ok(said) => Canary { ok: true, said },
        Err(said) => Canary { ok: false, said },
    }
}

fn via_http(agent: Dialect, handler: &Value) -> Result<String, String> {
    let url = handler["url"].as_str().ok_or("the http hook has no url")?;
    let headers = expand_headers(handler);
    let route = format!("/hooks/{agent}");
    let base = url
        .trim_end_matches('/')
        .trim_end_matches(&route)
        .to_string();
    let gateway = Gateway::Http {
        base,
        headers: headers.clone(),
    };
    let before = calls(&gateway, agent)?;
    let body = event(agent).to_string();
    let (code, answer) = http("POST", url, &headers, body.as_bytes())?;
    let answer = String::from_utf8_lossy(&answer).trim().to_string();
    if code != 200 || serde_json::from_str::<Value>(&answer).is_err() {
        return Err(format!("{url} answered {code}: {answer}"));
    }
    counted(&gateway, agent, before, &format!("200 {answer}"))
}

/// The hook's headers as Claude Code sends them: `$VAR` and `${VAR}`
/// expanded from the environment for the variables `allowedEnvVars`
/// lists, empty for any other.
fn expand_headers(handler: &Value) -> Vec<(String, String)> {
    let allowed: Vec<&str> = handler["allowedEnvVars"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(headers) = handler["headers"].as_object() else {
        return Vec::new();
    };
    headers
        .iter()
        .filter_map(|(k, v)| Some((k.clone(), expand(v.as_str()?, &allowed))))
        .collect()
}

fn expand(text: &str, allowed: &[&str]) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, skip) = match after.strip_prefix('{') {
            Some(inner) => match inner.find('}') {
                Some(end) => (&inner[..end], end + 2),
                None => ("", 0),
            },
            None => {
                let end = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                (&after[..end], end)
            }
        };
        if name.is_empty() {
            out.push('$');
            rest = after;
            continue;
        }
        if allowed.contains(&name) {
            out.push_str(&std::env::var(name).unwrap_or_default());
        }
        rest = &after[skip..];
    }
    out.push_str(rest);
    out
}

fn via_relay(agent: Dialect, handler: &Value) -> Result<String, String> {
    let command = handler["command"]
        .as_str()
        .ok_or("the hook has no command")?;
    let gateway = relay_gateway(command)?;
    let before = calls(&gateway, agent)?;
    let (code, stdout, stderr) = run(command, &event(agent).to_string())?;
    if code != 0 && code != 2 {
        return Err(format!("the relay exited {code}: {stderr}"));
    }
    let said = format!("exit {code} {stdout}{stderr}");
    counted(&gateway, agent, before, said.trim())
}

/// Where a relay command forwards: its `--connect` (a URL or a socket),
/// else the user's daemon socket.
fn relay_gateway(command: &str) -> Result<Gateway, String> {
    let words = words(command).ok_or("the relay command has an open quote")?;
    let connect = words
        .windows(2)
        .find(|p| p[0] == "--connect")
        .map(|p| p[1].clone());
    Ok(match connect {
        Some(url) if url.starts_with("http://") || url.starts_with("https://") => {
            let token = std::env::var(super::TOKEN_VAR).unwrap_or_default();
            let headers = vec![("Authorization".into(), format!("Bearer {token}"))];
            Gateway::Http {
                base: url.trim_end_matches('/').into(),
                headers,
            }
        }
        Some(socket) => Gateway::Socket(socket.into()),
        None => Gateway::Socket(paths::default_socket()),
    })
}

/// The gateway's count of `agent`'s calls; an error when its status is
/// not hookhost's.
fn calls(gateway: &Gateway, agent: Dialect) -> Result<u64, String> {
    let (what, body) = match gateway {
        Gateway::Http { base, headers } => {
            let url = format!("{base}/status");
            match http("GET", &url, headers, b"")? {
                (200, body) => (url, body),
                (code, body) => {
                    let body = String::from_utf8_lossy(&body);
                    return Err(format!("{url} answered {code}: {}", body.trim()));
                }
            }
        }
        Gateway::Socket(socket) => {
            let until = Instant::now() + WAIT;
            match client::request(socket, ("GET", "/status"), "", b"", until) {
                Ok(body) => (socket.display().to_string(), body),
                Err(client::Failed::Late) => {
                    return Err(format!("{} gave no status", socket.display()));
                }
                Err(client::Failed::Because(why)) => return Err(why),
            }
        }
    };
    let status: Value =
        serde_json::from_slice(&body).map_err(|_| format!("{what} is not hookhost's status"))?;
    if !status["version"].is_string() {
        return Err(format!("{what} is not hookhost's status"));
    }
    Ok(status["agents"][agent.as_str()]["calls"]
        .as_u64()
        .unwrap_or(0))
}

/// The canary's verdict: hookhost's once its count went up.
fn counted(gateway: &Gateway, agent: Dialect, before: u64, answer: &str) -> Result<String, String> {
    let after = calls(gateway, agent)?;
    if after <= before {
        return Err(format!(
            "an answer came ({answer}) but hookhost's count of {agent} calls stayed at {before}: \
             it did not come from the gateway"
        ));
    }
    Ok(format!(
        "hookhost answered ({answer}); its {agent} calls went {before} -> {after}"
    ))
}

/// `sh -c command` with `input` on stdin, within [`WAIT`]: exit code,
/// stdout, stderr.
fn run(command: &str, input: &str) -> Result<(i32, String, String), String> {
    let mut child = Command::new("sh")
        .args(["-c", command])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run sh: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(input.as_bytes());
    }
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(WAIT) {
        Ok(Ok(out)) => Ok((
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).trim().to_string(),
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        )),
        Ok(Err(e)) => Err(format!("the relay failed: {e}")),
        Err(_) => {
            // SAFETY: kill(2) on the child's pid; it has not been reaped.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            Err(format!(
                "the relay gave no answer within {} s",
                WAIT.as_secs()
            ))
        }
    }
}

/// One HTTP request to `url` (https, or http on loopback) through the
/// relay's own client, bounded by [`WAIT`]: status and body.
fn http(
    method: &str,
    url: &str,
    headers: &[(String, String)],
    body: &[u8],
) -> Result<(u16, Vec<u8>), String> {
    let gateway = Remote::parse(url)?;
    let lines: String = headers
        .iter()
        .map(|(k, v)| format!("{k}: {v}\r\n"))
        .collect();
    let until = Instant::now() + WAIT;
    match gateway.send((method, ""), &lines, body, until) {
        Ok(answer) => Ok(answer),
        Err(Failed::Late) => Err(format!("{url}: no answer within {} s", WAIT.as_secs())),
        Err(Failed::Because(why)) => Err(why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_allowed_variables_are_expanded() {
        // SAFETY: a test's own variable, set before any thread reads it.
        unsafe { std::env::set_var("HOOKHOST_DOCTOR_T", "s3cret") };
        let allowed = ["HOOKHOST_DOCTOR_T"];
        assert_eq!(
            expand("Bearer $HOOKHOST_DOCTOR_T", &allowed),
            "Bearer s3cret"
        );
        assert_eq!(
            expand("Bearer ${HOOKHOST_DOCTOR_T}!", &allowed),
            "Bearer s3cret!"
        );
        assert_eq!(expand("Bearer $HOOKHOST_DOCTOR_T", &[]), "Bearer ");
        assert_eq!(expand("a $ b", &allowed), "a $ b");
    }
}

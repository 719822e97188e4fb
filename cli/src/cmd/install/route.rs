//! What install writes for each event: the handler that routes it to
//! hookhost in the agent's own format, and how hookhost's handlers are
//! recognised again (by uninstall, and by a second install).

use hookhost::Dialect;
use hookhost::NativeEvent;
use hookhost::protocol::LifecycleEvent;
use serde_json::{Value, json};

use super::target::Shape;

/// How the agent reaches hookhost.
#[derive(Debug, Clone)]
pub(super) enum Via {
    /// Claude Code's `"type": "http"` handler, posting to this URL with
    /// the daemon's per-user token (the port cannot prove who answers, so
    /// the daemon makes the caller prove who asks).
    Http {
        /// `…/hooks/claude-code`.
        url: String,
        /// The token sent as `Authorization: Bearer TOKEN`.
        token: String,
        /// The environment variable `token` names (`$VAR`), which the
        /// handler's `allowedEnvVars` must list for Claude Code to expand
        /// it: a managed install keeps the secret out of a file every user
        /// can read.
        env: Option<&'static str>,
    },
    /// A command handler running `hookhost relay`; the program's path,
    /// quoted for `sh`.
    Relay(String),
    /// A command handler running `hookhost relay --connect URL`: the
    /// relay forwards to a remote gateway (a managed install) instead of
    /// the user's own daemon.
    Gateway {
        /// The program's path, quoted for `sh`.
        program: String,
        /// The gateway's base URL.
        url: String,
    },
}

/// The entry written for one event.
pub(super) struct Route {
    /// The event key, as the agent spells it.
    pub(super) event: &'static str,
    /// What goes into the event's list: a matcher group (Claude's shape)
    /// or a flat entry (Cursor's, Copilot's).
    pub(super) item: Value,
    /// Whether a failure to reach hookhost refuses here.
    pub(super) closed: bool,
}

/// The entries that route every event of `agent` to hookhost. Failing
/// closed (`fail_closed`) applies where hookhost can refuse, except at
/// the stop events, where a refusal makes the agent go on instead of
/// stopping: a stopped hookhost must not keep the agent looping.
pub(super) fn routes(agent: Dialect, via: &Via, fail_closed: bool) -> Vec<Route> {
    agent
        .events()
        .into_iter()
        .filter(|e| installed(agent, e))
        .map(|e| {
            let closed = fail_closed && guards(&e);
            let handler = handler(agent, via, &e, closed);
            Route {
                event: e.name,
                item: item(agent, &e, handler),
                closed,
            }
        })
        .collect()
}

/// The events install routes to hookhost and makes fail closed: those
/// where hookhost can refuse, stops aside (see [`routes`]). `hookhost
/// doctor` checks exactly these.
pub(crate) fn guarded_events(agent: Dialect) -> Vec<&'static str> {
    agent
        .events()
        .into_iter()
        .filter(|e| installed(agent, e) && guards(e))
        .map(|e| e.name)
        .collect()
}

/// Whether a refusal at `e` keeps the agent from doing something.
fn guards(e: &NativeEvent) -> bool {
    e.can_refuse && !is_stop(e)
}

/// Which events get an entry: not those where a hook takes over the
/// agent's own work (Claude's WorktreeCreate), and for Copilot only the
/// CLI's camelCase spellings (VS Code's PascalCase ones would make the
/// CLI call hookhost twice per event).
fn installed(agent: Dialect, e: &NativeEvent) -> bool {
    !e.takes_over && (agent != Dialect::Copilot || !e.named_in_payload)
}

/// Whether a refusal at `e` keeps the agent going rather than stopping
/// it: stop and subagent_stop, and Claude Code's TaskCompleted (a block
/// keeps the task open and the agent at work on it).
fn is_stop(e: &NativeEvent) -> bool {
    e.hookhost == "task_completed"
        || e.hookhost
            .parse::<LifecycleEvent>()
            .is_ok_and(LifecycleEvent::is_stop)
}

/// The handler for one event, in the agent's format.
fn handler(agent: Dialect, via: &Via, e: &NativeEvent, closed: bool) -> Value {
    let command = match via {
        Via::Http { url, token, env } => {
            let auth = format!("Bearer {token}");
            let mut h = json!({"type": "http", "url": url, "headers": {"Authorization": auth}});
            if let Some(var) = env {
                h["allowedEnvVars"] = json!([var]);
            }
            if closed {
                h["onFailure"] = json!("block");
            }
            return h;
        }
        Via::Relay(program) => relay_command(program, agent, e, closed),
        Via::Gateway { program, url } => {
            let relay = relay_command(program, agent, e, closed);
            format!("{relay} --connect {}", quote(url))
        }
    };
    let mut h = match agent {
        Dialect::ClaudeCode | Dialect::Codex => json!({"type": "command", "command": command}),
        Dialect::GeminiCli => json!({"name": "hookhost", "type": "command", "command": command}),
        Dialect::Cursor => json!({"command": command}),
        _ => json!({"type": "command", "bash": command}),
    };
    match agent {
        Dialect::ClaudeCode if closed => h["onFailure"] = json!("block"),
        Dialect::Cursor if closed => h["failClosed"] = json!(true),
        _ => {}
    }
    h
}

/// `PROGRAM relay --dialect D --unreachable deny|allow [--event NAME]`.
fn relay_command(program: &str, agent: Dialect, e: &NativeEvent, closed: bool) -> String {
    let unreachable = if closed { "deny" } else { "allow" };
    let mut command = format!("{program} relay --dialect {agent} --unreachable {unreachable}");
    if !e.named_in_payload {
        command.push_str(" --event ");
        command.push_str(e.name);
    }
    command
}

/// The list item holding `handler`: a matcher group in Claude's shape
/// (matching every tool at tool events; Codex's groups go without one,
/// which it reads as every tool), the handler itself in a flat list.
fn item(agent: Dialect, e: &NativeEvent, handler: Value) -> Value {
    match Shape::of(agent) {
        Shape::Flat => handler,
        Shape::Grouped if e.tool && agent != Dialect::Codex => {
            json!({"matcher": "*", "hooks": [handler]})
        }
        Shape::Grouped => json!({"hooks": [handler]}),
    }
}

/// Whether `handler` is one install wrote for `agent`: an `http` handler
/// posting to `…/hooks/<agent>`, or a command running a `hookhost`
/// binary's `relay --dialect <agent>` without a config of its own (a
/// hand-written relay with `-c` runs its own chain and is the user's).
pub(crate) fn is_ours(agent: Dialect, handler: &Value) -> bool {
    let Some(h) = handler.as_object() else {
        return false;
    };
    let text = |k: &str| h.get(k).and_then(Value::as_str);
    if text("type") == Some("http") {
        let suffix = format!("/hooks/{agent}");
        return text("url").is_some_and(|u| u.trim_end_matches('/').ends_with(&suffix));
    }
    ["command", "bash"]
        .into_iter()
        .filter_map(text)
        .any(|c| is_relay_command(c, agent))
}

fn is_relay_command(command: &str, agent: Dialect) -> bool {
    let Some(words) = words(command) else {
        return false;
    };
    let [program, relay, flag, dialect, rest @ ..] = words.as_slice() else {
        return false;
    };
    let own_config = |w: &String| w == "-c" || w == "--config" || w.starts_with("--config=");
    std::path::Path::new(program)
        .file_name()
        .is_some_and(|n| n == "hookhost")
        && relay == "relay"
        && flag == "--dialect"
        && dialect == agent.as_str()
        && !rest.iter().any(own_config)
}

/// `path` quoted for `sh` when it needs it.
pub(super) fn quote(path: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+@%=:,".contains(c);
    if !path.is_empty() && path.chars().all(plain) {
        path.to_string()
    } else {
        format!("'{}'", path.replace('\'', r"'\''"))
    }
}

/// A shell command's words, as `sh` would split a simple command: single
/// and double quotes, backslash escapes; no expansions. `None` when a
/// quote is left open.
pub(crate) fn words(command: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => out.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => w.push(c),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => w.push(chars.next()?),
                        c => w.push(c),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).push(chars.next()?),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    out.extend(word);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_and_splitting_agree() {
        for path in ["/usr/bin/hookhost", "/home/a b/it's/hookhost", ""] {
            let command = format!("{} relay", quote(path));
            let split = words(&command).unwrap();
            assert_eq!(split, [path, "relay"], "{command}");
        }
        assert_eq!(words(r#"a "b \" c" d\ e"#).unwrap(), ["a", "b \" c", "d e"]);
        assert_eq!(words("a 'open"), None);
    }

    #[test]
    fn hookhosts_own_entries_are_recognised_and_nothing_else() {
        let ours = |c: &str| is_ours(Dialect::Codex, &json!({"command": c}));
        assert!(ours(
            "/opt/hookhost relay --dialect codex --unreachable deny"
        ));
        assert!(ours("'/a b/hookhost' relay --dialect codex"));
        assert!(!ours("/opt/hookhost relay --dialect claude-code"));
        assert!(!ours("/opt/hookhost relay --dialect codex -c my.toml"));
        assert!(!ours("/opt/not-hookhost relay --dialect codex"));
        assert!(!ours("echo hookhost relay --dialect codex"));
        let http = |u: &str| is_ours(Dialect::ClaudeCode, &json!({"type": "http", "url": u}));
        assert!(http("http://127.0.0.1:7070/hooks/claude-code"));
        assert!(http("http://127.0.0.1:7070/hooks/claude-code/"));
        assert!(!http("http://127.0.0.1:7070/hooks/codex"));
        assert!(!http("https://example.com/audit"));
    }
}

//! The embedder's observer (`Host::set_observer`): it sees each finished
//! hook call once, named as the audit log names its outcome, and each
//! answered foreign event's decision once, and it stays registered across
//! a reload. What the gateway's `/metrics` is built on.

#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};

use hookhost::protocol::params::ToolCall;
use hookhost::{AnsweredEvent, Config, Dialect, ForeignEvent, HookCall, Host, Observer};
use serde_json::json;

/// Every call and answer the host told of, one line each.
#[derive(Default)]
struct Seen(Mutex<Vec<String>>);

impl Seen {
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

impl Observer for Seen {
    fn hook_called(&self, c: &HookCall<'_>) {
        let line = format!(
            "call {} {} {} called={} failed={} timed_out={}",
            c.hook, c.stage, c.outcome, c.called, c.failed, c.timed_out
        );
        self.0.lock().unwrap().push(line);
    }

    fn event_answered(&self, e: &AnsweredEvent<'_>) {
        let by = e.record.hook.as_deref().unwrap_or("-");
        let line = format!("answer {} {} by {by}", e.dialect, e.record.decision);
        self.0.lock().unwrap().push(line);
    }
}

fn config(tools: &str) -> Config {
    let text = format!("[hooks.builtins.deny_tools]\nconfig = {{ tools = [{tools:?}] }}\n");
    let path = std::path::Path::new("hooks.toml");
    Config::parse(&text, false, path, std::env::temp_dir()).unwrap()
}

async fn bash(host: &Host) {
    let input = json!({"session_id": "s1", "transcript_path": "/t", "cwd": "/tmp",
        "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}});
    let event = ForeignEvent::read(Dialect::ClaudeCode, &input, None).unwrap();
    host.answer_foreign(&event).await;
}

#[tokio::test]
async fn the_observer_sees_each_call_and_each_answer_once_across_a_reload() {
    let host = Host::start(config("shell")).await;
    let seen = Arc::new(Seen::default());
    host.set_observer(seen.clone());
    bash(&host).await;
    assert_eq!(
        seen.take(),
        [
            "call deny_tools before_tool deny_tool called=true failed=false timed_out=false",
            "answer claude-code deny by deny_tools",
        ]
    );
    host.reload(config("web_.*")).await;
    bash(&host).await;
    assert_eq!(
        seen.take(),
        [
            "call deny_tools before_tool continue called=true failed=false timed_out=false",
            "answer claude-code continue by -",
        ],
        "still registered after the reload, and the new config decides"
    );
    let call = ToolCall {
        tool: "web_fetch".into(),
        ..Default::default()
    };
    host.before_tool(call).await;
    assert_eq!(
        seen.take(),
        ["call deny_tools before_tool deny_tool called=true failed=false timed_out=false"],
        "a stage run that answers no foreign event has calls and no answer"
    );
    host.shutdown().await;
}

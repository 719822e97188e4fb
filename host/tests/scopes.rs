//! `scope`: a hook for some agents, tenants or sessions only, filtered per
//! call from the `meta` the agent passes, in the one chain.

#![allow(clippy::unwrap_used)]

use hookhost_testkit as common;

use std::path::Path;

use hookhost::protocol::meta::Meta;
use hookhost::protocol::params::ToolCall;
use hookhost::{Config, Host, ToolOutcome};
use serde_json::json;

use common::{TEST_HOOK, scratch, tool_call};

/// A config read from TOML, as a user writes it.
fn parse(dir: &Path, text: &str) -> Result<Config, String> {
    let path = dir.join("hooks.toml");
    Config::parse(text, false, &path, dir.to_path_buf()).map_err(|e| e.to_string())
}

fn call_from(agent: Option<&str>, tenant: Option<&str>, session: Option<&str>) -> ToolCall {
    let mut call = tool_call("shell", json!({"command": "ls"}));
    call.meta = Meta {
        agent_id: agent.map(Into::into),
        tenant_id: tenant.map(Into::into),
        session_key: session.map(Into::into),
        ..Meta::default()
    };
    call
}

fn denied(outcome: &ToolOutcome<ToolCall>) -> Option<&str> {
    match outcome {
        ToolOutcome::Deny { reason } => Some(reason),
        _ => None,
    }
}

/// From GoClaw docs/agent-hooks "Scopes" and `agent_ids` (a hook for
/// specific agents within a tenant); the dispatcher "resolves hooks by
/// scope + event": a process hook scoped to agent a1 of tenant acme
/// denies only that agent's calls, every other call is filtered and
/// counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scoped_process_hook_runs_only_for_its_agent_and_tenant() {
    let dir = scratch();
    let text = format!(
        r#"
[hooks.defaults]
shutdown_grace_ms = 500

[hooks.processes.acme_a1]
command = ["{hook}", "--answer", '{{"action":"deny_tool","reason":"acme a1 may not"}}']
intercept = ["before_tool"]
on_error = "allow"
scope = {{ agents = ["a1"], tenants = ["acme"] }}
"#,
        hook = TEST_HOOK
    );
    let host = Host::start(parse(&dir, &text).unwrap()).await;
    let mine = host
        .before_tool(call_from(Some("a1"), Some("acme"), None))
        .await;
    assert_eq!(denied(&mine), Some("acme a1 may not"));
    for (agent, tenant) in [
        (Some("a2"), Some("acme")),
        (Some("a1"), Some("globex")),
        (Some("a1"), None),
        (None, None),
    ] {
        let other = host.before_tool(call_from(agent, tenant, None)).await;
        assert!(
            matches!(other, ToolOutcome::Continue { .. }),
            "{agent:?}/{tenant:?}: {other:?}"
        );
    }
    let stats = &host.stats()[0];
    assert_eq!((stats.calls, stats.filtered), (1, 4));
    assert_eq!(host.hooks()[0].scope.to_string(), "agents=a1;tenants=acme");
    host.shutdown().await;
}

/// From GoClaw docs/agent-hooks "Execution Flow" (scope resolution, then
/// the matcher): a command hook scoped to one session blocks that
/// session's user prompts only; a call outside the scope never spawns it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scoped_command_hook_runs_only_for_its_session() {
    let dir = scratch();
    let marker = dir.join("ran");
    let text = format!(
        r#"
[hooks.commands.s1_only]
command = "echo x >> '{marker}'; echo 'not in s-1' >&2; exit 2"
events = ["pre_tool_use"]
scope = {{ sessions = ["s-1"] }}
"#,
        marker = marker.display()
    );
    let host = Host::start(parse(&dir, &text).unwrap()).await;
    let other = host.before_tool(call_from(None, None, Some("s-2"))).await;
    assert!(matches!(other, ToolOutcome::Continue { .. }), "{other:?}");
    assert!(!marker.exists(), "the hook ran for another session");
    let mine = host.before_tool(call_from(None, None, Some("s-1"))).await;
    assert!(
        denied(&mine).is_some_and(|r| r.contains("not in s-1")),
        "{mine:?}"
    );
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "x\n");
    assert_eq!(host.stats()[0].filtered, 1);
    host.shutdown().await;
}

/// From GoClaw docs/agent-hooks "Config Fields Reference" (`scope` is one
/// of a fixed set): a misspelt key or an empty list is a load error that
/// names the hook, never a hook that silently runs for everyone or no one.
#[test]
fn a_bad_scope_is_a_load_error_naming_the_hook() {
    let dir = scratch();
    let unknown = parse(
        &dir,
        "[hooks.builtins.deny_tools]\nconfig = { tools = [\"rm\"] }\nscope = { agent = [\"a1\"] }\n",
    )
    .unwrap_err();
    assert!(unknown.contains("builtin `deny_tools`"), "{unknown}");
    assert!(unknown.contains("unknown field `agent`"), "{unknown}");
    let empty = parse(
        &dir,
        "[hooks.commands.c]\ncommand = \"true\"\nevents = [\"pre_tool_use\"]\nscope = { tenants = [] }\n",
    )
    .unwrap_err();
    assert!(empty.contains("command hook `c`"), "{empty}");
    assert!(empty.contains("`scope.tenants` is empty"), "{empty}");
}

/// Scope and matcher together (GoClaw's "resolve by scope, then
/// matcher"): a builtin scoped to a tenant with a matcher denies only that
/// tenant's calls of the named tool.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scope_and_matcher_must_both_agree() {
    let dir = scratch();
    let text = r#"
[hooks.builtins.deny_tools]
config = { tools = ["shell", "read_file"] }
matcher = "shell"
scope = { tenants = ["acme"] }
"#;
    let host = Host::start(parse(&dir, text).unwrap()).await;
    let acme_shell = host.before_tool(call_from(None, Some("acme"), None)).await;
    assert!(denied(&acme_shell).is_some(), "{acme_shell:?}");
    let mut read = call_from(None, Some("acme"), None);
    read.tool = "read_file".into();
    let acme_read = host.before_tool(read).await;
    assert!(
        matches!(acme_read, ToolOutcome::Continue { .. }),
        "{acme_read:?}"
    );
    let other_shell = host
        .before_tool(call_from(None, Some("globex"), None))
        .await;
    assert!(
        matches!(other_shell, ToolOutcome::Continue { .. }),
        "{other_shell:?}"
    );
    assert_eq!(host.stats()[0].filtered, 2);
    host.shutdown().await;
}

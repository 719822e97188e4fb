//! `hookhost serve --listen` as a team's gateway: TLS on the port, callers
//! known by the tokens of `--auth tokens:FILE`, and their identity (not
//! what their events claim) in every call's `meta`, so scopes hold to the
//! credential. Driven with the real binary: `hookhost relay --connect
//! https://…` as an agent's command hook runs it, a WebSocket agent over
//! TLS, and a raw TLS client for `GET /status`. The certificates are made
//! by openssl for each run: a private CA, trusted through SSL_CERT_FILE.

#![allow(clippy::unwrap_used)]

mod common;
#[path = "common/gateway.rs"]
mod gw;

use std::process::Command;

use serde_json::{Value, json};

use common::HOOKHOST;
use gw::{CONFIG, Gateway, scratch};

#[test]
fn each_caller_is_who_its_token_says_and_the_scopes_hold_to_it() {
    let gw = Gateway::start("scopes", CONFIG);
    let ann = gw.token("acme", "ann");
    let bob = gw.token("globex", "bob");
    let cat = gw.token("globex", "cat");
    let (code, stderr) = gw.relay(&ann, true, &[]);
    assert_eq!(
        (code, stderr.trim()),
        (2, "acme says no"),
        "acme's guard refuses acme's caller"
    );
    let (code, stderr) = gw.relay(&bob, true, &[]);
    assert_eq!(
        (code, stderr.trim()),
        (2, "bob may not"),
        "a second tenant's user lands in his own chain"
    );
    let (code, stderr) = gw.relay(&cat, true, &[]);
    assert_eq!(
        (code, stderr.as_str()),
        (0, ""),
        "no guard is for globex's cat"
    );
    let (status, body) = gw.get("/status", Some(&cat));
    assert_eq!(status, 200, "{body}");
    let status: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(status["agents"]["claude-code"]["calls"], json!(3));
}

#[test]
fn a_missing_or_unknown_token_or_an_untrusted_certificate_is_refused() {
    let gw = Gateway::start("refusals", CONFIG);
    let ann = gw.token("acme", "ann");
    let (code, stderr) = gw.relay("hh_not-a-token", true, &[]);
    assert_eq!(code, 2);
    assert!(stderr.contains("answered 401"), "{stderr}");
    let (code, stderr) = gw.relay("hh_not-a-token", true, &["--unreachable", "allow"]);
    assert_eq!(
        (code, stderr.as_str()),
        (0, ""),
        "--unreachable allow is the user's own choice"
    );
    let (code, stderr) = gw.relay(&ann, false, &[]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("certificate") || stderr.contains("certificate authority"),
        "{stderr}"
    );
    assert_eq!(
        gw.get("/status", None).0,
        401,
        "status is the credential's too"
    );
    assert_eq!(gw.get("/status", Some("hh_nope")).0, 401);
}

#[test]
fn a_token_added_or_removed_while_the_gateway_runs_takes_effect_at_once() {
    let gw = Gateway::start("reread", CONFIG);
    let ann = gw.token("acme", "ann");
    assert_eq!(gw.relay(&ann, true, &[]).0, 2);
    let dan = gw.token("initech", "dan");
    assert_eq!(
        gw.relay(&dan, true, &[]),
        (0, String::new()),
        "dan was added after the start"
    );
    let tokens = gw.dir.join("tokens");
    let kept: String = std::fs::read_to_string(&tokens)
        .unwrap()
        .lines()
        .filter(|l| !l.contains("user=dan"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&tokens, kept).unwrap();
    let (code, stderr) = gw.relay(&dan, true, &[]);
    assert_eq!(code, 2);
    assert!(stderr.contains("401"), "dan's line is gone: {stderr}");
}

#[test]
fn with_the_gateway_stopped_the_relay_refuses() {
    let mut gw = Gateway::start("stopped", CONFIG);
    let cat = gw.token("globex", "cat");
    assert_eq!(gw.relay(&cat, true, &[]).0, 0);
    gw.stop();
    let (code, stderr) = gw.relay(&cat, true, &[]);
    assert_eq!(code, 2);
    assert!(stderr.contains("refusing (--unreachable deny)"), "{stderr}");
}

#[test]
fn off_loopback_the_port_needs_tls() {
    let dir = scratch("offloop");
    std::fs::write(dir.join("hooks.toml"), CONFIG).unwrap();
    std::fs::write(dir.join("tokens"), "").unwrap();
    let auth = format!("tokens:{}", dir.join("tokens").display());
    let out = Command::new(HOOKHOST)
        .args(["serve", "--listen", "0.0.0.0:0", "--auth", &auth, "-c"])
        .arg(dir.join("hooks.toml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--tls-cert"), "{stderr}");
}

type Tls = tokio_util::compat::Compat<tokio_rustls::client::TlsStream<tokio::net::TcpStream>>;

/// A WebSocket agent over TLS with `token`: its answers to `requests`.
async fn ws_calls(gw: &Gateway, token: &str, requests: &[Value]) -> Vec<Value> {
    use tokio_util::compat::TokioAsyncReadCompatExt;
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", gw.port))
        .await
        .unwrap();
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let tls = tokio_rustls::TlsConnector::from(gw.tls())
        .connect(name, tcp)
        .await
        .unwrap();
    let mut client = soketto::handshake::Client::<Tls>::new(tls.compat(), "localhost", "/");
    let bearer = format!("Bearer {token}");
    let headers = [soketto::handshake::client::Header {
        name: "Authorization",
        value: bearer.as_bytes(),
    }];
    client.set_headers(&headers);
    match client.handshake().await.unwrap() {
        soketto::handshake::ServerResponse::Accepted { .. } => {}
        other => panic!("upgrade refused: {other:?}"),
    }
    let (mut tx, mut rx) = client.into_builder().finish();
    let mut answers = Vec::new();
    for request in requests {
        tx.send_text(request.to_string()).await.unwrap();
        tx.flush().await.unwrap();
        let mut buf = Vec::new();
        rx.receive_data(&mut buf).await.unwrap();
        answers.push(serde_json::from_slice(&buf).unwrap());
    }
    answers
}

#[tokio::test]
async fn what_a_websocket_call_claims_about_its_caller_is_overwritten_and_reload_is_refused() {
    let gw = Gateway::start("ws", CONFIG);
    let ann = gw.token("acme", "ann");
    let cat = gw.token("globex", "cat");
    let call = |id: u32, meta: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "host.before_tool",
               "params": {"tool": "shell", "arguments": {"command": "ls"}, "meta": meta}})
    };
    let claims_globex = call(1, json!({"tenant_id": "globex", "user_id": "cat"}));
    let reload = json!({"jsonrpc": "2.0", "id": 2, "method": "host.reload"});
    let answers = ws_calls(&gw, &ann, &[claims_globex, reload]).await;
    assert_eq!(answers[0]["result"]["action"], "deny_tool", "{answers:?}");
    assert!(
        answers[1]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not offered"),
        "{answers:?}"
    );
    let claims_bob = call(3, json!({"tenant_id": "acme", "user_id": "bob"}));
    let answers = ws_calls(&gw, &cat, &[claims_bob]).await;
    assert_eq!(answers[0]["result"]["action"], "continue", "{answers:?}");
}

/// The decision record of one answer, from its response's header.
fn decision(head: &str) -> Value {
    let line = head
        .lines()
        .find_map(|l| l.strip_prefix("X-Hookhost-Decision: "))
        .unwrap_or_else(|| panic!("no decision header in {head}"));
    serde_json::from_str(line).unwrap()
}

#[test]
fn every_answer_carries_its_decision_record_and_the_audit_log_keeps_it() {
    // cat's calls also meet a hook that times out and is let pass.
    let slow = "[hooks.commands.slow]\ncommand = \"sleep 3\"\ndialect = \"claude-code\"\n\
        events = [\"PreToolUse\"]\ntimeout_ms = 200\non_error = \"allow\"\nscope = { users = [\"cat\"] }\n";
    let audit = format!("{CONFIG}\n{slow}\n[hooks.audit]\npath = \"audit.jsonl\"\n");
    let mut gw = Gateway::start("records", &audit);
    let ann = gw.token("acme", "ann");
    let cat = gw.token("globex", "cat");
    let (status, head, body) = gw.send("POST", "/hooks/claude-code", Some(&ann), gw::EVENT);
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        decision(&head),
        json!({"decision": "deny", "hook": "acme_guard", "reason": "acme says no",
               "failed_open": [], "tenant": "acme", "user": "ann"})
    );
    let (_, head, _) = gw.send("POST", "/hooks/claude-code", Some(&cat), gw::EVENT);
    assert_eq!(
        decision(&head),
        json!({"decision": "continue", "failed_open": ["slow"], "tenant": "globex", "user": "cat"})
    );
    gw.stop();
    let log = std::fs::read_to_string(gw.dir.join("audit.jsonl")).unwrap();
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let decisions: Vec<&Value> = lines.iter().filter(|l| l["kind"] == "decision").collect();
    assert_eq!(decisions.len(), 2, "{log}");
    assert_eq!(
        (
            &decisions[0]["outcome"],
            &decisions[0]["hook"],
            &decisions[0]["tenant"],
            &decisions[0]["user"]
        ),
        (
            &json!("deny"),
            &json!("acme_guard"),
            &json!("acme"),
            &json!("ann")
        ),
        "{log}"
    );
    let hook_line = lines
        .iter()
        .find(|l| l["hook"] == "acme_guard" && l.get("kind").is_none())
        .unwrap();
    assert_eq!(hook_line["request_id"], decisions[0]["request_id"], "{log}");
    assert_eq!(
        hook_line["tenant"], "acme",
        "each hook's record names the caller too: {log}"
    );
}

/// `hookhost audit verify` over a gateway's log: two runs (two writers)
/// hold; an edited, removed or reordered record is found, with its line.
#[test]
fn audit_verify_finds_an_edited_removed_or_reordered_record() {
    let config = format!("{CONFIG}\n[hooks.audit]\npath = \"audit.jsonl\"\n");
    let mut dir = None;
    for run in ["audit-1", "audit-2"] {
        let mut gw = Gateway::start(run, &config);
        let dir = dir.get_or_insert_with(|| gw.dir.clone());
        if gw.dir != *dir {
            std::fs::copy(dir.join("audit.jsonl"), gw.dir.join("audit.jsonl")).unwrap();
            *dir = gw.dir.clone();
        }
        let ann = gw.token("acme", "ann");
        gw.send("POST", "/hooks/claude-code", Some(&ann), gw::EVENT);
        gw.send("POST", "/hooks/claude-code", Some(&ann), gw::EVENT);
        gw.stop();
    }
    let dir = dir.unwrap();
    let verify = |text: &str| {
        let log = dir.join("check.jsonl");
        std::fs::write(&log, text).unwrap();
        let out = Command::new(HOOKHOST)
            .args(["audit", "verify", "--url"])
            .arg(&log)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let log = std::fs::read_to_string(dir.join("audit.jsonl")).unwrap();
    let (code, said) = verify(&log);
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("8 records from 2 writer(s)"), "{said}");
    let lines: Vec<&str> = log.lines().collect();
    let edited = log.replacen("acme says no", "acme says yes", 1);
    let removed: String = lines
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 1)
        .map(|(_, l)| format!("{l}\n"))
        .collect();
    let mut moved = lines.clone();
    moved.swap(0, 1);
    for (what, text) in [
        ("edited", edited),
        ("removed", removed),
        ("moved", moved.join("\n")),
    ] {
        let (code, said) = verify(&text);
        assert_eq!(code, Some(1), "{what}: {said}");
        assert!(said.contains("record "), "{what}: {said}");
    }
}

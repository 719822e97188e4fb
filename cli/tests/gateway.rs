//! `hookhost serve --listen` as a team's gateway: TLS on the port, callers
//! known by the tokens of `--auth tokens:FILE`, and their identity (not
//! what their events claim) in every call's `meta`, so scopes hold to the
//! credential. Driven with the real binary: `hookhost relay --connect
//! https://…` as an agent's command hook runs it, a WebSocket agent over
//! TLS, and a raw TLS client for `GET /status`. The certificates are made
//! by openssl for each run: a private CA, trusted through SSL_CERT_FILE.

#![allow(clippy::unwrap_used)]

mod common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::Arc;

use serde_json::{Value, json};

use common::HOOKHOST;

/// Two guards, each for part of the team: one for tenant acme, one for
/// user bob (of any tenant).
const CONFIG: &str = r#"
[hooks.commands.acme_guard]
command = "echo acme says no >&2; exit 2"
dialect = "claude-code"
events = ["PreToolUse"]
scope = { tenants = ["acme"] }

[hooks.commands.bob_guard]
command = "echo bob may not >&2; exit 2"
dialect = "claude-code"
events = ["PreToolUse"]
scope = { users = ["bob"] }
"#;

const EVENT: &str = r#"{"session_id":"s1","transcript_path":"/t","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}"#;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hookhost-gw-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A private CA (`ca.pem`) and the gateway's certificate for localhost
/// and 127.0.0.1 signed by it (`gw.pem`, `gw.key`), made by openssl.
fn pki(dir: &Path) {
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("openssl (Debian's package) makes the test certificates");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    openssl(
        &[
            &["req", "-x509"][..],
            &ec,
            &[
                "-days",
                "2",
                "-subj",
                "/CN=test CA",
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
            ],
        ]
        .concat(),
    );
    openssl(
        &[
            &["req"][..],
            &ec,
            &[
                "-subj",
                "/CN=localhost",
                "-keyout",
                "gw.key",
                "-out",
                "gw.csr",
            ],
        ]
        .concat(),
    );
    std::fs::write(
        dir.join("ext"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\n",
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "gw.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "ext",
        "-out",
        "gw.pem",
    ]);
}

/// `hookhost token new`: the token it printed.
fn token(file: &Path, tenant: &str, user: &str) -> String {
    let out = Command::new(HOOKHOST)
        .args(["token", "new", "--file"])
        .arg(file)
        .args(["--tenant", tenant, "--user", user])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A team's gateway: the config, its PKI and tokens file in `dir`.
struct Gateway {
    dir: PathBuf,
    child: Option<Child>,
    port: u16,
}

impl Gateway {
    fn start(name: &str) -> Gateway {
        let dir = scratch(name);
        pki(&dir);
        std::fs::write(dir.join("hooks.toml"), CONFIG).unwrap();
        std::fs::write(dir.join("tokens"), "# the team\n").unwrap();
        let arg = |f: &str| dir.join(f).display().to_string();
        let auth = format!("tokens:{}", arg("tokens"));
        let (cert, key) = (arg("gw.pem"), arg("gw.key"));
        let extra = ["--tls-cert", &cert, "--tls-key", &key, "--auth", &auth];
        let (child, addr) = common::serve_listen(&dir.join("hooks.toml"), &extra);
        let port = addr.rsplit(':').next().unwrap().parse().unwrap();
        Gateway {
            dir,
            child: Some(child),
            port,
        }
    }

    fn token(&self, tenant: &str, user: &str) -> String {
        token(&self.dir.join("tokens"), tenant, user)
    }

    fn url(&self) -> String {
        format!("https://localhost:{}", self.port)
    }

    /// `hookhost relay --dialect claude-code --connect URL` with `token`
    /// in HOOKHOST_TOKEN, the CA in SSL_CERT_FILE unless `trusted` is
    /// false: its exit code and stderr.
    fn relay(&self, token: &str, trusted: bool, extra: &[&str]) -> (i32, String) {
        let mut cmd = Command::new(HOOKHOST);
        cmd.args([
            "relay",
            "--dialect",
            "claude-code",
            "--connect",
            &self.url(),
        ])
        .args(extra)
        .env("HOOKHOST_TOKEN", token)
        .env("HOOKHOST_LOG", "off");
        match trusted {
            true => cmd.env("SSL_CERT_FILE", self.dir.join("ca.pem")),
            false => cmd.env("SSL_CERT_FILE", self.dir.join("tokens")),
        };
        let (code, _, stderr) = common::run_with_stdin(&mut cmd, EVENT.as_bytes());
        (code, stderr)
    }

    fn tls(&self) -> Arc<rustls::ClientConfig> {
        let mut roots = rustls::RootCertStore::empty();
        let pem = std::fs::read(self.dir.join("ca.pem")).unwrap();
        use rustls::pki_types::pem::PemObject;
        for cert in rustls::pki_types::CertificateDer::pem_slice_iter(&pem) {
            roots.add(cert.unwrap()).unwrap();
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        Arc::new(config)
    }

    /// One plain HTTP request over TLS: the status and body.
    fn get(&self, path: &str, token: Option<&str>) -> (u16, String) {
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        let conn = rustls::ClientConnection::new(self.tls(), name).unwrap();
        let tcp = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        let mut tls = rustls::StreamOwned::new(conn, tcp);
        let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
        let req =
            format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n{auth}Connection: close\r\n\r\n");
        tls.write_all(req.as_bytes()).unwrap();
        let mut raw = Vec::new();
        let _ = tls.read_to_end(&mut raw);
        let text = String::from_utf8_lossy(&raw).into_owned();
        let status = text.split(' ').nth(1).unwrap_or("0").parse().unwrap();
        let body = text.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
        (status, body)
    }

    fn stop(&mut self) {
        let Some(child) = self.child.take() else {
            return;
        };
        // SAFETY: a signal to the gateway this test started.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGTERM);
        }
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "exit {:?}", out.status);
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[test]
fn each_caller_is_who_its_token_says_and_the_scopes_hold_to_it() {
    let gw = Gateway::start("scopes");
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
    let gw = Gateway::start("refusals");
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
    let gw = Gateway::start("reread");
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
    let mut gw = Gateway::start("stopped");
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
    let gw = Gateway::start("ws");
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

//! A team's gateway for the tests: `hookhost serve --listen` over TLS with
//! `--auth tokens:FILE`, its private CA made by openssl (Debian's
//! package), tokens made by `hookhost token new`, and the clients that
//! reach it (the real relay, a raw TLS client).

#![allow(dead_code)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::Arc;

use crate::common::HOOKHOST;

/// Two guards, each for part of the team: one for tenant acme, one for
/// user bob (of any tenant).
pub const CONFIG: &str = r#"
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

/// A Claude Code PreToolUse event, for the relay.
pub const EVENT: &str = r#"{"session_id":"s1","transcript_path":"/t","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}"#;

pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hookhost-gw-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A private CA (`ca.pem`) and the gateway's certificate for localhost
/// and 127.0.0.1 signed by it (`gw.pem`, `gw.key`), made by openssl.
pub fn pki(dir: &Path) {
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
pub fn token(file: &Path, tenant: &str, user: &str) -> String {
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
pub struct Gateway {
    pub dir: PathBuf,
    child: Option<Child>,
    pub port: u16,
}

impl Gateway {
    /// Starts one with `config` (a hooks.toml's text) and no caller yet.
    pub fn start(name: &str, config: &str) -> Gateway {
        Gateway::start_with(name, config, |dir| {
            std::fs::write(dir.join("tokens"), "# the team\n").unwrap();
            let auth = format!("tokens:{}", dir.join("tokens").display());
            (vec![], vec!["--auth".into(), auth])
        })
    }

    /// Starts one whose environment (`NAME=VALUE`s) and `--auth` flags
    /// `auth` gives (once its folder and certificates are made).
    pub fn start_with(
        name: &str,
        config: &str,
        auth: impl FnOnce(&Path) -> (Vec<String>, Vec<String>),
    ) -> Gateway {
        let dir = scratch(name);
        pki(&dir);
        std::fs::write(dir.join("hooks.toml"), config).unwrap();
        let arg = |f: &str| dir.join(f).display().to_string();
        let (cert, key) = (arg("gw.pem"), arg("gw.key"));
        let mut extra = vec!["--tls-cert".to_string(), cert, "--tls-key".into(), key];
        let (env, flags) = auth(&dir);
        extra.extend(flags);
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let wrapper: Vec<&str> = match env.is_empty() {
            true => vec![],
            false => std::iter::once("env")
                .chain(env.iter().map(String::as_str))
                .collect(),
        };
        let config = dir.join("hooks.toml");
        let (child, addr) = crate::common::serve_listen_under(&wrapper, &config, &extra);
        let port = addr.rsplit(':').next().unwrap().parse().unwrap();
        Gateway {
            dir,
            child: Some(child),
            port,
        }
    }

    pub fn token(&self, tenant: &str, user: &str) -> String {
        token(&self.dir.join("tokens"), tenant, user)
    }

    /// What a user's shell gives their agent to reach this gateway as
    /// `tenant`'s `user`: a new token in `HOOKHOST_TOKEN`, the team's CA
    /// in `SSL_CERT_FILE`.
    pub fn client_env(&self, tenant: &str, user: &str) -> [(&'static str, String); 2] {
        [
            ("HOOKHOST_TOKEN", self.token(tenant, user)),
            (
                "SSL_CERT_FILE",
                self.dir.join("ca.pem").display().to_string(),
            ),
        ]
    }

    pub fn url(&self) -> String {
        format!("https://localhost:{}", self.port)
    }

    /// `hookhost relay --dialect claude-code --connect URL` with `token`
    /// in HOOKHOST_TOKEN, the CA in SSL_CERT_FILE unless `trusted` is
    /// false: its exit code and stderr.
    pub fn relay(&self, token: &str, trusted: bool, extra: &[&str]) -> (i32, String) {
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
        let (code, _, stderr) = crate::common::run_with_stdin(&mut cmd, EVENT.as_bytes());
        (code, stderr)
    }

    pub fn tls(&self) -> Arc<rustls::ClientConfig> {
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
    pub fn get(&self, path: &str, token: Option<&str>) -> (u16, String) {
        let (status, _, body) = self.send("GET", path, token, "");
        (status, body)
    }

    /// One HTTP request over TLS: the status, the head and the body.
    pub fn send(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: &str,
    ) -> (u16, String, String) {
        self.send_with(method, path, token, &[], body)
    }

    /// [`Gateway::send`] with more headers (`(name, value)`s).
    pub fn send_with(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, String, String) {
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        let conn = rustls::ClientConnection::new(self.tls(), name).unwrap();
        let tcp = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        let mut tls = rustls::StreamOwned::new(conn, tcp);
        let mut auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
        for (name, value) in headers {
            auth.push_str(&format!("{name}: {value}\r\n"));
        }
        let req = format!(
            "{method} {path} HTTP/1.1\r\nHost: localhost\r\n{auth}Content-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        tls.write_all(req.as_bytes()).unwrap();
        let mut raw = Vec::new();
        let _ = tls.read_to_end(&mut raw);
        let text = String::from_utf8_lossy(&raw).into_owned();
        let status = text.split(' ').nth(1).unwrap_or("0").parse().unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        (status, head.to_string(), body.to_string())
    }

    /// Stops it with SIGTERM (it must exit 0): what it wrote on stderr.
    pub fn stop(&mut self) -> String {
        let Some(child) = self.child.take() else {
            return String::new();
        };
        // SAFETY: a signal to the gateway this test started.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGTERM);
        }
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "exit {:?}", out.status);
        String::from_utf8_lossy(&out.stderr).into_owned()
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

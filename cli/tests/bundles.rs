//! Signed policy bundles, end to end through the real `hookhost` binary:
//! `bundle keygen/build/sign/verify`, and a gateway (`serve --policy`)
//! that refuses every refusable event until a valid signed bundle is
//! loaded, takes a newer one within a poll (from a file or over https
//! with ETag), and keeps the policy in force when a bundle is tampered,
//! unsigned, wrongly signed, older, or escapes its folder.

#![allow(clippy::unwrap_used)]

mod common;

use std::io::{BufRead, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{HOOKHOST, scratch};
use serde_json::{Value, json};

const WAITING: &str = "no signed policy is loaded yet";

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn hookhost(args: &[&str], dir: &Path) -> Output {
    Command::new(HOOKHOST)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// A key pair in `dir`: (secret, public).
fn keys(dir: &Path, name: &str) -> (String, String) {
    let (secret, public) = (format!("{name}.key"), format!("{name}.pub"));
    ok(&hookhost(
        &["bundle", "keygen", "--secret", &secret, "--public", &public],
        dir,
    ));
    (secret, public)
}

/// A policy folder `name` whose deny_tools builtin refuses the shell with
/// `reason`, plus `extra` config text and files.
fn policy(dir: &Path, name: &str, reason: &str, extra: &str, files: &[(&str, &str)]) -> PathBuf {
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    let config = format!(
        "[hooks.builtins.deny_tools]\nconfig = {{ tools = [\"shell\"], reason = \"{reason}\" }}\n{extra}"
    );
    std::fs::write(folder.join("hooks.toml"), config).unwrap();
    for (path, text) in files {
        let path = folder.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    folder
}

/// `bundle build FOLDER -o OUT --version N` then `bundle sign OUT`.
fn build_signed(dir: &Path, folder: &str, out: &str, version: u64, secret: &str) {
    let v = version.to_string();
    ok(&hookhost(
        &["bundle", "build", folder, "-o", out, "--version", &v],
        dir,
    ));
    ok(&hookhost(&["bundle", "sign", out, "--key", secret], dir));
}

/// Publishes `bundle` (and its signature, when there is one) as
/// `dest`, each by rename so a poll never reads half a file.
fn publish(dir: &Path, bundle: &str, dest: &Path) {
    for suffix in ["", ".minisig"] {
        let from = dir.join(format!("{bundle}{suffix}"));
        let to = PathBuf::from(format!("{}{suffix}", dest.display()));
        if from.exists() {
            let tmp = to.with_extension("tmp");
            std::fs::copy(&from, &tmp).unwrap();
            std::fs::rename(&tmp, &to).unwrap();
        } else {
            let _ = std::fs::remove_file(&to);
        }
    }
}

/// `hookhost serve --listen 127.0.0.1:0 --policy SOURCE --policy-key PUB
/// --policy-poll 1`, and its address.
struct Gateway {
    child: Child,
    addr: String,
}

impl Gateway {
    fn start(dir: &Path, source: &str, public: &str, env: &[(&str, &Path)]) -> Gateway {
        let mut cmd = Command::new(HOOKHOST);
        cmd.args(["serve", "--listen", "127.0.0.1:0", "--policy", source])
            .args(["--policy-key", public, "--policy-poll", "1"])
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let (child, line) = announced(&mut cmd);
        let addr = line.trim().strip_prefix("listening on ws://").unwrap();
        Gateway {
            addr: addr.to_string(),
            child,
        }
    }

    /// One request; the status and the body.
    fn http(&self, method: &str, path: &str, body: &Value) -> (u16, String) {
        let (code, _, body) = self.exchange(method, path, body);
        (code, body)
    }

    /// The policy a Bash call's decision record (`X-Hookhost-Decision`)
    /// names.
    fn decided_under(&self) -> Value {
        let event = json!({"session_id": "s", "cwd": "/tmp", "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": "ls"}});
        let (_, head, _) = self.exchange("POST", "/hooks/claude-code", &event);
        let line = head
            .lines()
            .find_map(|l| l.strip_prefix("X-Hookhost-Decision: "))
            .unwrap_or_else(|| panic!("no decision record: {head}"));
        serde_json::from_str::<Value>(line).unwrap()["policy"].clone()
    }

    /// One request; the status, the head and the body.
    fn exchange(&self, method: &str, path: &str, body: &Value) -> (u16, String, String) {
        let mut s = TcpStream::connect(&self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let body = body.to_string();
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n",
            self.addr,
            body.len()
        );
        s.write_all(head.as_bytes()).unwrap();
        s.write_all(body.as_bytes()).unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        let code = head.split(' ').nth(1).unwrap().parse().unwrap();
        (code, head.to_string(), body.to_string())
    }

    /// Claude Code's PreToolUse for `ls` in Bash, answered.
    fn bash(&self) -> Value {
        let event = json!({"session_id": "s", "cwd": "/tmp", "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": "ls"}});
        let (code, body) = self.http("POST", "/hooks/claude-code", &event);
        assert_eq!(code, 200, "{body}");
        serde_json::from_str(&body).unwrap()
    }

    /// The reason the gateway gave for a Bash call, or "" when allowed.
    fn bash_reason(&self) -> String {
        let v = self.bash();
        v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap_or("")
            .to_string()
    }

    fn status(&self) -> Value {
        let (code, body) = self.http("GET", "/status", &Value::Null);
        assert_eq!(code, 200);
        serde_json::from_str::<Value>(&body).unwrap()["policy"].clone()
    }

    /// Waits until the Bash call's reason contains `want`: within one
    /// poll (1 s) and the reload, with room for a loaded machine.
    fn until_reason(&self, want: &str) {
        let until = Instant::now() + Duration::from_secs(4);
        loop {
            let reason = self.bash_reason();
            if reason.contains(want) {
                return;
            }
            assert!(Instant::now() < until, "still {reason:?}, not {want:?}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits (up to 10 s) until `status`'s policy error contains `want`.
    fn until_refused(&self, want: &str) -> Value {
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            let s = self.status();
            if s["error"].as_str().is_some_and(|e| e.contains(want)) {
                return s;
            }
            assert!(Instant::now() < until, "no refusal {want:?}: {s}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        stop(&mut self.child);
    }
}

/// Starts `hookhost serve`; the child and the `listening on ...` line.
fn announced(cmd: &mut Command) -> (Child, String) {
    let mut child = cmd.spawn().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (child, line)
}

/// SIGTERM, as a service manager stops it (so it removes its private
/// folder), then SIGKILL if it is still there after 5 s.
fn stop(child: &mut Child) {
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: signals our own child, which has not been waited for.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let until = Instant::now() + Duration::from_secs(5);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn keygen_build_sign_verify_round_trip_and_every_forgery_is_refused() {
    let dir = scratch();
    let (secret, public) = keys(&dir, "team");
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(dir.join(&secret)).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o600);
    let again = hookhost(
        &["bundle", "keygen", "--secret", &secret, "--public", &public],
        &dir,
    );
    assert_eq!(again.status.code(), Some(2), "a key was overwritten");
    // The script its command runs, the file its env names and, through
    // --include, the folder of what the script sources: packed; a file
    // nothing names: not.
    let script = "#!/bin/sh\n. lib/helper.sh\nexit 2\n";
    let extra = "[hooks.commands.gate]\nargs = [\"sh\", \"bin/gate.sh\"]\n\
                 events = [\"pre_tool_use\"]\nenv = { LIST = \"allow.txt\" }\n";
    let files = [
        ("bin/gate.sh", script),
        ("allow.txt", "ls\n"),
        ("lib/helper.sh", "echo no >&2\n"),
        ("notes.txt", "not named\n"),
    ];
    policy(&dir, "p", "v1", extra, &files);
    let build = ["bundle", "build", "p", "-o", "b", "--version", "5"];
    let built = ok(&hookhost(
        &[&build[..], &["--include", "lib"]].concat(),
        &dir,
    ));
    for packed in ["hooks.toml", "bin/gate.sh", "allow.txt", "lib/helper.sh"] {
        assert!(built.contains(&format!("  {packed}\n")), "{built}");
    }
    assert!(!built.contains("notes.txt"), "{built}");
    ok(&hookhost(&["bundle", "sign", "b", "--key", &secret], &dir));
    let verified = ok(&hookhost(
        &["bundle", "verify", "b", "--pub", &public],
        &dir,
    ));
    let digest = sha256_hex(&std::fs::read(dir.join("b")).unwrap());
    assert!(verified.contains("version 5"), "{verified}");
    assert!(verified.contains(&digest), "{verified}");

    let refused = |name: &str, key: &str, why: &str| {
        let out = hookhost(&["bundle", "verify", name, "--pub", key], &dir);
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(1), "{name} verified: {err}");
        assert!(err.contains(why), "{name}: {err}");
    };
    // One byte of the bundle changed.
    let mut bytes = std::fs::read(dir.join("b")).unwrap();
    let at = bytes.len() / 3;
    bytes[at] ^= 1;
    std::fs::write(dir.join("t"), &bytes).unwrap();
    std::fs::copy(dir.join("b.minisig"), dir.join("t.minisig")).unwrap();
    refused("t", &public, "bad signature");
    // The signed version raised in the signature file.
    let sig = std::fs::read_to_string(dir.join("b.minisig")).unwrap();
    std::fs::copy(dir.join("b"), dir.join("s")).unwrap();
    std::fs::write(dir.join("s.minisig"), sig.replace("version=5", "version=9")).unwrap();
    refused("s", &public, "bad signature");
    // Another key's public half.
    let (_, other) = keys(&dir, "other");
    refused("b", &other, "bad signature");
    // No signature at all.
    std::fs::copy(dir.join("b"), dir.join("u")).unwrap();
    refused("u", &public, "u.minisig");
}

#[test]
fn build_refuses_a_file_named_outside_the_folder() {
    let dir = scratch();
    std::fs::write(dir.join("outside.sh"), "exit 0\n").unwrap();
    let extra =
        "[hooks.commands.gate]\nargs = [\"sh\", \"../outside.sh\"]\nevents = [\"pre_tool_use\"]\n";
    policy(&dir, "p", "v1", extra, &[]);
    let out = hookhost(&["bundle", "build", "p", "-o", "b"], &dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("outside") && err.contains("../outside.sh"),
        "{err}"
    );
    assert!(!dir.join("b").exists());
    // A file inside the folder named by its absolute path would not point
    // into the unpacked copy: refused too.
    let inside = dir.join("p/hooks.toml");
    let extra = format!(
        "[hooks.commands.gate]\nargs = [\"cat\", \"{}\"]\nevents = [\"pre_tool_use\"]\n",
        inside.display()
    );
    policy(&dir, "p", "v1", &extra, &[]);
    let out = hookhost(&["bundle", "build", "p", "-o", "b"], &dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("absolute path"), "{err}");
}

#[test]
fn the_gateway_refuses_every_refusable_event_before_the_first_bundle() {
    let dir = scratch();
    let (_, public) = keys(&dir, "team");
    let gw = Gateway::start(&dir, "missing.bundle", &public, &[]);
    let events = [
        (
            "claude-code",
            json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/tmp",
            "tool_name": "Bash", "tool_input": {"command": "ls"}}),
        ),
        (
            "claude-code",
            json!({"hook_event_name": "PermissionRequest", "session_id": "s",
            "cwd": "/tmp", "tool_name": "Bash", "tool_input": {"command": "ls"}}),
        ),
        (
            "claude-code",
            json!({"hook_event_name": "UserPromptSubmit", "session_id": "s",
            "cwd": "/tmp", "prompt": "hi"}),
        ),
        (
            "codex",
            json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/tmp",
            "tool_name": "Bash", "tool_input": {"command": "ls"}, "model": "m", "turn_id": "t"}),
        ),
        (
            "gemini-cli",
            json!({"hook_event_name": "BeforeTool", "session_id": "s", "cwd": "/tmp",
            "tool_name": "run_shell_command", "tool_input": {"command": "ls"}}),
        ),
        (
            "gemini-cli",
            json!({"hook_event_name": "BeforeModel", "session_id": "s", "cwd": "/tmp",
            "llm_request": {"model": "m", "messages": []}}),
        ),
        (
            "cursor",
            json!({"hook_event_name": "beforeShellExecution", "conversation_id": "c",
            "generation_id": "g", "command": "ls", "cwd": "/tmp"}),
        ),
        (
            "cursor",
            json!({"hook_event_name": "beforeSubmitPrompt", "conversation_id": "c",
            "generation_id": "g", "prompt": "hi"}),
        ),
    ];
    for (dialect, event) in &events {
        for route in ["hooks", "relay"] {
            let (code, body) = gw.http("POST", &format!("/{route}/{dialect}"), event);
            assert_eq!(code, 200, "{body}");
            assert!(body.contains(WAITING), "{route}/{dialect} {event}: {body}");
        }
    }
    // What cannot be refused is answered as no hook decided.
    let note = json!({"hook_event_name": "Notification", "session_id": "s", "cwd": "/tmp",
        "message": "m"});
    let (_, body) = gw.http("POST", "/hooks/claude-code", &note);
    assert_eq!(body, "{}");
    let status = gw.status();
    assert_eq!(status["source"], "missing.bundle");
    assert!(
        status["version"].is_null() && status["checked"].is_string(),
        "{status}"
    );
}

#[test]
fn a_new_bundle_is_live_within_a_poll_and_bad_or_older_ones_are_refused() {
    let dir = scratch();
    let (secret, public) = keys(&dir, "team");
    let live = dir.join("live.bundle");
    policy(&dir, "p1", "policy v1", "", &[]);
    build_signed(&dir, "p1", "b1", 1, &secret);
    let gw = Gateway::start(&dir, "live.bundle", &public, &[]);
    assert!(gw.bash_reason().contains(WAITING));
    // Unsigned: refused, still waiting.
    std::fs::copy(dir.join("b1"), dir.join("unsigned")).unwrap();
    publish(&dir, "unsigned", &live);
    gw.until_refused("live.bundle.minisig");
    assert!(gw.bash_reason().contains(WAITING));

    publish(&dir, "b1", &live);
    gw.until_reason("policy v1");
    // Version 2 runs a script the bundle carries.
    let script = "#!/bin/sh\necho 'v2 script says no' >&2\nexit 2\n";
    let extra = "[hooks.commands.gate]\nargs = [\"sh\", \"bin/gate.sh\"]\nevents = [\"pre_tool_use\"]\npriority = -10\n";
    policy(&dir, "p2", "policy v2", extra, &[("bin/gate.sh", script)]);
    build_signed(&dir, "p2", "b2", 2, &secret);
    publish(&dir, "b2", &live);
    gw.until_reason("v2 script says no");
    let status = gw.status();
    assert_eq!(status["version"], 2, "{status}");
    let digest = sha256_hex(&std::fs::read(dir.join("b2")).unwrap());
    assert_eq!(status["digest"], digest.as_str());
    assert!(status["loaded"].is_string(), "{status}");
    let under = format!("version=2 sha256={digest}");
    assert_eq!(
        gw.decided_under(),
        json!(under),
        "every decision names the bundle in force"
    );

    // Older (version 1, validly signed): refused, version 2 kept.
    publish(&dir, "b1", &live);
    gw.until_refused("older");
    assert!(gw.bash_reason().contains("v2 script says no"));
    // The same version with other contents: refused.
    policy(&dir, "p2b", "policy v2b", "", &[]);
    build_signed(&dir, "p2b", "b2b", 2, &secret);
    publish(&dir, "b2b", &live);
    gw.until_refused("other contents");
    // Version 3 signed by another key: refused.
    let (other, _) = keys(&dir, "other");
    policy(&dir, "p3", "policy v3", "", &[]);
    build_signed(&dir, "p3", "b3", 3, &other);
    publish(&dir, "b3", &live);
    gw.until_refused("bad signature");
    // Version 3 tampered after signing: refused.
    build_signed(&dir, "p3", "b3", 3, &secret);
    let mut bytes = std::fs::read(dir.join("b3")).unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 1;
    std::fs::write(dir.join("b3"), bytes).unwrap();
    publish(&dir, "b3", &live);
    gw.until_refused("bad signature");
    assert!(gw.bash_reason().contains("v2 script says no"));
    assert_eq!(gw.status()["version"], 2);
    // The bundle in force was unpacked into a private folder, which goes
    // when the gateway stops.
    let (_, body) = gw.http("GET", "/status", &Value::Null);
    let config: Value = serde_json::from_str(&body).unwrap();
    let config = PathBuf::from(config["config"].as_str().unwrap());
    let private = config.parent().unwrap().parent().unwrap().to_path_buf();
    let mode = std::fs::metadata(&private).unwrap().permissions();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
        0o700
    );
    assert!(
        std::fs::read_to_string(&config)
            .unwrap()
            .contains("policy v2")
    );
    drop(gw);
    assert!(!private.exists(), "{} left behind", private.display());
}

/// A tar whose second entry climbs out of the folder, signed as
/// `hookhost bundle sign` would sign it (which itself refuses to).
fn traversal_bundle(dir: &Path, secret: &str) {
    let config = b"[hooks]\n".to_vec();
    let evil = b"pwned\n".to_vec();
    let manifest = json!({"format": "hookhost-bundle/1", "version": 7, "created": 0,
        "files": {"hooks.toml": sha256_hex(&config),
                  "../../evil": sha256_hex(&evil)}});
    let manifest = manifest.to_string().into_bytes();
    let mut tar = tar::Builder::new(Vec::new());
    for (name, bytes) in [
        ("manifest.json", &manifest),
        ("hooks.toml", &config),
        ("../../evil", &evil),
    ] {
        let mut h = tar::Header::new_gnu();
        h.set_size(bytes.len() as u64);
        h.set_mode(0o644);
        h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
        h.set_cksum();
        tar.append(&h, bytes.as_slice()).unwrap();
    }
    let bundle = tar.into_inner().unwrap();
    let comment = format!("hookhost-bundle version=7 sha256={}", sha256_hex(&bundle));
    let text = std::fs::read_to_string(dir.join(secret)).unwrap();
    let sk = minisign::SecretKeyBox::from_string(&text)
        .unwrap()
        .into_unencrypted_secret_key()
        .unwrap();
    let sig = minisign::sign(None, &sk, bundle.as_slice(), Some(&comment), None).unwrap();
    std::fs::write(dir.join("evil.bundle"), &bundle).unwrap();
    std::fs::write(dir.join("evil.bundle.minisig"), sig.to_string()).unwrap();
}

#[test]
fn a_signed_bundle_that_climbs_out_of_its_folder_is_refused() {
    let dir = scratch();
    let (secret, public) = keys(&dir, "team");
    traversal_bundle(&dir, &secret);
    let out = hookhost(&["bundle", "verify", "evil.bundle", "--pub", &public], &dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("../../evil"), "{err}");
    let gw = Gateway::start(&dir, "evil.bundle", &public, &[]);
    gw.until_refused("not a plain relative path");
    assert!(gw.bash_reason().contains(WAITING));
    assert!(!std::env::temp_dir().join("evil").exists());
    assert!(!std::env::temp_dir().parent().unwrap().join("evil").exists());
}

/// A CA and a certificate for 127.0.0.1 it signed, made by openssl in
/// `dir`: (ca.pem, cert.pem, key.pem).
fn certificates(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let ec = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";
    let ca = "-subj /CN=hookhost-test-CA -addext basicConstraints=critical,CA:TRUE \
              -addext keyUsage=critical,keyCertSign";
    std::fs::write(
        dir.join("ext.cnf"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
    )
    .unwrap();
    for args in [
        format!("req -x509 {ec} -keyout ca.key -out ca.pem -days 2 {ca}"),
        format!("req {ec} -keyout key.pem -out cert.csr -subj /CN=127.0.0.1"),
        "x509 -req -in cert.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out cert.pem \
         -days 2 -extfile ext.cnf"
            .to_string(),
    ] {
        let args: Vec<&str> = args.split_whitespace().collect();
        let out = Command::new("openssl")
            .args(&args)
            .current_dir(dir)
            .output();
        ok(&out.unwrap());
    }
    (
        dir.join("ca.pem"),
        dir.join("cert.pem"),
        dir.join("key.pem"),
    )
}

#[test]
fn an_https_bundle_is_fetched_with_etag_and_a_new_one_is_live_within_a_poll() {
    let dir = scratch();
    let (secret, public) = keys(&dir, "team");
    let (ca, cert, key) = certificates(&dir);
    let site = dir.join("site");
    std::fs::create_dir_all(&site).unwrap();
    policy(&dir, "p1", "https v1", "", &[]);
    build_signed(&dir, "p1", "b1", 1, &secret);
    publish(&dir, "b1", &site.join("policy.bundle"));
    let server_py = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/bundle_https_server.py");
    let mut server = Command::new("python3")
        .arg(server_py)
        .arg("--dir")
        .arg(&site)
        .arg("--cert")
        .arg(&cert)
        .arg("--key")
        .arg(&key)
        .args(["--seconds", "60"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut log = std::io::BufReader::new(server.stdout.take().unwrap());
    let mut first = String::new();
    log.read_line(&mut first).unwrap();
    let port = first.trim().strip_prefix("port ").unwrap().to_string();
    let url = format!("https://127.0.0.1:{port}/policy.bundle");
    let gw = Gateway::start(&dir, &url, &public, &[("SSL_CERT_FILE", &ca)]);
    gw.until_reason("https v1");
    policy(&dir, "p2", "https v2", "", &[]);
    build_signed(&dir, "p2", "b2", 2, &secret);
    publish(&dir, "b2", &site.join("policy.bundle"));
    gw.until_reason("https v2");
    assert_eq!(gw.status()["version"], 2);
    std::thread::sleep(Duration::from_millis(2500));
    drop(gw);
    let _ = server.kill();
    let _ = server.wait();
    let mut lines = String::new();
    log.read_to_string(&mut lines).unwrap();
    // Polls of an unchanged bundle cost a 304 and no signature fetch.
    assert!(lines.contains("GET /policy.bundle 304"), "{lines}");
    let after_v2 = lines
        .rsplit("GET /policy.bundle.minisig 200")
        .next()
        .unwrap();
    assert!(!after_v2.contains(" 200"), "{lines}");
    assert!(after_v2.contains("GET /policy.bundle 304"), "{lines}");
}

#[test]
fn json_rpc_agents_are_refused_too_before_the_first_bundle() {
    let dir = scratch();
    let (_, public) = keys(&dir, "team");
    let mut cmd = Command::new(HOOKHOST);
    cmd.args(["serve", "--stdio", "--policy", "missing.bundle"])
        .args(["--policy-key", &public])
        .current_dir(&dir);
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "host.before_tool",
            "params": {"tool": "shell", "arguments": {"command": "ls"}}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "host.approve_tool",
            "params": {"tool": "shell", "arguments": {"command": "ls"}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "host.before_llm",
            "params": {"model": "m", "messages": []}}),
    ];
    let input: String = requests.iter().map(|r| format!("{r}\n")).collect();
    let (code, stdout, stderr) = common::run_with_stdin(&mut cmd, input.as_bytes());
    assert_eq!(code, 0, "{stderr}");
    let answers: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), 3, "{stdout}");
    for a in &answers {
        let result = &a["result"];
        let refused = result["action"] == "deny_tool"
            || result["action"] == "abort_turn"
            || result["approved"] == false;
        assert!(refused, "{a}");
        assert!(result["reason"].as_str().unwrap().contains(WAITING), "{a}");
    }
}

#[test]
fn hookhost_status_shows_the_bundle_in_force() {
    let dir = scratch();
    let (secret, public) = keys(&dir, "team");
    let socket = dir.join("hookhost.sock");
    let (mut daemon, line) = announced(
        Command::new(HOOKHOST)
            .args(["serve", "--socket"])
            .arg(&socket)
            .args(["--policy", "live.bundle", "--policy-key", &public])
            .args(["--policy-poll", "1"])
            .env("XDG_CONFIG_HOME", dir.join("config"))
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    );
    assert!(line.starts_with("listening on unix:"), "{line}");
    let status = || {
        let out = Command::new(HOOKHOST)
            .args(["status", "--connect"])
            .arg(&socket)
            .env("XDG_CONFIG_HOME", dir.join("config"))
            .output()
            .unwrap();
        ok(&out)
    };
    let before = status();
    assert!(before.contains("policy  none loaded yet"), "{before}");
    assert!(before.contains("from live.bundle, checked 20"), "{before}");
    policy(&dir, "p", "v4", "", &[]);
    build_signed(&dir, "p", "b4", 4, &secret);
    publish(&dir, "b4", &dir.join("live.bundle"));
    let digest = sha256_hex(&std::fs::read(dir.join("b4")).unwrap());
    let want = format!("policy  version 4 sha256 {digest}");
    let until = Instant::now() + Duration::from_secs(4);
    let mut now = status();
    while !now.contains(&want) {
        assert!(Instant::now() < until, "{now}");
        std::thread::sleep(Duration::from_millis(100));
        now = status();
    }
    assert!(!now.contains("loaded -"), "{now}");
    stop(&mut daemon);
}

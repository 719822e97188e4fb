//! Signed policy bundles, end to end through the real `hookhost` binary:
//! `bundle keygen/build/sign/verify`.

#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{HOOKHOST, scratch};

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
    let script = "#!/bin/sh\necho no >&2\nexit 2\n";
    let extra =
        "[hooks.commands.gate]\nargs = [\"sh\", \"bin/gate.sh\"]\nevents = [\"pre_tool_use\"]\n";
    policy(&dir, "p", "v1", extra, &[("bin/gate.sh", script)]);
    let built = ok(&hookhost(
        &["bundle", "build", "p", "-o", "b", "--version", "5"],
        &dir,
    ));
    assert!(built.contains("bin/gate.sh"), "{built}");
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
}

//! `hookhost relay` writes on stdout and stderr only what the agent reads:
//! its own log goes to `$XDG_STATE_HOME/hookhost/relay.log`, or to stderr
//! when `HOOKHOST_LOG` is set. Gemini CLI reads `stdout || stderr` of a
//! hook that exits 0 as the hook's text, so a warning on stderr became a
//! system message (issue 33).

#![allow(clippy::unwrap_used)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A Gemini CLI AfterTool event.
const AFTER_TOOL: &str = r#"{"session_id":"s","transcript_path":"/tmp/t","cwd":"/tmp","hook_event_name":"AfterTool","timestamp":"2026-01-01T00:00:00Z","tool_name":"run_shell_command","tool_input":{"command":"ls"},"tool_response":{"llmContent":"x"}}"#;

/// What hookhost warns about: a non-blocking hook whose answer is not
/// one JSON document.
const FAILED_RUN: &str = "the hook process exited (exit status 1)";

/// A Gemini CLI settings file with one trusted AfterTool hook that
/// fails with nothing to say (exit 1, no output: Gemini CLI logs it and
/// goes on), and the `XDG_CONFIG_HOME` trusting it.
fn unreadable_hook() -> (PathBuf, PathBuf) {
    let dir = common::scratch();
    let settings = dir.join("settings.json");
    std::fs::write(
        &settings,
        r#"{"hooks":{"AfterTool":[{"matcher":"*","hooks":[{"type":"command","command":"cat >/dev/null; exit 1"}]}]}}"#,
    )
    .unwrap();
    let xdg = common::trusted_xdg(&settings, Some("gemini-cli"));
    (settings, xdg)
}

/// Runs the relay on [`AFTER_TOOL`] with `env`; exit code, stdout, stderr.
fn relay(settings: &Path, xdg: &Path, env: &[(&str, &Path)]) -> (i32, String, String) {
    let mut cmd = Command::new(common::HOOKHOST);
    cmd.args(["relay", "--dialect", "gemini-cli", "-c"])
        .arg(settings)
        .env("XDG_CONFIG_HOME", xdg)
        .env_remove("HOOKHOST_LOG");
    for (k, v) in env {
        cmd.env(k, v);
    }
    common::run_with_stdin(&mut cmd, AFTER_TOOL.as_bytes())
}

/// A fresh `XDG_STATE_HOME` whose `hookhost` folder exists with `mode`;
/// both paths.
fn state_with_folder(mode: u32) -> (PathBuf, PathBuf) {
    let state = common::scratch().join("state");
    let folder = state.join("hookhost");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(mode)).unwrap();
    (state, folder)
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn a_warning_goes_to_the_log_file_not_to_what_the_agent_reads() {
    let (settings, xdg) = unreadable_hook();
    let state = common::scratch().join("state");
    let (code, stdout, stderr) = relay(&settings, &xdg, &[("XDG_STATE_HOME", &state)]);
    assert_eq!((code, stdout.as_str(), stderr.as_str()), (0, "", ""));
    let log = state.join("hookhost/relay.log");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains(FAILED_RUN), "{text}");
    assert_eq!(mode(&log), 0o600);
    assert_eq!(mode(log.parent().unwrap()), 0o700);
}

#[test]
fn hookhost_log_sends_the_relays_log_to_stderr() {
    let (settings, xdg) = unreadable_hook();
    let state = common::scratch().join("state");
    let env = [
        ("XDG_STATE_HOME", state.as_path()),
        ("HOOKHOST_LOG", Path::new("warn")),
    ];
    let (code, stdout, stderr) = relay(&settings, &xdg, &env);
    assert_eq!((code, stdout.as_str()), (0, ""));
    assert!(stderr.contains(FAILED_RUN), "{stderr}");
    assert!(!state.join("hookhost/relay.log").exists());
}

#[test]
fn without_xdg_state_home_the_log_is_under_home() {
    let (settings, xdg) = unreadable_hook();
    let home = common::scratch();
    let env = [("HOME", home.as_path())];
    let mut cmd = Command::new(common::HOOKHOST);
    cmd.args(["relay", "--dialect", "gemini-cli", "-c"])
        .arg(&settings)
        .env("XDG_CONFIG_HOME", &xdg)
        .env_remove("XDG_STATE_HOME")
        .env_remove("HOOKHOST_LOG");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let (code, _, stderr) = common::run_with_stdin(&mut cmd, AFTER_TOOL.as_bytes());
    assert_eq!((code, stderr.as_str()), (0, ""));
    let text = std::fs::read_to_string(home.join(".local/state/hookhost/relay.log")).unwrap();
    assert!(text.contains(FAILED_RUN), "{text}");
}

#[test]
fn a_planted_symlink_is_not_written_through_and_nothing_reaches_stderr() {
    let (settings, xdg) = unreadable_hook();
    let (state, folder) = state_with_folder(0o700);
    let target = common::scratch().join("victim");
    std::fs::write(&target, "precious\n").unwrap();
    std::os::unix::fs::symlink(&target, folder.join("relay.log")).unwrap();
    let (code, stdout, stderr) = relay(&settings, &xdg, &[("XDG_STATE_HOME", &state)]);
    assert_eq!((code, stdout.as_str(), stderr.as_str()), (0, "", ""));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious\n");
}

#[test]
fn a_folder_others_may_write_is_not_used() {
    let (settings, xdg) = unreadable_hook();
    let (state, folder) = state_with_folder(0o777);
    let (code, _, stderr) = relay(&settings, &xdg, &[("XDG_STATE_HOME", &state)]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert!(!folder.join("relay.log").exists());
}

#[test]
fn a_full_log_is_rotated_once_and_stays_bounded() {
    let (settings, xdg) = unreadable_hook();
    let (state, folder) = state_with_folder(0o700);
    let log = folder.join("relay.log");
    std::fs::write(&log, "old\n".repeat(300_000)).unwrap();
    std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (code, _, stderr) = relay(&settings, &xdg, &[("XDG_STATE_HOME", &state)]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    let rotated = std::fs::metadata(folder.join("relay.log.1")).unwrap().len();
    assert_eq!(rotated, 1_200_000, "the full log became relay.log.1");
    let fresh = std::fs::read_to_string(&log).unwrap();
    assert!(
        fresh.contains(FAILED_RUN) && fresh.len() < 10_000,
        "{fresh}"
    );
}

#[test]
fn a_relay_with_nothing_to_log_touches_no_file() {
    let dir = common::scratch();
    let settings = dir.join("settings.json");
    std::fs::write(
        &settings,
        r#"{"hooks":{"AfterTool":[{"matcher":"*","hooks":[{"type":"command","command":"cat >/dev/null; echo '{}'"}]}]}}"#,
    )
    .unwrap();
    let xdg = common::trusted_xdg(&settings, Some("gemini-cli"));
    let state = common::scratch().join("state");
    let (code, stdout, stderr) = relay(&settings, &xdg, &[("XDG_STATE_HOME", &state)]);
    assert_eq!((code, stderr.as_str()), (0, ""), "{stdout}");
    assert!(!state.exists(), "the relay created {}", state.display());
}

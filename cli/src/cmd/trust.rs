//! `hookhost trust`: the user's approval of the commands a project's files
//! name. A hook imported from a file the project controls (its
//! `.claude/settings.json`, its plugins, the hooks `--adopt` kept in it)
//! runs only once its fingerprint is approved here; a changed command has
//! a new fingerprint and is untrusted again (`hookhost::trust`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use hookhost::trust::{ProjectHook, Trust, TrustedHook, describe, short};
use hookhost::{Config, Dialect};

use crate::shared::approvals::{name, row_json, store};
use crate::shared::exit::usage_error;
use crate::shared::paths;
use crate::shared::table::print_table;

/// Review, approve and revoke the commands that a project's files name.
#[derive(Args)]
#[command(after_help = "Examples:\n  \
hookhost trust                         list the project hooks of ~/.config/hookhost/hooks.toml\n  \
hookhost trust -c hooks.toml list --json\n  \
hookhost trust approve 3f2a9c1b7e40    approve one (any unique prefix of 8+ hex digits)\n  \
hookhost trust approve --all           approve every untrusted hook of the config\n  \
hookhost trust revoke 3f2a9c1b7e40\n\n\
A hook imported ([hooks.import]) from a file outside your own settings folders (~/.claude, \
~/.codex, ~/.gemini, ~/.cursor, ~/.copilot, ~/.config), or from a git clone inside them, is \
controlled by that project: it runs only once you approved its fingerprint, the sha256 of its \
file, event, matcher and what it runs (command, folder, environment). Until then it is treated \
as a hook that failed to start: a hook that fails closed refuses, naming it; any other is \
skipped with a warning. A changed command is a new fingerprint, untrusted until approved \
again. Approvals are kept in $XDG_CONFIG_HOME/hookhost/trusted.json (mode 0600); a store \
that is not yours or that others can write is ignored, and then nothing is trusted. A \
running daemon picks approvals up within a second.")]
pub struct TrustArgs {
    /// The hookhost config whose imported hooks are listed or approved
    /// (default: ~/.config/hookhost/hooks.toml).
    #[arg(short = 'c', long = "config", global = true)]
    config: Option<PathBuf>,
    /// Read -c as one settings file of this agent, as `hookhost relay
    /// --dialect D -c FILE` reads it.
    #[arg(long, global = true)]
    dialect: Option<Dialect>,
    #[command(subcommand)]
    action: Option<Action>,
}

#[derive(Subcommand)]
enum Action {
    /// List every project hook of the config: trusted or not, its
    /// fingerprint, name, file, event and command (the default).
    List {
        /// Print the list as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Approve hooks of the config by fingerprint (a unique prefix of 8 or
    /// more hex digits), or every untrusted one with --all.
    Approve {
        /// Fingerprints, as `hookhost trust` shows them.
        #[arg(required_unless_present = "all")]
        hashes: Vec<String>,
        /// Approve every untrusted hook of the config.
        #[arg(long, conflicts_with = "hashes")]
        all: bool,
    },
    /// Take approvals back, by fingerprint (a unique prefix of 8 or more
    /// hex digits); the config is not needed.
    Revoke {
        /// Fingerprints, as `hookhost trust` shows them.
        #[arg(required = true)]
        hashes: Vec<String>,
    },
}

/// Runs `hookhost trust`: 0 done, 2 with the reason on stderr.
pub fn run(args: TrustArgs) -> ExitCode {
    let config = args.config.unwrap_or_else(paths::default_config);
    let source = Source {
        path: &config,
        dialect: args.dialect,
    };
    let done = match args.action.unwrap_or(Action::List { json: false }) {
        Action::List { json } => list(&source, json),
        Action::Approve { hashes, all } => approve(&source, &hashes, all),
        Action::Revoke { hashes } => revoke(&hashes),
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => usage_error(e),
    }
}

/// Where the hooks come from: a hookhost config, or one agent's settings
/// file.
struct Source<'a> {
    path: &'a Path,
    dialect: Option<Dialect>,
}

impl Source<'_> {
    /// The config as the daemon (or `relay -c`) reads it; a hookhost
    /// config without the program checks, so a hook whose script is
    /// missing is still listed.
    fn load(&self) -> Result<Config, String> {
        let loaded = match self.dialect {
            Some(d) if Config::is_settings_file(d, self.path) => Config::import(d, self.path),
            _ => Config::read(self.path),
        };
        loaded.map_err(|e| e.to_string())
    }

    /// `-c FILE` (and `--dialect D`) as typed again.
    fn args(&self) -> String {
        let d = self
            .dialect
            .map(|d| format!(" --dialect {d}"))
            .unwrap_or_default();
        format!("-c {}{d}", self.path.display())
    }
}

fn list(config: &Source<'_>, json: bool) -> Result<(), String> {
    let loaded = config.load()?;
    let hooks = loaded.project_hooks();
    if json {
        let rows: Vec<_> = hooks.iter().map(|h| row_json(h)).collect();
        outln!("{:#}", serde_json::Value::Array(rows));
        return Ok(());
    }
    if hooks.is_empty() {
        outln!(
            "{}: no hook comes from a file a project controls; nothing needs trust",
            config.path.display()
        );
        return Ok(());
    }
    let mut rows = vec![[
        "state".to_string(),
        "fingerprint".into(),
        "hook".into(),
        "file".into(),
        "event".into(),
        "matcher".into(),
        "runs".into(),
    ]];
    for h in &hooks {
        rows.push([
            state(h).into(),
            short(h.source.trust.fingerprint().unwrap_or_default()).into(),
            name(h),
            shown(&h.source.file.display().to_string()),
            shown(&h.source.event),
            h.source.matcher.as_deref().map_or("-".into(), shown),
            shown(&describe(h.hook)),
        ]);
    }
    print_table(&rows);
    let untrusted = hooks
        .iter()
        .filter(|h| h.source.trust.is_untrusted())
        .count();
    if untrusted > 0 {
        let c = config.args();
        outln!(
            "\n{untrusted} untrusted hooks do not run. Read each command, then: hookhost trust \
             {c} approve FINGERPRINT (or --all)"
        );
    }
    Ok(())
}

fn state(h: &ProjectHook<'_>) -> &'static str {
    match h.source.trust {
        Trust::Untrusted(_) => "UNTRUSTED",
        _ => "trusted",
    }
}

/// Text from a project's file, with control characters escaped: a
/// command must not hide part of itself from the user approving it
/// (a carriage return, a terminal escape sequence).
pub fn shown(text: &str) -> String {
    text.chars()
        .flat_map(|c| match c.is_control() {
            true => c.escape_default().collect::<Vec<_>>(),
            false => vec![c],
        })
        .collect()
}

fn approve(config: &Source<'_>, hashes: &[String], all: bool) -> Result<(), String> {
    let loaded = config.load()?;
    let hooks = loaded.project_hooks();
    let chosen: Vec<&ProjectHook<'_>> = if all {
        hooks
            .iter()
            .filter(|h| h.source.trust.is_untrusted())
            .collect()
    } else {
        let mut chosen = Vec::new();
        for wanted in hashes {
            let found = pick(wanted, hooks.iter(), |h| {
                h.source.trust.fingerprint().unwrap_or_default()
            })
            .map_err(|m| format!("{m} among the project hooks of {}", config.path.display()))?;
            chosen.extend(found);
        }
        chosen
    };
    if chosen.is_empty() {
        outln!(
            "nothing to approve: every project hook of {} is trusted",
            config.path.display()
        );
        return Ok(());
    }
    let mut store = store()?;
    for h in &chosen {
        let hash = h.source.trust.fingerprint().unwrap_or_default();
        store.approve(hash, TrustedHook::new(h.source, h.hook));
        outln!(
            "approved {} {} ({} {}): {}",
            short(hash),
            name(h),
            shown(&h.source.file.display().to_string()),
            shown(&h.source.event),
            shown(&describe(h.hook))
        );
    }
    store.save().map_err(|e| e.to_string())
}

fn revoke(hashes: &[String]) -> Result<(), String> {
    let mut store = store()?;
    let mut gone = Vec::new();
    for wanted in hashes {
        let found = pick(wanted, store.hooks().keys(), |k| k.as_str())
            .map_err(|m| format!("{m} among the approved hooks"))?;
        gone.extend(found.into_iter().cloned());
    }
    for hash in gone {
        if let Some(h) = store.revoke(&hash) {
            outln!(
                "revoked {} ({} {}): {}",
                short(&hash),
                shown(&h.file.display().to_string()),
                shown(&h.event),
                shown(&h.command)
            );
        }
    }
    store.save().map_err(|e| e.to_string())
}

/// The items whose fingerprint `wanted` names: a whole fingerprint or a
/// prefix of at least 8 hex digits shared by one fingerprint only (the
/// same hook may be listed twice, once per place).
fn pick<'a, T>(
    wanted: &str,
    items: impl Iterator<Item = T>,
    hash: impl Fn(&T) -> &str,
) -> Result<Vec<T>, String>
where
    T: 'a,
{
    let wanted = wanted.trim().to_ascii_lowercase();
    if wanted.len() < 8 || !wanted.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(format!(
            "`{wanted}` is not a fingerprint (8 to 64 hex digits)"
        ));
    }
    let found: Vec<T> = items.filter(|i| hash(i).starts_with(&wanted)).collect();
    let mut distinct: Vec<&str> = found.iter().map(&hash).collect();
    distinct.sort_unstable();
    distinct.dedup();
    match distinct.len() {
        0 => Err(format!("no hook has fingerprint {wanted}")),
        1 => Ok(found),
        n => Err(format!("{wanted} names {n} hooks; give more digits")),
    }
}

/// One line per untrusted hook of `config`, for `check` and `status`:
/// which hook, from which file, and how to review it.
pub fn untrusted_lines(config: &Config, path: &Path) -> Vec<String> {
    config
        .project_hooks()
        .iter()
        .filter(|h| h.source.trust.is_untrusted())
        .map(|h| {
            format!(
                "UNTRUSTED hook `{}` from {} ({}): `{}` does not run; review with `hookhost \
                 trust -c {}`, approve with `hookhost trust -c {} approve {}`",
                name(h),
                shown(&h.source.file.display().to_string()),
                shown(&h.source.event),
                shown(&describe(h.hook)),
                path.display(),
                path.display(),
                short(h.source.trust.fingerprint().unwrap_or_default())
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_escaped() {
        assert_eq!(shown("ok\r\u{1b}[2Kx"), "ok\\r\\u{1b}[2Kx");
    }

    #[test]
    fn a_prefix_names_one_fingerprint_or_is_refused() {
        let all = ["aaaaaaaa11", "aaaaaaaa22", "bbbbbbbb33"];
        let one = pick("bbbbbbbb", all.iter(), |s| s).unwrap_or_default();
        assert_eq!(one, [&"bbbbbbbb33"]);
        assert!(pick("aaaaaaaa", all.iter(), |s| s).is_err(), "ambiguous");
        assert!(pick("aaaa", all.iter(), |s| s).is_err(), "too short");
        assert!(pick("zzzzzzzz", all.iter(), |s| s).is_err(), "not hex");
    }
}

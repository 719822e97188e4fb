//! `hookhost check`: validate a config, start every hook, show what each
//! declared, and stop them again.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use hookhost::{Config, HookInfo, HookKind, Host};

use crate::shared::config::load_config;
use crate::shared::exit::usage_error;
use crate::shared::table::print_table;
use crate::shared::term::sanitize as safe;

/// Load the config, start and handshake every hook, print a table, stop.
#[derive(Args)]
#[command(after_help = "Examples:\n  \
hookhost check -c examples/hooks.toml\n  \
hookhost check -c ~/.picoclaw/config.json\n\n\
Exit status: 0 when every enabled hook started, 1 when one did not (each failure is \
named with the hook's stderr tail) or a project's hook is not trusted (`hookhost trust`), \
2 for a config error.")]
pub struct CheckArgs {
    /// The config file (TOML, or JSON in PicoClaw's shape).
    #[arg(short = 'c', long = "config")]
    config: PathBuf,
}

/// Runs `hookhost check`: 0 when every enabled hook started, 1 when one
/// did not or is not trusted, 2 for a config error.
pub async fn run(args: CheckArgs) -> ExitCode {
    let config = match load_config(&args.config) {
        Ok(c) => c,
        Err(e) => return usage_error(e),
    };
    if !config.enabled {
        outln!(
            "hooks are disabled in {} ([hooks] enabled = false)",
            args.config.display()
        );
        return ExitCode::SUCCESS;
    }
    let imported = imported_rows(&config);
    let unmet = unmet_lines(&config);
    let untrusted = super::trust::untrusted_lines(&config, &args.config);
    let host = Host::start(config).await;
    print_table(&hook_rows(&host));
    if imported.len() > 1 {
        outln!();
        print_table(&imported);
    }
    let failed = print_problems(&host, &untrusted, &unmet);
    host.shutdown().await;
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// The table of the hooks that started, a row each, the header first.
fn hook_rows(host: &Host) -> Vec<[String; 8]> {
    let mut rows = vec![[
        "hook".to_string(),
        "kind".into(),
        "pid/url".into(),
        "protocol".into(),
        "intercepts".into(),
        "observes".into(),
        "hello".into(),
        "scope".into(),
    ]];
    rows.extend(host.hooks().into_iter().filter_map(hook_row));
    rows
}

/// What a hook is and declared, as a row of [`hook_rows`]; `None` for a
/// persistent hook that never said hello, which is reported below, as a
/// start failure (builtins and commands have nothing to say hello).
fn hook_row(h: HookInfo) -> Option<[String; 8]> {
    let list = |v: Vec<String>| {
        if v.is_empty() {
            "-".to_string()
        } else {
            v.join(",")
        }
    };
    let persistent = matches!(h.kind, HookKind::Process | HookKind::Remote);
    if persistent && h.protocol.is_none() {
        return None;
    }
    let dash = || "-".to_string();
    Some([
        h.name.clone(),
        h.kind.as_str().into(),
        h.pid
            .map(|p| p.to_string())
            .or(h.url.clone())
            .unwrap_or_else(dash),
        h.protocol.map(|v| format!("v{v}")).unwrap_or_else(dash),
        list(h.stages.iter().map(|s| s.to_string()).collect()),
        if persistent {
            list(h.observes.clone())
        } else {
            dash()
        },
        h.hello_time
            .map(|t| format!("{} ms", t.as_millis()))
            .unwrap_or_else(dash),
        h.scope.to_string(),
    ])
}

/// Prints the hooks that did not start, the untrusted ones and the
/// variables hooks will miss; whether any of the first two make the check
/// fail.
fn print_problems(host: &Host, untrusted: &[String], unmet: &[String]) -> bool {
    for f in host.start_failures() {
        outln!(
            "FAIL hook `{}`: {}",
            safe(&f.hook),
            safe(&f.error.to_string())
        );
    }
    for line in untrusted {
        outln!("{line}");
    }
    for line in unmet {
        outln!("{}", safe(line));
    }
    !host.start_failures().is_empty() || !untrusted.is_empty()
}

/// Where each imported hook came from, and what was skipped and why: a
/// hook of a settings file is never left out without a line saying so.
fn imported_rows(config: &Config) -> Vec<[String; 6]> {
    let mut rows = vec![[
        "imported".to_string(),
        "dialect".into(),
        "file".into(),
        "event".into(),
        "matcher".into(),
        "note".into(),
    ]];
    let file = |f: &std::path::Path| {
        f.strip_prefix(&config.base_dir)
            .unwrap_or(f)
            .display()
            .to_string()
    };
    for (name, c) in &config.commands {
        let Some(src) = &c.source else { continue };
        let matcher = src.matcher.clone().unwrap_or_else(|| "-".into());
        let note = match (c.enabled, &c.model) {
            (false, _) => "disabled".to_string(),
            _ if src.trust.is_untrusted() => "NOT TRUSTED: not run (hookhost trust)".to_string(),
            (true, Some(m)) => format!("runs as a prompt hook ({})", m.model),
            (true, None) => "runs".to_string(),
        };
        rows.push([
            name.clone(),
            c.dialect.to_string(),
            file(&src.file),
            src.event.clone(),
            matcher,
            note,
        ]);
    }
    for s in &config.skipped {
        let matcher = s.source.matcher.clone().unwrap_or_else(|| "-".into());
        let note = format!("SKIPPED {} hook: {}", s.kind, s.why);
        rows.push([
            "-".into(),
            "-".into(),
            file(&s.source.file),
            s.source.event.clone(),
            matcher,
            note,
        ]);
    }
    rows
}

/// One line per command hook that reads variables it will not get
/// (spec/dialects.md §3), naming them and the script that reads them. Not
/// a failure: the hook may cope without them, but its author should know.
fn unmet_lines(config: &Config) -> Vec<String> {
    config
        .commands
        .iter()
        .filter_map(|(name, hook)| {
            let unmet = hook.unmet_env(&config.command_dir(hook));
            if unmet.is_empty() {
                return None;
            }
            let names: Vec<String> = unmet
                .iter()
                .map(|u| match &u.script {
                    Some(s) => format!("${} (in {})", u.name, s.display()),
                    None => format!("${}", u.name),
                })
                .collect();
            Some(format!(
                "ENV hook `{name}` reads {}, which it will not get: hookhost passes PATH, \
                 the user's identity and locale (HOME, LANG...), its agent's variables and \
                 what its inherit_env or env names",
                names.join(", ")
            ))
        })
        .collect()
}

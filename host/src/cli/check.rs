//! `hookhost check`: validate a config, start every hook, show what each
//! declared, and stop them again.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use hookhost::{Config, Host};

use super::usage_error;

/// Load the config, start and handshake every hook, print a table, stop.
#[derive(Args)]
#[command(after_help = "Examples:\n  \
hookhost check -c examples/hooks.toml\n  \
hookhost check -c ~/.picoclaw/config.json\n\n\
Exit status: 0 when every enabled hook started, 1 when one did not (each failure is \
named with the hook's stderr tail), 2 for a config error.")]
pub struct CheckArgs {
    /// The config file (TOML, or JSON in PicoClaw's shape).
    #[arg(short = 'c', long = "config")]
    config: PathBuf,
}

pub async fn run(args: CheckArgs) -> ExitCode {
    let config = match Config::load(&args.config) {
        Ok(c) => c,
        Err(e) => return usage_error(e),
    };
    if !config.enabled {
        println!(
            "hooks are disabled in {} ([hooks] enabled = false)",
            args.config.display()
        );
        return ExitCode::SUCCESS;
    }
    let host = Host::start(config).await;
    let mut rows = vec![[
        "hook".to_string(),
        "kind".into(),
        "pid".into(),
        "protocol".into(),
        "intercepts".into(),
        "observes".into(),
        "hello".into(),
    ]];
    for hook in host.hooks() {
        let Some(started) = host.started().iter().find(|s| s.hook == *hook.name) else {
            continue;
        };
        let eff = hook.effective();
        let list = |v: Vec<String>| {
            if v.is_empty() {
                "-".to_string()
            } else {
                v.join(",")
            }
        };
        rows.push([
            hook.name.to_string(),
            "process".into(),
            started.info.pid.to_string(),
            format!("v{}", started.info.version),
            list(eff.intercept.iter().map(|s| s.to_string()).collect()),
            list(eff.observe.iter().map(|p| p.to_string()).collect()),
            format!("{} ms", started.info.hello_time.as_millis()),
        ]);
    }
    print_table(&rows);
    for f in host.start_failures() {
        println!("FAIL hook `{}`: {}", f.hook, f.error);
    }
    let failed = !host.start_failures().is_empty();
    host.shutdown().await;
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Prints rows as aligned columns, the first row as the header.
pub fn print_table<const N: usize>(rows: &[[String; N]]) {
    let mut widths = [0usize; N];
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for row in rows {
        let line: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        println!("{}", line.join("  ").trim_end());
    }
}

//! `hookhost audit verify`: checks an audit log's hash chains, so that an
//! edited, removed, inserted or reordered record is found. The log is
//! the one a config's `[hooks.audit]` names (`-c`), or a file (`--url
//! PATH`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::shared::config::load_config;
use crate::shared::exit::usage_error;

/// Check and read the audit log.
#[derive(Args)]
#[command(after_help = "Examples:\n  \
hookhost audit verify -c ~/.config/hookhost/hooks.toml\n  \
hookhost audit verify --url /var/log/hookhost/audit.jsonl\n\n\
Every record names its writer (one per hookhost process and file), its place in that \
writer's sequence, the previous record's hash and its own: verify recomputes each hash \
from the line as written and follows every writer's chain. Exit 0 when every chain \
holds, 1 at the first record that breaks one (named with its line and why).")]
pub struct AuditArgs {
    #[command(subcommand)]
    action: Action,
}

#[derive(Subcommand)]
enum Action {
    /// Check every writer's hash chain.
    Verify {
        /// The config whose `[hooks.audit] path` is the log.
        #[arg(short = 'c', long = "config", conflicts_with = "url")]
        config: Option<PathBuf>,
        /// The log itself (a JSONL file's path).
        #[arg(long, value_name = "PATH")]
        url: Option<PathBuf>,
    },
}

pub fn run(args: AuditArgs) -> ExitCode {
    let Action::Verify { config, url } = args.action;
    let path = match (config, url) {
        (_, Some(path)) => path,
        (Some(config), None) => match load_config(&config).map(|c| c.audit_path()) {
            Ok(Some(path)) => path,
            Ok(None) => {
                return usage_error(format!("{} has no [hooks.audit] path", config.display()));
            }
            Err(e) => return usage_error(e),
        },
        (None, None) => return usage_error("audit verify: give -c CONFIG or --url PATH"),
    };
    let file = match std::fs::File::open(&path) {
        Ok(f) => std::io::BufReader::new(f),
        Err(e) => return usage_error(format!("cannot read {}: {e}", path.display())),
    };
    match hookhost::verify_audit(file) {
        Ok(report) => print(&path, &report),
        Err(e) => usage_error(format!("cannot read {}: {e}", path.display())),
    }
}

fn print(path: &std::path::Path, report: &hookhost::ChainReport) -> ExitCode {
    let writers = report.writers.len();
    match &report.broken {
        None => {
            outln!(
                "{}: {} records from {writers} writer(s); every chain holds",
                path.display(),
                report.records
            );
            ExitCode::SUCCESS
        }
        Some((line, why)) => {
            outln!("{}: line {line}: {why}", path.display());
            ExitCode::from(1)
        }
    }
}

//! `hookhost audit verify` and `hookhost audit query`: read an audit log
//! back from any of its stores (a JSONL file, SQLite, PostgreSQL). The
//! store is the one a config's `[hooks.audit]` names (`-c`), or `--url`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use hookhost::{AuditQuery, AuditStore};

use crate::shared::config::load_config;
use crate::shared::exit::usage_error;
use crate::shared::since::since_time;

/// Check and read the audit log.
#[derive(Args)]
#[command(after_help = "Examples:\n  \
hookhost audit verify -c ~/.config/hookhost/hooks.toml\n  \
hookhost audit verify --url /var/log/hookhost/audit.jsonl\n  \
hookhost audit query --url postgres://audit@db/hookhost --decision deny --since 1h\n\n\
Every record names its writer (one per hookhost process and store), its place in that \
writer's sequence, the previous record's hash and its own: verify recomputes each hash \
from the record as written and follows every writer's chain. Exit 0 when every chain \
holds, 1 at the first record that breaks one (named with its place and why).")]
pub struct AuditArgs {
    #[command(subcommand)]
    action: Action,
}

/// Where the log is: `-c CONFIG` or `--url URL`.
#[derive(Args)]
struct Where {
    /// The config whose `[hooks.audit]` names the log.
    #[arg(short = 'c', long = "config", conflicts_with = "url")]
    config: Option<PathBuf>,
    /// The log itself: a JSONL file's path, sqlite://PATH or postgres://…
    /// (a password may come from PGPASSWORD).
    #[arg(long, value_name = "URL")]
    url: Option<String>,
}

#[derive(Subcommand)]
enum Action {
    /// Check every writer's hash chain.
    Verify {
        #[command(flatten)]
        at: Where,
    },
    /// Print the records that match, one JSON line each, oldest first.
    Query {
        #[command(flatten)]
        at: Where,
        /// The agent's session.
        #[arg(long, value_name = "S")]
        session: Option<String>,
        /// The outcome: an event's decision (deny, allow, ask, ...) or a
        /// hook's (deny_tool, continue, timeout, ...).
        #[arg(long, value_name = "D")]
        decision: Option<String>,
        /// The hook's name.
        #[arg(long, value_name = "H")]
        hook: Option<String>,
        /// Records since a UTC time (2026-11-27, 2026-11-27T19:05Z) or for
        /// the last span of time (90s, 15m, 2h, 7d).
        #[arg(long, value_name = "T")]
        since: Option<String>,
    },
}

pub fn run(args: AuditArgs) -> ExitCode {
    match args.action {
        Action::Verify { at } => match store(at) {
            Ok(store) => verify(&store),
            Err(code) => code,
        },
        Action::Query {
            at,
            session,
            decision,
            hook,
            since,
        } => {
            let since = match since.as_deref().map(since_time).transpose() {
                Ok(since) => since,
                Err(e) => return usage_error(e),
            };
            let mut query = AuditQuery::new();
            (query.session, query.decision, query.hook, query.since) =
                (session, decision, hook, since);
            match store(at) {
                Ok(store) => print_query(&store, &query),
                Err(code) => code,
            }
        }
    }
}

fn store(at: Where) -> Result<AuditStore, ExitCode> {
    match (at.config, at.url) {
        (_, Some(url)) => {
            let here = std::env::current_dir().unwrap_or_default();
            AuditStore::parse(&url, &here).map_err(usage_error)
        }
        (Some(config), None) => match load_config(&config).map(|c| c.audit_store()) {
            Ok(Some(store)) => store.map_err(usage_error),
            Ok(None) => Err(usage_error(format!(
                "{} has no [hooks.audit]",
                config.display()
            ))),
            Err(e) => Err(usage_error(e)),
        },
        (None, None) => Err(usage_error("audit: give -c CONFIG or --url URL")),
    }
}

fn verify(store: &AuditStore) -> ExitCode {
    let report = match store.verify() {
        Ok(report) => report,
        Err(e) => return usage_error(e),
    };
    match &report.broken {
        None => {
            outln!(
                "{store}: {} records from {} writer(s); every chain holds",
                report.records,
                report.writers.len()
            );
            ExitCode::SUCCESS
        }
        Some((n, why)) => {
            outln!("{store}: record {n}: {why}");
            ExitCode::from(1)
        }
    }
}

fn print_query(store: &AuditStore, query: &AuditQuery) -> ExitCode {
    let mut out = std::io::stdout().lock();
    let mut failed = None;
    let result = store.query(query, &mut |line| {
        use std::io::Write;
        if failed.is_none() {
            failed = writeln!(out, "{line}").err();
        }
    });
    match (result, failed) {
        (Ok(_), None) => ExitCode::SUCCESS,
        // A closed pipe (`| head`) is the reader's choice, not an error.
        (Ok(_), Some(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        (Ok(_), Some(e)) => usage_error(format!("cannot write the records: {e}")),
        (Err(e), _) => usage_error(e),
    }
}

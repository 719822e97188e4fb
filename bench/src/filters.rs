//! Rows 14 and 15: what an `if` filter costs, written two ways. One
//! guard (the `deny_tools` builtin, denying `shell`) is asked only about
//! commands starting `rm -rf` or `sudo `: row 14 says so with
//! `startsWith`, row 15 with the same two prefixes as constant `matches()`
//! patterns. The params' command starts with neither, so every measured
//! call evaluates the filter, skips the guard and continues; what differs
//! between the rows is the filter alone.
//!
//! Sanity: before measuring, a call whose command starts `rm -rf` must be
//! denied by the guard (the filter is live, not always false); after it,
//! the guard must count every measured call as filtered, none run, none
//! failed.

use std::sync::Arc;

use hookhost::protocol::{Outcome, Stage};
use hookhost::{Config, Host};
use serde_json::Value;

use super::{Paths, Plan, Res, Row, Target, measure_counted, params};

pub(super) const STARTS_WITH_ROW: &str = "14. hookhost → builtin guard, `if` with startsWith";
pub(super) const MATCHES_ROW: &str = "15. hookhost → builtin guard, `if` with constant matches()";

/// The guard's `if`, with the test written by `test` ("startsWith" or
/// "matches") on each prefix (`prefix` turns the prefix into its argument).
fn condition(test: &str, prefix: fn(&str) -> String) -> String {
    let each = ["rm -rf", "sudo "]
        .map(|p| format!("arguments.command.{test}({})", prefix(p)))
        .join(" || ");
    format!("tool == \"shell\" && has(arguments.command) && ({each})")
}

/// Row 14's filter.
pub(super) fn starts_with() -> String {
    condition("startsWith", |p| format!("{p:?}"))
}

/// Row 15's: the same prefixes as anchored patterns.
pub(super) fn matches() -> String {
    condition("matches", |p| format!("{:?}", format!("^{p}")))
}

/// A host with the one guard, filtered by `condition`.
fn guard_config(paths: &Paths, condition: &str) -> Res<Config> {
    let text = format!(
        "[hooks.builtins.deny_tools]\nif = {condition:?}\nconfig = {{ tools = [\"shell\"] }}\n"
    );
    let path = paths.bench_dir.join("filters.toml");
    Ok(Config::parse(&text, false, &path, paths.bench_dir.clone())?)
}

/// One row: the guard behind `condition`, measured as row 2 is.
pub(super) async fn row(
    name: &'static str,
    paths: &Paths,
    plan: Plan,
    condition: &str,
) -> Res<Row> {
    let host = Host::start(guard_config(paths, condition)?).await;
    let measured = async {
        denies_rm_rf(&host).await?;
        let target = Target::Host(host.clone(), Arc::new(params()));
        let (row, calls) =
            measure_counted(name, &target, plan.warmup, plan.sequential, plan.window).await?;
        every_call_filtered(&host, calls)?;
        Ok(row)
    }
    .await;
    host.shutdown().await;
    measured
}

/// The filter is live: a command it selects reaches the guard and is denied.
async fn denies_rm_rf(host: &Host) -> Res<()> {
    let mut p = params();
    p["arguments"]["command"] = Value::from("rm -rf /home/agent/projects");
    match host.run_stage(Stage::BeforeTool, p).await? {
        Outcome::DenyTool { .. } => Ok(()),
        other => Err(format!("the guard let `rm -rf` through: {other:?}").into()),
    }
}

/// The guard counts `calls` filtered calls and ran none of them, beyond
/// the one sanity call.
fn every_call_filtered(host: &Host, calls: u64) -> Res<()> {
    for s in host.stats() {
        let seen = (s.calls, s.errors, s.filtered, s.filter_errors);
        if seen != (1, 0, calls, 0) {
            return Err(format!(
                "made {calls} calls; guard {} counts (calls, errors, filtered, filter_errors) \
                 {seen:?}, expected (1, 0, {calls}, 0)",
                s.hook
            )
            .into());
        }
    }
    Ok(())
}

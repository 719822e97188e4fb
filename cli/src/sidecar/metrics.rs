//! `GET /metrics`: the gateway's figures in the OpenMetrics text format
//! Prometheus scrapes. Three sources, each fed in one place:
//! - the host's [`Observer`] seam ([`Counts`]): every finished hook call
//!   (latency, outcome, errors, timeouts) and every answered event's
//!   decision, counted as they happen;
//! - the route layer ([`Metrics::busy`]): requests being answered now;
//! - the host's own read model at scrape time ([`HostFigures`]): breaker
//!   states, hooks that failed to start, the audit log's queued, dropped,
//!   written and lost records. A figure the host keeps itself is one line
//!   there each: `one(&mut out, NAME, HELP, ConstGauge::new(..))`, and a
//!   counter with `ConstCounter`.
//!
//! Label values are hook names (from the config), stages, outcomes,
//! decisions, dialects and breaker states (fixed sets the library names);
//! never anything from an event's content (a tool, a path, a reason,
//! a session), so the number of series is bounded by the config whatever
//! callers send.

use std::fmt;
use std::sync::Arc;

use hookhost::{AnsweredEvent, HookCall, Host, Observer};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric, text};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::metrics::{MetricType, TypedMetric};
use prometheus_client::registry::{Registry, Unit};

/// The `Content-Type` of a scrape's body (OpenMetrics 1.0 text), which
/// Prometheus asks for first.
pub(super) const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Latency buckets, seconds: from a builtin's 50 µs to a slow remote
/// hook's 30 s (the longest default deadline), about three a decade.
const BUCKETS: [f64; 18] = [
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
    2.5, 5.0, 10.0, 30.0,
];

/// The states `HookStats::breaker` names; each hook's series is 1 for
/// its state and 0 for the others, so a query can say `== 1`.
const BREAKER_STATES: [&str; 4] = ["closed", "open", "half_open", "off"];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HookStage {
    hook: String,
    stage: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HookOutcome {
    hook: String,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HookName {
    hook: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Decided {
    dialect: &'static str,
    decision: &'static str,
}

fn histogram() -> Histogram {
    Histogram::new(BUCKETS)
}

/// What the host's observer counts. The families share their storage
/// with the registry's copies, so counting here is what a scrape reads.
#[derive(Clone, Debug)]
struct Counts {
    duration: Family<HookStage, Histogram, fn() -> Histogram>,
    calls: Family<HookOutcome, Counter>,
    errors: Family<HookName, Counter>,
    timeouts: Family<HookName, Counter>,
    decisions: Family<Decided, Counter>,
}

impl Observer for Counts {
    fn hook_called(&self, call: &HookCall<'_>) {
        let hook = call.hook.to_string();
        let outcome = call.outcome;
        self.calls
            .get_or_create(&HookOutcome {
                hook: hook.clone(),
                outcome,
            })
            .inc();
        if call.called {
            // A skipped hook took no time worth a bucket.
            let stage = call.stage.as_str();
            let labels = HookStage {
                hook: hook.clone(),
                stage,
            };
            let seconds = call.elapsed.as_secs_f64();
            self.duration.get_or_create(&labels).observe(seconds);
        }
        // Created at 0 on a hook's first call, so a rate is 0, not absent.
        let name = HookName { hook };
        let errors = self.errors.get_or_create(&name);
        let timeouts = self.timeouts.get_or_create(&name);
        if call.failed {
            errors.inc();
        }
        if call.timed_out {
            timeouts.inc();
        }
    }

    fn event_answered(&self, event: &AnsweredEvent<'_>) {
        let labels = Decided {
            dialect: event.dialect,
            decision: event.record.decision,
        };
        self.decisions.get_or_create(&labels).inc();
    }
}

/// The gateway's registry: what a scrape encodes.
pub(crate) struct Metrics {
    registry: Registry,
    in_flight: Gauge,
}

impl Metrics {
    /// A registry for `host`'s figures, and the observer that counts
    /// them, for the sidecar to register with the host (kept across
    /// reloads).
    pub(crate) fn new(host: &Host) -> (Metrics, Arc<dyn Observer>) {
        let counts = Counts {
            duration: Family::new_with_constructor(histogram),
            calls: Family::default(),
            errors: Family::default(),
            timeouts: Family::default(),
            decisions: Family::default(),
        };
        let in_flight = Gauge::default();
        let mut registry = Registry::with_prefix("hookhost");
        register(&mut registry, &counts, &in_flight);
        registry.register_collector(Box::new(HostFigures { host: host.clone() }));
        let metrics = Metrics {
            registry,
            in_flight,
        };
        (metrics, Arc::new(counts))
    }

    /// Counts one request being answered until the guard is dropped,
    /// however the request ends (answered, refused, cancelled).
    pub(crate) fn busy(&self) -> Busy {
        self.in_flight.inc();
        Busy(self.in_flight.clone())
    }

    /// One scrape's body.
    pub(crate) fn render(&self) -> Result<String, fmt::Error> {
        let mut out = String::with_capacity(4096);
        text::encode(&mut out, &self.registry)?;
        Ok(out)
    }
}

fn register(registry: &mut Registry, counts: &Counts, in_flight: &Gauge) {
    registry.register_with_unit(
        "hook_duration",
        "Latency of each hook call, from the request to its answer or failure",
        Unit::Seconds,
        counts.duration.clone(),
    );
    let c = counts.clone();
    registry.register(
        "hook_calls",
        "Hook steps by outcome as the audit log names it (skipped ones included)",
        c.calls,
    );
    registry.register("hook_errors", "Hook calls that failed", c.errors);
    registry.register("hook_timeouts", "Hook calls that timed out", c.timeouts);
    registry.register(
        "decisions",
        "Answered events by the decision record's decision, per agent dialect",
        c.decisions,
    );
    registry.register(
        "in_flight_requests",
        "Events the gateway's HTTP routes are answering now",
        in_flight.clone(),
    );
}

/// One request in flight; dropping it counts it done.
pub(crate) struct Busy(Gauge);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// What the host keeps itself, read at each scrape.
struct HostFigures {
    host: Host,
}

impl fmt::Debug for HostFigures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HostFigures")
    }
}

impl Collector for HostFigures {
    fn encode(&self, mut out: DescriptorEncoder) -> fmt::Result {
        let help = "Each hook's circuit breaker: 1 for the state it is in.";
        let mut family =
            out.encode_descriptor("hook_breaker_state", help, None, MetricType::Gauge)?;
        for hook in self.host.stats() {
            for state in BREAKER_STATES {
                let labels = [("hook", hook.hook.as_str()), ("state", state)];
                let value = ConstGauge::new(i64::from(hook.breaker == state));
                value.encode(family.encode_family(&labels)?)?;
            }
        }
        let failed = self.host.start_failures().len() as u64;
        let help = "Hooks that did not come up, at the start or a reload, since the start.";
        one(&mut out, "start_failures", help, ConstCounter::new(failed))?;
        if let Some(audit) = self.host.audit_figures() {
            audit_figures(&mut out, audit)?;
        }
        Ok(())
    }
}

/// The audit log's queue and store: what waits, what a full queue
/// dropped, what reached the store and what a failing store lost.
fn audit_figures(out: &mut DescriptorEncoder, f: hookhost::AuditFigures) -> fmt::Result {
    let queued = i64::try_from(f.queued).unwrap_or(i64::MAX);
    let help = "Audit records waiting for the store now.";
    one(out, "audit_queued", help, ConstGauge::new(queued))?;
    let help = "Audit records dropped because the queue was full.";
    one(out, "audit_dropped", help, ConstCounter::new(f.dropped))?;
    let help = "Audit records in the store.";
    one(out, "audit_written", help, ConstCounter::new(f.written))?;
    let help = "Audit records a failing store lost.";
    one(out, "audit_lost", help, ConstCounter::new(f.lost))
}

/// One unlabelled figure, read at scrape time.
fn one<M: EncodeMetric + TypedMetric>(
    out: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    metric: M,
) -> fmt::Result {
    metric.encode(out.encode_descriptor(name, help, None, M::TYPE)?)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use hookhost::{Config, Dialect, ForeignEvent};
    use serde_json::json;

    use super::*;

    async fn host(config: &str) -> Host {
        let path = std::path::Path::new("hooks.toml");
        let config = Config::parse(config, false, path, std::env::temp_dir()).unwrap();
        Host::start(config).await
    }

    /// Claude Code's PreToolUse for `tool`, answered as the gateway does.
    async fn pre_tool_use(host: &Host, tool: &str) {
        let input = json!({"session_id": "s1", "transcript_path": "/t", "cwd": "/tmp",
            "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": {}});
        let event = ForeignEvent::read(Dialect::ClaudeCode, &input, None).unwrap();
        host.answer_foreign_recorded(&event).await;
    }

    /// The registry of `host`, its counting observer registered.
    fn metrics_of(host: &Host) -> Metrics {
        let (metrics, counts) = Metrics::new(host);
        host.set_observer(counts);
        metrics
    }

    fn has(body: &str, line: &str) {
        assert!(body.lines().any(|l| l == line), "no {line:?} in\n{body}");
    }

    #[tokio::test]
    async fn a_scrape_counts_each_call_its_latency_buckets_and_each_decision() {
        let host = host(
            "[hooks.builtins.deny_tools]\nconfig = { tools = [\"Bash\", \"shell\"], reason = \"no\" }\n",
        )
        .await;
        let metrics = metrics_of(&host);
        for tool in ["Bash", "Bash", "Bash", "Read"] {
            pre_tool_use(&host, tool).await;
        }
        let body = metrics.render().unwrap();
        let hook = r#"hook="deny_tools""#;
        has(
            &body,
            &format!(r#"hookhost_hook_calls_total{{{hook},outcome="deny_tool"}} 3"#),
        );
        has(
            &body,
            &format!(r#"hookhost_hook_calls_total{{{hook},outcome="continue"}} 1"#),
        );
        let bucket = |le: &str| {
            format!(
                r#"hookhost_hook_duration_seconds_bucket{{le="{le}",{hook},stage="before_tool"}}"#
            )
        };
        has(&body, &format!("{} 4", bucket("30.0")));
        has(&body, &format!("{} 4", bucket("+Inf")));
        let buckets = body.lines().filter(|l| l.contains("_bucket{le=")).count();
        assert_eq!(buckets, BUCKETS.len() + 1, "{body}");
        has(
            &body,
            &format!(r#"hookhost_hook_duration_seconds_count{{{hook},stage="before_tool"}} 4"#),
        );
        has(&body, &format!("hookhost_hook_errors_total{{{hook}}} 0"));
        has(
            &body,
            r#"hookhost_decisions_total{dialect="claude-code",decision="deny"} 3"#,
        );
        has(
            &body,
            r#"hookhost_decisions_total{dialect="claude-code",decision="continue"} 1"#,
        );
        let states: Vec<&str> = body
            .lines()
            .filter(|l| l.starts_with("hookhost_hook_breaker_state{"))
            .collect();
        assert_eq!(states.len(), BREAKER_STATES.len(), "{body}");
        assert_eq!(
            states.iter().filter(|l| l.ends_with(" 1")).count(),
            1,
            "{body}"
        );
        has(&body, "hookhost_start_failures_total 0");
        assert!(body.ends_with("# EOF\n"), "{body}");
        host.shutdown().await;
    }

    #[tokio::test]
    async fn a_timed_out_call_counts_as_an_error_and_a_timeout() {
        let host = host(
            "[hooks.commands.slow]\ncommand = \"sleep 5\"\ndialect = \"claude-code\"\n\
             events = [\"PreToolUse\"]\ntimeout = 1\non_error = \"allow\"\n",
        )
        .await;
        let metrics = metrics_of(&host);
        pre_tool_use(&host, "Bash").await;
        let body = metrics.render().unwrap();
        has(
            &body,
            r#"hookhost_hook_calls_total{hook="slow",outcome="timeout"} 1"#,
        );
        has(&body, r#"hookhost_hook_errors_total{hook="slow"} 1"#);
        has(&body, r#"hookhost_hook_timeouts_total{hook="slow"} 1"#);
        host.shutdown().await;
    }

    #[tokio::test]
    async fn a_request_in_flight_is_counted_until_it_ends_or_is_cancelled() {
        let host = host("").await;
        let metrics = Arc::new(metrics_of(&host));
        let answered = metrics.busy();
        let (m, (tx, rx)) = (metrics.clone(), tokio::sync::oneshot::channel());
        let cancelled = tokio::spawn(async move {
            let _busy = m.busy();
            let _ = tx.send(());
            std::future::pending::<()>().await
        });
        rx.await.unwrap();
        assert_eq!(metrics.in_flight.get(), 2);
        drop(answered);
        cancelled.abort();
        let _ = cancelled.await;
        assert_eq!(metrics.in_flight.get(), 0);
        has(&metrics.render().unwrap(), "hookhost_in_flight_requests 0");
    }
}

//! The figures at the foot of a report: what arrived per method, each
//! cancel and what it cancelled, and the shutdown timeline.

use std::collections::BTreeMap;

use hookhost_protocol::Id;

use super::Options;
use super::checks::ms;
use super::record::{Arrival, Record};
use super::report::{Cancel, Summary};

/// Sums up the run.
pub(super) fn summarize(rec: &Record, opts: &Options) -> Summary {
    let mut requests = BTreeMap::new();
    let mut notifications = BTreeMap::new();
    for a in &rec.arrivals {
        if let Some((_, m, _)) = a.request() {
            *requests.entry(m.to_string()).or_insert(0) += 1;
        } else if let Some((m, _)) = a.notification() {
            *notifications.entry(m.to_string()).or_insert(0) += 1;
        }
    }
    let cancels = rec
        .arrivals
        .iter()
        .filter_map(|a| Some(cancel(rec, opts, a, a.cancel_id()?)))
        .collect();
    Summary {
        lines: rec.arrivals.len(),
        requests,
        notifications,
        cancels,
        hello_answered_ms: rec.hello_answered.map(ms),
        eof_ms: rec.eof.map(ms),
        term_ms: rec.term.map(ms),
        stdout_closed_ms: rec.stdout_closed.map(ms),
        ended: rec.ended,
    }
}

/// One cancel, with the request it names and what had become of it.
fn cancel(rec: &Record, opts: &Options, a: &Arrival, id: Id) -> Cancel {
    let request = rec.request_before(a.line, &id);
    let target = match request {
        None => "unknown",
        Some(_) if rec.answered.get(&id).is_some_and(|t| *t <= a.at) => "answered",
        Some(r) if r.stage().is_some_and(|s| opts.stall.contains(&s)) => "stalled",
        Some(_) => "pending",
    };
    Cancel {
        id: serde_json::to_value(&id).unwrap_or_default(),
        line: a.line,
        request_line: request.map(|r| r.line),
        method: request.and_then(|r| Some(r.request()?.1.to_string())),
        after_ms: request.map(|r| ms(a.at.saturating_sub(r.at))),
        target,
    }
}

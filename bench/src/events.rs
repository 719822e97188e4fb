//! The scaling section's runtime events: 1, 2, 5 and 10 observers, each
//! its own `bench-observer` process (a Rust SDK hook that counts the
//! events it receives and says how many when called at before_tool).
//!
//! The agent's side: a batch of `agent.llm.delta` events (ids from
//! `Host::next_event_id`, built before the clock starts) handed to
//! `Host::emit` on one task, each call timed. First as a flood, back to
//! back as fast as `emit` returns, far above what an agent emits: it shows
//! that `emit` never waits (its rate, its p99 and slowest single call) and
//! what the observers can take. Then paced at 10,000 a second (10 per 1 ms
//! tick), a busy agent's rate with room to spare, where nothing should be
//! dropped. Each run has a host of its own. After each, the harness polls the observers (a before_tool call through the
//! chain) until every event is accounted for, each either received by its
//! observer or counted dropped by the host (`HookStats::dropped_events`,
//! a full per-hook queue), or until the counts stop moving for a second.
//! An event neither received nor counted by the host is reported as such
//! (the SDK drops events itself when its own queue is full, and counts
//! them only on its stderr).

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hookhost::Host;
use hookhost::protocol::event::RuntimeEvent;
use hookhost::protocol::{Outcome, Stage};
use serde_json::json;

use super::scaling::{ScalePlan, hooks_config};
use super::{Latency, Paths, Res, checks, params};

/// The numbers of observers measured.
pub(super) const OBSERVERS: [usize; 4] = [1, 2, 5, 10];

/// How the agent emits.
#[derive(Clone, Copy)]
enum Pace {
    /// Back to back, as fast as `emit` returns.
    Flood,
    /// This many per second, in ticks of 1 ms.
    PerSecond(usize),
}

/// The paced run's rate: far above what an agent emits, below what an
/// observer can take.
pub(super) const PACED: usize = 10_000;

/// One point: `observers` observers, a flood and a paced run.
pub(super) struct EventsPoint {
    pub(super) observers: usize,
    pub(super) flood: EventsRun,
    pub(super) paced: EventsRun,
}

/// One run: events emitted, each offered to every observer.
pub(super) struct EventsRun {
    pub(super) emitted: u64,
    /// `emit` calls per second, as the agent's loop saw them.
    pub(super) emit_rate: f64,
    /// Single `emit` calls, ns.
    pub(super) emit: Latency,
    /// Events received, summed over the observers.
    pub(super) received: u64,
    /// Events the host counted dropped, summed over the observers.
    pub(super) dropped: u64,
    /// Events neither received nor counted dropped by the host (negative:
    /// counted twice).
    pub(super) unaccounted: i64,
    /// Events received per second per observer (the mean), from the
    /// first emit to the observer's last event.
    pub(super) receive_rate: f64,
}

impl EventsRun {
    /// Events offered: each emitted one to each observer.
    pub(super) fn offered(&self, observers: usize) -> u64 {
        self.emitted * observers as u64
    }
}

/// What one observer said it received.
#[derive(Clone, Copy, PartialEq)]
struct Received {
    n: u64,
    last_us: u64,
}

fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// Measures one point: the flood, then the paced run, each with a host
/// of its own.
pub(super) async fn point(paths: &Paths, plan: ScalePlan, observers: usize) -> Res<EventsPoint> {
    let flood = run(paths, observers, plan.events, Pace::Flood).await?;
    let paced = run(paths, observers, plan.paced_events, Pace::PerSecond(PACED)).await?;
    Ok(EventsPoint {
        observers,
        flood,
        paced,
    })
}

async fn run(paths: &Paths, observers: usize, n: usize, pace: Pace) -> Res<EventsRun> {
    let command = [paths.bin("bench-observer").display().to_string()];
    let config = hooks_config(&paths.bench_dir, &command, observers, &["agent.*"]);
    let host = Host::start(config).await;
    let measured = async {
        checks::ready(&host, observers)?;
        let batch = batch(&host, n)?;
        let t0_us = now_us();
        let emitted = emit_all(&host, batch, pace).await;
        let (seen, polls) = drain(&host, n as u64, observers).await?;
        checks::every_call(&host, polls)?;
        if seen.len() != observers {
            return Err(format!("{} of {observers} observers reported", seen.len()).into());
        }
        Ok(tally(&host, &seen, t0_us, emitted))
    }
    .await;
    host.shutdown().await;
    measured
}

/// `n` events, ready to emit.
fn batch(host: &Host, n: usize) -> Res<Vec<RuntimeEvent>> {
    let template: RuntimeEvent = serde_json::from_value(json!({
        "id": "",
        "kind": "agent.llm.delta",
        "time": "2026-11-24T00:00:00Z",
        "payload": {"text": "a chunk of the model's streamed answer", "index": 0}
    }))?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let mut e = template.clone();
        e.id = host.next_event_id();
        out.push(e);
    }
    Ok(out)
}

/// Emits every event at `pace`, timing each call; the run as far as the
/// agent saw it.
async fn emit_all(host: &Host, batch: Vec<RuntimeEvent>, pace: Pace) -> EventsRun {
    let n = batch.len();
    let mut times = Vec::with_capacity(n);
    let start = Instant::now();
    let mut events = batch.into_iter();
    match pace {
        Pace::Flood => times.extend(events.map(|e| emit_timed(host, e))),
        Pace::PerSecond(rate) => {
            let mut tick = tokio::time::interval(Duration::from_millis(1));
            let per_tick = (rate / 1000).max(1);
            while events.len() > 0 {
                tick.tick().await;
                times.extend(events.by_ref().take(per_tick).map(|e| emit_timed(host, e)));
            }
        }
    }
    let emit_rate = n as f64 / start.elapsed().as_secs_f64();
    EventsRun {
        emitted: n as u64,
        emit_rate,
        emit: Latency::of(times),
        received: 0,
        dropped: 0,
        unaccounted: 0,
        receive_rate: 0.0,
    }
}

/// One `emit`, in ns.
fn emit_timed(host: &Host, event: RuntimeEvent) -> u64 {
    let t = Instant::now();
    host.emit(event);
    t.elapsed().as_nanos() as u64
}

/// Each observer's count, from one before_tool call through the chain.
async fn poll(host: &Host) -> Res<BTreeMap<String, Received>> {
    let contexts = match host.run_stage(Stage::BeforeTool, params()).await? {
        Outcome::Continue { contexts, .. } => contexts,
        other => return Err(format!("expected continue, got {other:?}").into()),
    };
    let mut out = BTreeMap::new();
    for (hook, text) in contexts {
        let words: Vec<&str> = text.split_whitespace().collect();
        let [_, n, _, _, _, last] = words[..] else {
            return Err(format!("observer {hook} answered {text:?}").into());
        };
        let (n, last_us) = (n.parse()?, last.parse()?);
        out.insert(hook, Received { n, last_us });
    }
    Ok(out)
}

/// The host's dropped-event count per hook.
fn dropped(host: &Host) -> BTreeMap<String, u64> {
    host.stats()
        .into_iter()
        .map(|s| (s.hook, s.dropped_events))
        .collect()
}

/// Polls until each of the `observers` has received or lost every one of
/// the `emitted` events, or nothing moved for a second (60 s at most);
/// the last counts and how many polls were made.
async fn drain(
    host: &Host,
    emitted: u64,
    observers: usize,
) -> Res<(BTreeMap<String, Received>, u64)> {
    let began = Instant::now();
    let (mut polls, mut moved) = (0u64, Instant::now());
    let mut last = BTreeMap::new();
    loop {
        let seen = poll(host).await?;
        polls += 1;
        let lost = dropped(host);
        let settled = seen.len() == observers
            && seen
                .iter()
                .all(|(h, r)| r.n + lost.get(h).copied().unwrap_or(0) == emitted);
        if seen != last {
            moved = Instant::now();
        }
        let stuck = moved.elapsed() > Duration::from_secs(1);
        if settled || stuck || began.elapsed() > Duration::from_secs(60) {
            return Ok((seen, polls));
        }
        last = seen;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The run completed with the observers' counts and the host's.
fn tally(
    host: &Host,
    seen: &BTreeMap<String, Received>,
    t0_us: u64,
    emitted: EventsRun,
) -> EventsRun {
    let received: u64 = seen.values().map(|r| r.n).sum();
    let dropped: u64 = dropped(host).values().sum();
    let offered = emitted.offered(seen.len());
    let rates: Vec<f64> = seen
        .values()
        .map(|r| r.n as f64 / (r.last_us.saturating_sub(t0_us).max(1) as f64 / 1e6))
        .collect();
    EventsRun {
        received,
        dropped,
        unaccounted: offered as i64 - (received + dropped) as i64,
        receive_rate: rates.iter().sum::<f64>() / rates.len().max(1) as f64,
        ..emitted
    }
}

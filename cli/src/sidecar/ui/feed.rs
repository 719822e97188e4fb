//! What the console shows as it happens: every answered event (the
//! decision, the hook that made it, each hook's step and time) and each
//! hook's latency over the last minutes. Fed by the host's observer and by
//! the HTTP routes once an answer is made; read by the page's event
//! stream (`stream.rs`) and `GET /ui/api/latency`.
//!
//! Everything here is bounded: the last [`KEEP`] decisions, the last
//! [`BUCKETS`] ten-second buckets per hook with at most [`SAMPLES`]
//! samples each, and a subscriber that falls [`LAG`] behind skips ahead.

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use hookhost::{AnsweredEvent, HookCall, Observer};
use serde_json::{Value, json};
use tokio::sync::broadcast;

/// Decisions kept for a page that opens now.
pub(crate) const KEEP: usize = 500;
/// Decisions a subscriber may fall behind before it skips ahead.
const LAG: usize = 1024;
/// A latency bucket's width, in seconds.
const BUCKET_S: u64 = 10;
/// Buckets kept per hook: ten minutes.
const BUCKETS: usize = 60;
/// Samples kept per bucket (the rest are counted, not kept).
const SAMPLES: usize = 2048;
/// Steps noted per answered event.
const STEPS: usize = 64;

tokio::task_local! {
    /// The steps of the event being answered on this task: the observer
    /// is called on the caller's task (`hookhost::Observer`'s contract),
    /// so the route that answers an event collects its own steps here.
    static STEPS_SEEN: RefCell<Vec<Value>>;
}

/// Runs `answer` noting each hook's step; the answer and the steps.
pub(crate) async fn with_steps<T>(answer: impl Future<Output = T>) -> (T, Vec<Value>) {
    // Boxed: the chain's future is deep, and the scope would nest it once
    // more inside every connection's.
    let answer = Box::pin(answer);
    STEPS_SEEN
        .scope(RefCell::new(Vec::new()), async {
            let out = answer.await;
            let steps = STEPS_SEEN.with(|s| std::mem::take(&mut *s.borrow_mut()));
            (out, steps)
        })
        .await
}

/// A decision's number and its JSON line.
type Numbered = (u64, String);

/// One hook's latency bucket.
#[derive(Default)]
struct Bucket {
    start: u64,
    calls: u64,
    micros: Vec<u32>,
}

/// The console's live figures.
pub(crate) struct Feed {
    seq: AtomicU64,
    recent: Mutex<VecDeque<Numbered>>,
    tx: broadcast::Sender<Numbered>,
    latency: Mutex<BTreeMap<String, VecDeque<Bucket>>>,
}

fn now_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Feed {
    pub(crate) fn new() -> Feed {
        Feed {
            seq: AtomicU64::new(0),
            recent: Mutex::new(VecDeque::with_capacity(KEEP)),
            tx: broadcast::channel(LAG).0,
            latency: Mutex::new(BTreeMap::new()),
        }
    }

    /// Adds one answered event: numbered, kept, sent to every page.
    pub(crate) fn publish(&self, mut item: Value) {
        let id = self.seq.fetch_add(1, Ordering::Relaxed) + 1;
        item["id"] = id.into();
        let line = item.to_string();
        let mut recent = self.recent.lock().unwrap_or_else(|p| p.into_inner());
        if recent.len() == KEEP {
            recent.pop_front();
        }
        recent.push_back((id, line.clone()));
        // Sent under the lock, so a page that subscribes now gets each
        // item once: in the backlog or from the channel.
        let _ = self.tx.send((id, line));
    }

    /// The kept decisions and the channel of those to come.
    pub(crate) fn subscribe(&self) -> (Vec<Numbered>, broadcast::Receiver<Numbered>) {
        let recent = self.recent.lock().unwrap_or_else(|p| p.into_inner());
        (recent.iter().cloned().collect(), self.tx.subscribe())
    }

    fn note_latency(&self, hook: &str, micros: u32) {
        let now = now_s();
        let start = now - now % BUCKET_S;
        let mut all = self.latency.lock().unwrap_or_else(|p| p.into_inner());
        let buckets = all.entry(hook.to_string()).or_default();
        if buckets.back().is_none_or(|b| b.start != start) {
            if buckets.len() == BUCKETS {
                buckets.pop_front();
            }
            buckets.push_back(Bucket {
                start,
                ..Bucket::default()
            });
        }
        if let Some(b) = buckets.back_mut() {
            b.calls += 1;
            if b.micros.len() < SAMPLES {
                b.micros.push(micros);
            }
        }
    }

    /// Per hook, its buckets of the last ten minutes: start (unix s),
    /// calls, p50 and p99 (ms).
    pub(crate) fn latency(&self) -> Value {
        let oldest = now_s().saturating_sub(BUCKET_S * BUCKETS as u64);
        let all = self.latency.lock().unwrap_or_else(|p| p.into_inner());
        let hooks: serde_json::Map<String, Value> = all
            .iter()
            .map(|(hook, buckets)| {
                let rows: Vec<Value> = buckets
                    .iter()
                    .filter(|b| b.start >= oldest)
                    .map(|b| {
                        let (p50, p99) = percentiles(&b.micros);
                        json!([b.start, b.calls, p50, p99])
                    })
                    .collect();
                (hook.clone(), Value::Array(rows))
            })
            .collect();
        json!({"bucket_s": BUCKET_S, "hooks": hooks})
    }
}

/// The median and the 99th percentile of `micros`, in milliseconds.
fn percentiles(micros: &[u32]) -> (f64, f64) {
    if micros.is_empty() {
        return (0.0, 0.0);
    }
    let mut sorted = micros.to_vec();
    sorted.sort_unstable();
    let at = |q: f64| {
        let i = ((sorted.len() - 1) as f64 * q).round() as usize;
        f64::from(sorted[i.min(sorted.len() - 1)]) / 1000.0
    };
    (at(0.5), at(0.99))
}

/// The host's observer for the console: latency per hook, and each step
/// of the event being answered on this task.
pub(crate) struct Watch(pub(crate) std::sync::Arc<Feed>);

impl Observer for Watch {
    fn hook_called(&self, call: &HookCall<'_>) {
        let micros = u32::try_from(call.elapsed.as_micros()).unwrap_or(u32::MAX);
        if call.called {
            self.0.note_latency(call.hook, micros);
        }
        let step = json!({
            "hook": call.hook,
            "stage": call.stage.as_str(),
            "outcome": call.outcome,
            "ms": f64::from(micros) / 1000.0,
            "called": call.called,
            "failed": call.failed,
        });
        let _ = STEPS_SEEN.try_with(|s| {
            let mut s = s.borrow_mut();
            if s.len() < STEPS {
                s.push(step);
            }
        });
    }

    fn event_answered(&self, _: &AnsweredEvent<'_>) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_opening_now_gets_the_last_decisions_then_the_new_ones() {
        let feed = Feed::new();
        for i in 0..KEEP + 3 {
            feed.publish(json!({"n": i}));
        }
        let (kept, mut rx) = feed.subscribe();
        assert_eq!(kept.len(), KEEP);
        assert_eq!(kept[0].0, 4, "the oldest went first");
        feed.publish(json!({"n": "new"}));
        let (id, line) = rx.try_recv().unwrap();
        assert_eq!(id, KEEP as u64 + 4);
        assert!(line.contains("\"new\""), "{line}");
    }

    #[test]
    fn percentiles_of_a_bucket() {
        let micros: Vec<u32> = (1..=100).map(|i| i * 1000).collect();
        assert_eq!(percentiles(&micros), (51.0, 99.0));
        assert_eq!(percentiles(&[]), (0.0, 0.0));
    }
}

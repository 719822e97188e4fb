//! A Rust SDK observer for the scaling section's runtime events: counts
//! the events it receives and says how many in its answer to before_tool,
//! as `additional_context`: `received N first_us F last_us L`, the wall
//! clock (µs since the Unix epoch) of the first and the latest event. The
//! host counts what it dropped; this counts what arrived.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use hookhost_sdk::params::ToolCall;
use hookhost_sdk::{Hook, RuntimeEvent, Stage, ToolVerdict};

/// What has arrived so far.
#[derive(Default)]
struct Counter {
    received: AtomicU64,
    first_us: AtomicU64,
    last_us: AtomicU64,
}

fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

impl Hook for Counter {
    fn intercepts(&self) -> Vec<Stage> {
        vec![Stage::BeforeTool]
    }

    fn observes(&self) -> Vec<String> {
        vec!["agent.*".into()]
    }

    async fn on_event(&self, _event: RuntimeEvent) {
        let now = now_us();
        let _ = self
            .first_us
            .compare_exchange(0, now, Ordering::Relaxed, Ordering::Relaxed);
        self.last_us.store(now, Ordering::Relaxed);
        self.received.fetch_add(1, Ordering::Relaxed);
    }

    async fn before_tool(&self, _call: ToolCall) -> ToolVerdict {
        let n = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let text = format!(
            "received {} first_us {} last_us {}",
            n(&self.received),
            n(&self.first_us),
            n(&self.last_us)
        );
        ToolVerdict::Continue.with_context(text)
    }
}

fn main() -> std::io::Result<()> {
    hookhost_sdk::run(Counter::default())
}

//! Runtime events on their way to the peers that observe them: encoded
//! once per emit ([`Event`]), queued per peer without waiting
//! ([`crate::supervise::peer::Peer::offer_event`]), and handed on in
//! order by one forwarder task per peer ([`forward_events`]), whatever
//! carries the peer.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use hookhost_protocol::event::RuntimeEvent;
use hookhost_protocol::stage::method;
use tokio::sync::{mpsc, watch};

use crate::error::CallError;
use crate::policy::deadline::Deadline;
use crate::supervise::keep_alive::stopping;
use crate::supervise::peer::{Link, Peer};

/// What precedes the params in an event's line.
const PREFIX: &str = r#"{"jsonrpc":"2.0","method":""#;

/// One runtime event as a `hook.event` notification line (no newline),
/// encoded once for every peer: a process takes the line as it is, a
/// WebSocket remote takes the params inside it.
#[derive(Clone, Debug)]
pub(crate) struct Event {
    line: Arc<[u8]>,
    /// Where the params start in `line` (they end before its last byte).
    params_at: usize,
}

impl Event {
    /// Encodes `event` as a notification.
    pub(crate) fn encode(event: &RuntimeEvent) -> Result<Event, serde_json::Error> {
        let mut line = Vec::with_capacity(256);
        line.extend_from_slice(PREFIX.as_bytes());
        line.extend_from_slice(method::RUNTIME_EVENT.as_bytes());
        line.extend_from_slice(b"\",\"params\":");
        let params_at = line.len();
        serde_json::to_writer(&mut line, event)?;
        line.push(b'}');
        Ok(Event {
            line: line.into(),
            params_at,
        })
    }

    /// The whole line.
    pub(crate) fn line(&self) -> &Arc<[u8]> {
        &self.line
    }

    /// The params as JSON text.
    #[cfg_attr(not(feature = "remote"), allow(dead_code))]
    pub(crate) fn params(&self) -> &str {
        let end = self.line.len().saturating_sub(1);
        // serde_json wrote UTF-8, and the cut is at ASCII bytes.
        std::str::from_utf8(self.line.get(self.params_at..end).unwrap_or_default())
            .unwrap_or("null")
    }
}

/// Counts a dropped event; logs the first and then every hundredth, so
/// that a flood of drops cannot turn into a flood of log lines.
pub(crate) fn note_dropped(peer: &Peer, why: &str) {
    let n = peer.stats.dropped_events.fetch_add(1, Ordering::Relaxed) + 1;
    if n == 1 || n.is_multiple_of(100) {
        tracing::warn!(hook = %peer.name, dropped_total = n, "dropped a runtime event: {why}");
    }
}

/// Hands queued events to the peer in order, each within the observer
/// timeout. At shutdown it first hands on what is still queued (spec
/// section 11: an event emitted before shutdown is delivered, or counted
/// and logged as lost), says so (the peer's stdin or connection is closed
/// only then), and ends.
pub(crate) async fn forward_events(
    peer: Arc<Peer>,
    mut rx: mpsc::Receiver<Event>,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        let event = tokio::select! {
            e = rx.recv() => match e { Some(e) => e, None => break },
            _ = stopping(&mut shutdown) => break,
        };
        deliver_or_count(&peer, event).await;
    }
    // Later emits fail at once (and are counted); what is queued is read.
    rx.close();
    let mut lost = 0u64;
    while let Some(event) = rx.recv().await {
        if !deliver_or_count(&peer, event).await {
            lost += 1;
        }
    }
    if lost > 0 {
        tracing::warn!(hook = %peer.name, lost, "{lost} runtime events emitted before shutdown were not delivered");
    }
    peer.events_forwarded_now();
}

/// Hands one event on within the observer timeout; counts and logs it as
/// dropped when that fails. Whether it was handed on.
async fn deliver_or_count(peer: &Peer, event: Event) -> bool {
    let budget = Duration::from_millis(peer.defaults.observer_timeout_ms);
    let sent = deliver(peer, event, Deadline::after(budget)).await;
    let Err(e) = sent else { return true };
    let why = match e {
        CallError::Timeout(_) => format!(
            "the hook did not take it within observer_timeout_ms ({} ms)",
            budget.as_millis()
        ),
        other => other.to_string(),
    };
    note_dropped(peer, &why);
    false
}

/// Hands one event to the peer once it is ready, at most until `deadline`.
async fn deliver(peer: &Peer, event: Event, deadline: Deadline) -> Result<(), CallError> {
    match peer.ready(deadline).await? {
        Link::Pipe(conn) => conn.notify_line(event.line().clone(), deadline.at()).await,
        #[cfg(feature = "remote")]
        Link::Remote(client) => {
            crate::supervise::remote::notify(&client, event.params(), deadline).await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_one_notification_line_with_its_params_inside() {
        let event: RuntimeEvent = serde_json::from_value(serde_json::json!({
            "id": "e1", "kind": "tool.started", "time": "2026-01-01T00:00:00Z",
            "payload": {"text": "a \"quoted\" é"}
        }))
        .unwrap();
        let encoded = Event::encode(&event).unwrap();
        let line: serde_json::Value = serde_json::from_slice(encoded.line()).unwrap();
        assert_eq!(line["method"], method::RUNTIME_EVENT);
        assert_eq!(line["jsonrpc"], "2.0");
        let params: serde_json::Value = serde_json::from_str(encoded.params()).unwrap();
        assert_eq!(params, serde_json::to_value(&event).unwrap());
        assert_eq!(line["params"], params);
    }
}

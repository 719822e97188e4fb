//! The host takes one observer; the sidecar has more than one part that
//! watches (the `/metrics` counts, the console's feed). [`Fanout`] hands
//! each step and each answer to every one of them, in order.

use std::sync::Arc;

use hookhost::{AnsweredEvent, HookCall, Observer};

/// Observers called one after the other.
pub(crate) struct Fanout(Vec<Arc<dyn Observer>>);

impl Fanout {
    /// One observer that calls each of `all`.
    pub(crate) fn of(all: Vec<Arc<dyn Observer>>) -> Arc<dyn Observer> {
        Arc::new(Fanout(all))
    }
}

impl Observer for Fanout {
    fn hook_called(&self, call: &HookCall<'_>) {
        for o in &self.0 {
            o.hook_called(call);
        }
    }

    fn event_answered(&self, event: &AnsweredEvent<'_>) {
        for o in &self.0 {
            o.event_answered(event);
        }
    }
}

//! What a model-backed hook spent on one call, returned with the call's
//! reply ([`Answer`]) from the evaluator deep inside the member up to the
//! call's record, which gives it to the audit log. Every other kind of
//! hook spends nothing, and its answer says so (`usage: None`).

use serde_json::Value;

use crate::error::CallError;

/// One call's model figures, as the audit log writes them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ModelUsage {
    /// The model asked.
    pub model: String,
    /// Prompt tokens spent.
    pub tokens_in: u64,
    /// Answer tokens spent.
    pub tokens_out: u64,
    /// Answered from the cache: nothing was spent.
    pub cached: bool,
}

/// A call's reply, or why there is none, with what the model spent on
/// it: spent tokens are counted whether or not the answer was usable.
#[derive(Debug)]
pub(crate) struct Answer<T = Value> {
    /// The reply, or how the call failed.
    pub(crate) reply: Result<T, CallError>,
    /// What a prompt hook's model spent; `None` for every other hook, and
    /// for a prompt hook that asked no model.
    pub(crate) usage: Option<ModelUsage>,
}

impl<T> From<Result<T, CallError>> for Answer<T> {
    /// The answer of a call that asked no model.
    fn from(reply: Result<T, CallError>) -> Answer<T> {
        Answer { reply, usage: None }
    }
}

//! What a model-backed hook spent on one call, carried from the evaluator
//! deep inside the member to the call's record without widening every
//! member's return type: the record opens a task-local slot around the
//! call ([`collect`]), the evaluator [`note`]s into it. Outside a slot
//! (a member called directly, in a test) a note is dropped.

use std::cell::RefCell;
use std::future::Future;

tokio::task_local! {
    static SLOT: RefCell<Option<ModelUsage>>;
}

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

/// Adds `usage` to the current call's slot: a group of hooks sums its
/// members' tokens; `cached` stays true only if every evaluation was.
#[cfg_attr(not(feature = "remote"), allow(dead_code))]
pub(crate) fn note(usage: ModelUsage) {
    let _ = SLOT.try_with(|slot| {
        let mut slot = slot.borrow_mut();
        match slot.as_mut() {
            None => *slot = Some(usage),
            Some(sum) => {
                sum.tokens_in += usage.tokens_in;
                sum.tokens_out += usage.tokens_out;
                sum.cached &= usage.cached;
            }
        }
    });
}

/// Runs `call` with a fresh slot and returns what was noted in it.
pub(crate) async fn collect<F: Future>(call: F) -> (F::Output, Option<ModelUsage>) {
    SLOT.scope(RefCell::new(None), async {
        let out = call.await;
        let usage = SLOT.with(|s| s.borrow_mut().take());
        (out, usage)
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn notes_reach_only_their_own_call() {
        let one = |n| ModelUsage {
            model: "m".into(),
            tokens_in: n,
            tokens_out: 1,
            cached: false,
        };
        let ((), got) = collect(async {
            note(one(10));
            note(one(5))
        })
        .await;
        assert_eq!(got.map(|u| (u.tokens_in, u.tokens_out)), Some((15, 2)));
        let ((), got) = collect(async {}).await;
        assert_eq!(got, None, "a call that asked no model notes nothing");
        note(one(1)); // outside any call: dropped, not a panic
    }
}

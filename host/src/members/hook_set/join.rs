//! Runs a group's hooks at once on the caller's task: every future is
//! polled until all are done, and dropping the join drops them all (each
//! command kills its own process group then), so nothing outlives the call.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

/// Awaits every future; the outputs in the order given.
pub(super) async fn all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut pending: Vec<Option<Pin<Box<F>>>> =
        futures.into_iter().map(|f| Some(Box::pin(f))).collect();
    let mut outputs: Vec<Option<F::Output>> = pending.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut busy = false;
        for (slot, out) in pending.iter_mut().zip(outputs.iter_mut()) {
            let Some(f) = slot else { continue };
            match f.as_mut().poll(cx) {
                Poll::Ready(v) => {
                    *out = Some(v);
                    *slot = None;
                }
                Poll::Pending => busy = true,
            }
        }
        if busy { Poll::Pending } else { Poll::Ready(()) }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

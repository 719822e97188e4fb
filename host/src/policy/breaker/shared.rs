//! One breaker's state as a gateway's replicas share it, for the hooks
//! they all call alike (remote, webhook, prompt): when one replica's
//! breaker opens, it says so in the store (`hookhost:breaker:<hook>`, the
//! time it reopens, expiring with the cool-down) and the others open
//! theirs for what is left of it, rather than each finding the dead
//! endpoint again. A process hook's breaker stays its own: each replica
//! runs its own process.
//!
//! Admission never waits on the store: it reads the view last fetched,
//! and fetches it again off the call's path once it is [`REFRESH`] old.
//! A store that does not answer clears the view, so the hook is called:
//! calling a hook is never weaker than skipping it (a skip is answered
//! by the same `on_error` a failed call is).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::policy::shared::{self, StateStore};

/// How old the view of the store may get before it is fetched again.
pub(super) const REFRESH: Duration = Duration::from_secs(1);

/// A breaker's link to the store.
#[derive(Debug)]
pub(super) struct Shared {
    store: Arc<dyn StateStore>,
    key: String,
    view: Mutex<View>,
}

/// What the store last said.
#[derive(Debug, Default)]
struct View {
    /// When another replica's open breaker reopens.
    open_until: Option<SystemTime>,
    /// When it was last fetched.
    fetched: Option<Instant>,
    /// A fetch is on its way.
    fetching: bool,
}

fn millis(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis().min(u64::MAX as u128) as u64)
}

impl Shared {
    pub(super) fn new(hook: &str, store: Arc<dyn StateStore>) -> Shared {
        Shared {
            store,
            key: format!("hookhost:breaker:{}", shared::hook_part(hook)),
            view: Mutex::new(View::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, View> {
        self.view.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How long another replica's breaker stays open, as last fetched;
    /// fetches again, off the call's path, once the view is old.
    pub(super) fn open_for(self: &Arc<Self>) -> Option<Duration> {
        let mut view = self.lock();
        let stale = view.fetched.is_none_or(|t| t.elapsed() >= REFRESH);
        if stale && !view.fetching {
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                view.fetching = true;
                rt.spawn(self.clone().fetch());
            }
        }
        let until = view.open_until?;
        until.duration_since(SystemTime::now()).ok()
    }

    async fn fetch(self: Arc<Self>) {
        let read = self.store.text(&self.key).await;
        let until = match read {
            Ok(text) => text.and_then(|t| t.trim().parse::<u64>().ok()),
            Err(e) => {
                tracing::debug!(error = %e, "a shared breaker's state is unknown: its hook is called");
                None
            }
        };
        let mut view = self.lock();
        view.open_until = until.map(|ms| UNIX_EPOCH + Duration::from_millis(ms));
        view.fetched = Some(Instant::now());
        view.fetching = false;
    }

    /// Tells every replica that the breaker opened for `cooldown`.
    pub(super) fn opened(self: &Arc<Self>, cooldown: Duration) {
        let until = SystemTime::now() + cooldown;
        self.lock().open_until = Some(until);
        let text = millis(until).to_string();
        self.send(move |s| async move { s.store.put_text(&s.key, &text, cooldown).await });
    }

    /// Tells every replica that a trial call succeeded.
    pub(super) fn closed(self: &Arc<Self>) {
        self.lock().open_until = None;
        self.send(|s| async move { s.store.forget(&s.key).await });
    }

    /// Runs a write to the store off the call's path.
    fn send<F, Fut>(self: &Arc<Self>, write: F)
    where
        F: FnOnce(Arc<Shared>) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = Result<(), shared::StateError>> + Send,
    {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let me = self.clone();
        rt.spawn(async move {
            if let Err(e) = write(me).await {
                tracing::debug!(error = %e, "a breaker's state was not shared");
            }
        });
    }
}

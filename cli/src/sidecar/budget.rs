//! Bytes in flight. A request's text is charged while it is read, kept
//! while it runs, and given back once its answer is written, so memory is
//! bounded by bytes and not only by counts: 1024 requests of 16 MiB each
//! would otherwise be 16 GiB. Two pools: one per session, which an agent
//! waits on (backpressure: the sidecar stops reading it), and one shared by
//! every session, which is never waited on while a message is half read
//! (a session that cannot grow its charge has its message refused), so
//! sessions cannot deadlock holding parts of messages.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Bytes of requests one session may have in flight; past this the
/// sidecar stops reading that session until answers are written.
pub const SESSION_BYTES: usize = 64 * 1024 * 1024;

/// Bytes of requests every session together may have in flight, messages
/// being read included; a message that would pass it is refused.
pub const GLOBAL_BYTES: usize = 256 * 1024 * 1024;

/// A pool of bytes.
#[derive(Debug, Clone)]
pub(crate) struct Pool {
    free: Arc<Semaphore>,
    capacity: usize,
}

impl Pool {
    pub(crate) fn new(capacity: usize) -> Pool {
        Pool {
            free: Arc::new(Semaphore::new(capacity)),
            capacity,
        }
    }

    /// Takes `n` more bytes into `charge` if the pool has them now.
    pub(crate) fn try_grow(&self, charge: &mut Charge, n: usize) -> bool {
        if n == 0 {
            return true;
        }
        let Ok(n) = u32::try_from(n) else {
            return false;
        };
        match self.free.clone().try_acquire_many_owned(n) {
            Ok(permit) => {
                charge.add(permit);
                true
            }
            Err(_) => false,
        }
    }

    /// Waits until the pool has `n` bytes and takes them into `charge`.
    pub(crate) async fn grow(&self, charge: &mut Charge, n: usize) {
        // Never more than the pool holds, or the wait would never end.
        let n = u32::try_from(n.min(self.capacity)).unwrap_or(u32::MAX);
        if n == 0 {
            return;
        }
        if let Ok(permit) = self.free.clone().acquire_many_owned(n).await {
            charge.add(permit);
        }
    }

    /// Bytes free now (for tests and stats).
    #[cfg(test)]
    pub(crate) fn available(&self) -> usize {
        self.free.available_permits()
    }
}

/// Bytes held for one message, from both pools; dropped, they go back.
#[derive(Debug, Default)]
pub(crate) struct Charge(Vec<OwnedSemaphorePermit>);

impl Charge {
    fn add(&mut self, permit: OwnedSemaphorePermit) {
        self.0.push(permit);
    }

    /// Gives every byte back now.
    pub(crate) fn release(&mut self) {
        self.0.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_charge_gives_its_bytes_back_when_dropped() {
        let pool = Pool::new(100);
        let mut charge = Charge::default();
        assert!(pool.try_grow(&mut charge, 60));
        assert!(pool.try_grow(&mut charge, 40));
        assert!(!pool.try_grow(&mut charge, 1), "the pool is spent");
        assert_eq!(pool.available(), 0);
        drop(charge);
        assert_eq!(pool.available(), 100);
    }

    #[tokio::test]
    async fn grow_waits_for_bytes_another_charge_gives_back() {
        let pool = Pool::new(SESSION_BYTES);
        let mut first = Charge::default();
        pool.grow(&mut first, SESSION_BYTES).await;
        let waiter = {
            let pool = pool.clone();
            tokio::spawn(async move {
                let mut second = Charge::default();
                pool.grow(&mut second, 10).await;
                second
            })
        };
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert!(!waiter.is_finished(), "no bytes free: the second waits");
        first.release();
        let second = waiter.await.expect("the waiter ends");
        assert_eq!(pool.available(), SESSION_BYTES - 10);
        drop(second);
    }
}

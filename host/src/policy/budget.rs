//! The chain budget: one deadline for a whole stage, so that a chain of
//! slow hooks cannot hold the agent longer than `chain_budget_ms`, however
//! many hooks it has. Each call gets the earlier of the member's own
//! deadline and what is left of the budget; a member whose turn comes
//! after the budget is spent is not called, and its `on_error` policy
//! answers for it, as for any other failure.

use std::time::Duration;

use tokio::time::Instant;

use super::deadline::later;

/// Why a member was not called: the stage's budget ran out before its
/// turn. Shown to the caller as "skipped: the chain budget of N ms was
/// spent".
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the chain budget of {budget_ms} ms was spent")]
#[non_exhaustive]
pub struct BudgetSpent {
    /// The configured budget (`chain_budget_ms`).
    pub budget_ms: u64,
}

/// One stage run's budget, started when the run starts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChainBudget {
    deadline: Instant,
    budget_ms: u64,
}

impl ChainBudget {
    /// Starts a budget of `budget_ms` now. A budget too long to add to
    /// the clock never runs out.
    pub(crate) fn start(budget_ms: u64) -> ChainBudget {
        let deadline = later(Instant::now(), Duration::from_millis(budget_ms));
        ChainBudget {
            deadline,
            budget_ms,
        }
    }

    /// Whether a member may still be called at `now`.
    pub(crate) fn check(&self, now: Instant) -> Result<(), BudgetSpent> {
        if now >= self.deadline {
            return Err(BudgetSpent {
                budget_ms: self.budget_ms,
            });
        }
        Ok(())
    }

    /// The deadline of a call begun at `now` by a member whose own
    /// deadline is `timeout`: whichever comes first, its own or the
    /// chain's.
    pub(crate) fn deadline_for(&self, now: Instant, timeout: Duration) -> Instant {
        now.checked_add(timeout)
            .map_or(self.deadline, |own| own.min(self.deadline))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_call_gets_the_earlier_of_its_own_deadline_and_the_chains() {
        let budget = ChainBudget::start(1_000);
        let now = Instant::now();
        let short = budget.deadline_for(now, Duration::from_millis(10));
        assert_eq!(short, now + Duration::from_millis(10));
        let long = budget.deadline_for(now, Duration::from_secs(60));
        assert!(long <= now + Duration::from_millis(1_000));
        assert!(budget.check(now).is_ok());
    }

    #[tokio::test]
    async fn a_spent_budget_names_itself() {
        let budget = ChainBudget::start(0);
        let spent = budget.check(Instant::now()).unwrap_err();
        assert_eq!(spent.to_string(), "the chain budget of 0 ms was spent");
    }

    #[tokio::test]
    async fn a_budget_too_long_for_the_clock_never_runs_out() {
        let budget = ChainBudget::start(u64::MAX);
        assert!(budget.check(Instant::now()).is_ok());
        let now = Instant::now();
        let d = budget.deadline_for(now, Duration::from_millis(5));
        assert_eq!(d, now + Duration::from_millis(5));
    }
}

//! Floor 1, the per-call policies that decide: which calls a hook sees
//! ([`filter`]) and whether a failing hook is still called ([`breaker`]).
//! The chain driver applies them in the order it states.

pub(crate) mod breaker;
pub(crate) mod filter;

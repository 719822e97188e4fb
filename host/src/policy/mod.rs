//! Floor 1, the per-call policies that decide: which calls a hook sees
//! ([`filter`], with its `if` expressions in `cel` when that feature is
//! built) and whether a failing hook is still called ([`breaker`]). The
//! chain driver applies them in the order it states.

pub(crate) mod breaker;
#[cfg(feature = "cel")]
mod cel;
pub(crate) mod filter;

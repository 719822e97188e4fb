//! Floor 1, the per-call policies that decide: which calls a hook sees
//! ([`filter`], with who it is for in [`scope`] and its `if` expressions
//! in `cel` when that feature is built), whether a failing hook is still called ([`breaker`]) and how
//! long a stage's calls may take together ([`budget`]), when one call is
//! given up and how its timeout is worded ([`deadline`]), what a
//! sub-agent's failed quality gate means and how many retries it gets
//! ([`quality_gate`]), when blocked stops in a row are overridden
//! ([`stop_limit`]), how per-session state stays bounded
//! ([`session`]), and how those counts are shared by a gateway's replicas
//! ([`shared`]). The chain driver applies them in the order it states
//! (`chain/mod.rs`).

pub(crate) mod breaker;
pub(crate) mod budget;
#[cfg(feature = "cel")]
mod cel;
pub(crate) mod deadline;
pub(crate) mod filter;
#[cfg(feature = "cel")]
mod patterns;
pub(crate) mod quality_gate;
pub(crate) mod scope;
pub(crate) mod session;
pub(crate) mod shared;
pub(crate) mod stop_limit;

//! Floor 1, what the host tells about itself: per-hook figures
//! ([`stats`]), the audit log ([`audit`]), spans and step names
//! ([`trace`]), secret masking ([`redact`]), rate-limited warnings
//! ([`log_budget`]) and the embedder's own observer ([`observer`]). Off
//! the call path wherever a write could block.

pub(crate) mod audit;
pub(crate) mod chain;
pub(crate) mod decision;
pub(crate) mod log_budget;
pub(crate) mod observer;
pub(crate) mod redact;
pub(crate) mod stats;
pub(crate) mod trace;
pub(crate) mod usage;

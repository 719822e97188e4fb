//! Floor 1, the wire to a hook: JSON-RPC over lines to a process or a
//! pipe ([`connection`]) and spawning a hook process in its own group with
//! a clean environment ([`spawn`]). Nothing here knows about configs,
//! chains or policies.

pub(crate) mod connection;
pub(crate) mod spawn;

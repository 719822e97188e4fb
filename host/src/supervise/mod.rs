//! Floor 3, keeping persistent hooks alive: processes and remotes are
//! started, handshaken, restarted with backoff and stopped here.

pub(crate) mod declaration;
pub(crate) mod hook;
pub(crate) mod remote;
pub(crate) mod supervisor;

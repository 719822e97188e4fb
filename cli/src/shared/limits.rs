//! The descriptor limit. Every hook process holds pipes, every command
//! hook spawns with more, and every sidecar connection is a socket; at the
//! usual soft limit of 1024, a connection flood left command hooks unable
//! to spawn. The binary raises the soft limit to the hard one at start,
//! and `serve` sizes its connection cap from what it got.

/// Raises the soft `RLIMIT_NOFILE` to the hard limit, once, at start.
pub fn raise_nofile() {
    let Some(mut limit) = get() else { return };
    if limit.rlim_cur < limit.rlim_max {
        limit.rlim_cur = limit.rlim_max;
        // SAFETY: setrlimit reads the struct we pass; failure leaves the
        // limit as it was, which is only logged.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } != 0 {
            tracing::debug!(
                "cannot raise the descriptor limit: {}",
                std::io::Error::last_os_error()
            );
        }
    }
}

/// The soft descriptor limit now.
pub fn nofile() -> Option<u64> {
    get().map(|l| l.rlim_cur)
}

fn get() -> Option<libc::rlimit> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    (unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0).then_some(limit)
}

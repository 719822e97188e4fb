//! Waiting for the user to stop a subcommand (SIGINT, SIGTERM), so that it
//! stops its hooks before it exits.

/// Resolves when the process gets SIGINT or SIGTERM.
pub fn terminated() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{SignalKind, signal};
    // Registered now, not at the first poll: a SIGTERM that comes right
    // after `serve` printed its address must not meet the default action.
    let term = signal(SignalKind::terminate()).ok();
    let int = signal(SignalKind::interrupt()).ok();
    async move {
        let wait = |s: Option<tokio::signal::unix::Signal>| async move {
            match s {
                Some(mut s) => {
                    s.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            _ = wait(int) => {}
            _ = wait(term) => {}
        }
    }
}

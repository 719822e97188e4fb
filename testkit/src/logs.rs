//! What `tracing` writes during a test: for the tests that check what a
//! failure logs and how loudly (a secret kept out of the log, a failure
//! under `on_error = "ignore"` kept at debug level, a docker-agent hook's
//! warnings).

use std::cell::RefCell;

thread_local! {
    /// What `tracing` wrote on this thread since [`LogSink::start`].
    static THREAD_LOG: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Writes into this thread's [`THREAD_LOG`]. The tests that read the log
/// run on a current-thread runtime, so every task of their host logs
/// there; one global subscriber (set once) avoids the callsite-interest
/// races of per-thread default subscribers in a parallel test binary (a
/// scoped subscriber misses events another thread's test made the
/// callsite cache as uninteresting).
struct ThreadWriter;

impl std::io::Write for ThreadWriter {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        THREAD_LOG.with(|log| log.borrow_mut().extend_from_slice(b));
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// This thread's log, debug level included, from [`LogSink::start`] on.
/// A test binary that uses it must set no global subscriber of its own.
pub struct LogSink;

impl LogSink {
    /// Installs the global subscriber (once) and empties this thread's log.
    ///
    /// # Panics
    /// When the test binary has set another global subscriber.
    pub fn start() -> LogSink {
        static INSTALLED: std::sync::Once = std::sync::Once::new();
        INSTALLED.call_once(|| {
            let subscriber = tracing_subscriber::fmt()
                .with_writer(|| ThreadWriter)
                .with_ansi(false)
                .with_max_level(tracing::Level::DEBUG)
                .finish();
            tracing::subscriber::set_global_default(subscriber).expect("one subscriber");
        });
        THREAD_LOG.with(|log| log.borrow_mut().clear());
        LogSink
    }

    /// All that was written on this thread since [`LogSink::start`].
    pub fn text(&self) -> String {
        THREAD_LOG.with(|log| String::from_utf8_lossy(&log.borrow()).into_owned())
    }

    /// The lines that mention `text`, each with its level (` WARN `,
    /// ` DEBUG `).
    pub fn lines(&self, text: &str) -> Vec<String> {
        self.text()
            .lines()
            .filter(|l| l.contains(text))
            .map(String::from)
            .collect()
    }

    /// The lines logged at warn level or above.
    pub fn warnings(&self) -> Vec<String> {
        self.text()
            .lines()
            .filter(|l| l.contains(" WARN ") || l.contains(" ERROR "))
            .map(String::from)
            .collect()
    }
}

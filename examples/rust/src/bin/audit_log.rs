//! audit_log: appends every `agent.*` runtime event to a JSON Lines file.
//!
//! A pure observer: it intercepts no stage, so it can never slow or change
//! the agent. The file is `AUDIT_LOG_FILE`; each event's params object is
//! one line, written and flushed on its own so a crash loses at most the
//! event being written. With the variable unset it warns once and does
//! nothing.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::sync::Mutex;

use hookhost_sdk::{Hook, RuntimeEvent, Stage};

struct AuditLog {
    path: Option<String>,
    /// Opened on the first event, so a hook that never sees one creates no file.
    file: Mutex<Option<File>>,
}

impl Hook for AuditLog {
    fn intercepts(&self) -> Vec<Stage> {
        Vec::new()
    }

    fn observes(&self) -> Vec<String> {
        vec!["agent.*".into()]
    }

    fn name(&self) -> Option<String> {
        Some("audit_log".into())
    }

    async fn on_event(&self, event: RuntimeEvent) {
        let Some(path) = &self.path else {
            return;
        };
        let mut line = match serde_json::to_vec(&event) {
            Ok(line) => line,
            Err(e) => {
                eprintln!("audit_log: cannot encode event {}: {e}", event.id);
                return;
            }
        };
        line.push(b'\n');
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if file.is_none() {
            match OpenOptions::new().create(true).append(true).open(path) {
                Ok(f) => *file = Some(f),
                Err(e) => {
                    eprintln!("audit_log: cannot open {path}: {e}");
                    return;
                }
            }
        }
        if let Some(f) = file.as_mut()
            && let Err(e) = f.write_all(&line).and_then(|()| f.flush())
        {
            eprintln!("audit_log: cannot write to {path}: {e}");
        }
    }
}

fn main() -> std::io::Result<()> {
    let path = std::env::var("AUDIT_LOG_FILE")
        .ok()
        .filter(|p| !p.is_empty());
    if path.is_none() {
        eprintln!("audit_log: AUDIT_LOG_FILE is not set; events will not be recorded");
    }
    hookhost_sdk::run(AuditLog {
        path,
        file: Mutex::new(None),
    })
}

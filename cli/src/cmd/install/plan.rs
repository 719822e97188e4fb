//! The changes of one install or uninstall, shown (`--dry-run`) or made
//! in order, each file backed up first; if a later step fails, the files
//! already written are put back, so a failed run leaves nothing half done.

use std::path::{Path, PathBuf};

use super::file::{self, Doc};

/// One file's change.
pub(super) struct Step {
    pub(super) path: PathBuf,
    pub(super) before: Option<String>,
    /// The new text; `None` removes the file.
    pub(super) after: Option<String>,
    /// What was done, for the line printed about it.
    pub(super) note: String,
    /// Load the file as a hookhost config once written (it must still
    /// load, or the run is undone).
    pub(super) check_config: bool,
    /// The new file's mode, from its creation on (`None`: the old file's,
    /// or the default); 0600 when it holds a secret.
    pub(super) mode: Option<u32>,
}

impl Step {
    /// A JSON file's change, as `doc` now stands.
    pub(super) fn of(doc: &Doc, note: String) -> Step {
        Step {
            path: doc.path.clone(),
            before: doc.before.clone(),
            after: Some(doc.render()),
            note,
            check_config: false,
            mode: None,
        }
    }
}

/// Prints each step's diff, writing nothing.
pub(super) fn show(steps: &[Step]) {
    for s in steps {
        out!(
            "{}",
            file::diff(&s.path, s.before.as_deref(), s.after.as_deref())
        );
    }
}

/// Makes the steps in order and prints a line for each. On an error the
/// steps already made are undone, and the error names what failed.
pub(super) fn apply(steps: &[Step]) -> Result<(), String> {
    let mut done: Vec<(&Path, Option<PathBuf>)> = Vec::new();
    let mut lines = Vec::new();
    for s in steps {
        match make(s) {
            Ok(backup) => {
                let saved = backup
                    .as_ref()
                    .map(|b| format!(" (backup: {})", b.display()))
                    .unwrap_or_default();
                lines.push(format!("{}: {}{saved}", s.path.display(), s.note));
                done.push((&s.path, backup));
            }
            Err(e) => {
                undo(&done);
                return Err(if done.is_empty() {
                    e
                } else {
                    format!("{e}; the files written before were restored")
                });
            }
        }
    }
    for line in lines {
        outln!("{line}");
    }
    Ok(())
}

/// One step: back up, write or remove, check.
fn make(s: &Step) -> Result<Option<PathBuf>, String> {
    let backup = match s.before {
        Some(_) => Some(file::backup(&s.path)?),
        None => None,
    };
    let written = match &s.after {
        Some(text) => file::write(&s.path, text, s.mode),
        None => file::remove(&s.path),
    };
    let checked = written.and_then(|()| match s.check_config {
        true => hookhost::Config::load(&s.path)
            .map(drop)
            .map_err(|e| format!("the config would not load: {e}")),
        false => Ok(()),
    });
    if let Err(e) = checked {
        undo(&[(&s.path, backup)]);
        return Err(e);
    }
    Ok(backup)
}

/// Puts files back as their backups had them (removing those that did not
/// exist), newest first.
fn undo(done: &[(&Path, Option<PathBuf>)]) {
    for (path, backup) in done.iter().rev() {
        let restored = match backup {
            Some(b) => std::fs::copy(b, path).map(drop),
            None => std::fs::remove_file(path),
        };
        if let Err(e) = restored {
            eprintln!("hookhost: could not restore {}: {e}", path.display());
        }
    }
}

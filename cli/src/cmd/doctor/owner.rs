//! Whether a managed file is the admin's alone: it and every folder from
//! the root down to it owned by root and not writable by group or others.
//! Otherwise another user can rewrite the managed tier, and Gemini CLI
//! 0.61 skips such a system settings file altogether ("Parent directory
//! ... is insecure").

use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Why `file` (under `root`, which stands for `/`) is not the admin's
/// alone; `None` when it is, or does not exist.
pub(super) fn not_admins(root: &Path, file: &Path) -> Option<String> {
    let rest = file.strip_prefix(root).ok()?;
    let mut at = root.to_path_buf();
    let mut paths = vec![at.clone()];
    for part in rest.components() {
        at.push(part);
        paths.push(at.clone());
    }
    for path in paths {
        let Ok(meta) = std::fs::metadata(&path) else {
            return None;
        };
        if meta.uid() != 0 {
            return Some(format!(
                "{} is owned by uid {}, who can rewrite the managed settings",
                path.display(),
                meta.uid()
            ));
        }
        if meta.mode() & 0o022 != 0 {
            return Some(format!(
                "{} is writable by group or others (mode {:o}): they can rewrite the managed \
                 settings, and Gemini CLI skips a system settings file below such a folder",
                path.display(),
                meta.mode() & 0o7777
            ));
        }
    }
    None
}

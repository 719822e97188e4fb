//! The demo's hooks and config, built into the binary (see `cli/build.rs`)
//! and written to a fresh folder when the demo runs, so that `hookhost demo`
//! works wherever the binary was installed from, with no repository beside it.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Each file of the demo: its path relative to the config's folder, and
/// its content.
const FILES: &[(&str, &[u8])] = include!(concat!(env!("OUT_DIR"), "/demo_files.rs"));

/// A folder holding the demo's files, removed with everything in it
/// (the hooks' `__pycache__` too) when dropped.
pub struct DemoDir {
    path: PathBuf,
}

impl DemoDir {
    /// Writes the demo's files into a new folder under the system's
    /// temporary folder: created here (never one that already exists,
    /// which someone else could have prepared), mode 0700, each file
    /// created anew.
    pub fn unpack() -> Result<DemoDir, String> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let name = format!("hookhost-demo-{}-{nanos}", std::process::id());
        let path = std::env::temp_dir().join(name);
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        let dir = DemoDir { path };
        for (rel, content) in FILES {
            write_new(&dir.path, rel, content)?;
        }
        Ok(dir)
    }

    /// The demo's config, `hooks.toml`, whose hook paths are relative to it.
    pub fn config(&self) -> PathBuf {
        self.path.join("hooks.toml")
    }
}

impl Drop for DemoDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Writes one file of the demo under `root`, creating its folders.
fn write_new(root: &Path, rel: &str, content: &[u8]) -> Result<(), String> {
    let path = root.join(rel);
    let failed = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    if let Some(parent) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(failed)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .map_err(failed)?;
    file.write_all(content).map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unpacks_the_config_hooks_and_sdk_and_removes_them_after() {
        let dir = DemoDir::unpack().expect("unpack");
        let root = dir.path.clone();
        for rel in ["hooks.toml", "approval_allowlist.toml", "python/guard.py"] {
            assert!(root.join(rel).is_file(), "{rel} missing");
        }
        assert!(root.join("python/hookhost_sdk/__init__.py").is_file());
        assert!(
            !FILES.iter().any(|(rel, _)| rel.contains("__pycache__")),
            "no bytecode is built in"
        );
        drop(dir);
        assert!(!root.exists(), "the folder outlived the demo");
    }
}

//! The gateway's policy on disk and in `status`: the private folder each
//! bundle is unpacked into (its own subfolder, `current` a link to the one
//! in force, replaced by rename so a reload never reads half a swap), and
//! the facts `GET /status` shows (source, digest, version, when last
//! checked and loaded, the last refusal).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use serde::Serialize;
use serde_json::Value;

use super::archive;
use super::signature::Signed;

/// What `status` says of the policy.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Status {
    /// Where bundles come from.
    pub source: String,
    /// The sha256 of the bundle in force.
    pub digest: Option<String>,
    /// Its signed version.
    pub version: Option<u64>,
    /// When it was loaded (RFC 3339).
    pub loaded: Option<String>,
    /// When the source was last checked.
    pub checked: Option<String>,
    /// Why the last bundle (or fetch) was refused, until one loads.
    pub error: Option<String>,
}

static STATUS: OnceLock<Mutex<Status>> = OnceLock::new();

/// The policy's part of `GET /status`: null when this process serves no
/// `--policy`.
pub fn status() -> Value {
    match STATUS.get() {
        Some(s) => {
            let s = s.lock().unwrap_or_else(|p| p.into_inner()).clone();
            serde_json::to_value(s).unwrap_or(Value::Null)
        }
        None => Value::Null,
    }
}

/// The last refusal recorded, if any.
pub fn error() -> Option<String> {
    let s = STATUS.get()?;
    s.lock().unwrap_or_else(|p| p.into_inner()).error.clone()
}

/// Changes the status (made by [`Root::create`]).
pub fn record(change: impl FnOnce(&mut Status)) {
    if let Some(s) = STATUS.get() {
        change(&mut s.lock().unwrap_or_else(|p| p.into_inner()));
    }
}

/// Now, in RFC 3339.
pub fn now() -> String {
    hookhost::protocol::time::rfc3339(std::time::SystemTime::now())
}

/// The private folder bundles are unpacked into, removed when dropped.
pub struct Root {
    path: PathBuf,
}

impl Root {
    /// A new folder of mode 0700 under the temporary folder, named by pid
    /// and random: created, never taken over.
    pub fn create(source: &str) -> Result<Root, String> {
        use std::os::unix::fs::DirBuilderExt;
        let random = crate::shared::paths::random_token().map_err(|e| e.to_string())?;
        let name = format!("hookhost-policy-{}-{}", std::process::id(), &random[..16]);
        let path = std::env::temp_dir().join(name);
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        let fresh = Status {
            source: source.to_string(),
            ..Status::default()
        };
        let _ = STATUS.set(Mutex::new(fresh));
        Ok(Root { path })
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The link to the bundle in force.
    pub fn current(&self) -> PathBuf {
        self.path.join("current")
    }

    /// Unpacks a verified bundle into a new subfolder named by its version
    /// and digest; its manifest must carry the signed version.
    pub fn unpack(&self, bundle: &[u8], signed: &Signed) -> Result<PathBuf, String> {
        let dir = self
            .path
            .join(format!("v{}-{}", signed.version, &signed.digest[..16]));
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        crate::shared::paths::ensure_private_dir(&dir).map_err(|e| e.to_string())?;
        let unpacked = archive::read(bundle, Some(&dir)).and_then(|m| {
            (m.version == signed.version).then_some(()).ok_or(format!(
                "the manifest's version {} is not the signed version {}",
                m.version, signed.version
            ))
        });
        if let Err(why) = unpacked {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(why);
        }
        Ok(dir)
    }

    /// Points `current` at `dir` (a new link renamed over the old one);
    /// where it pointed before.
    pub fn point_current(&self, dir: &Path) -> Result<Option<PathBuf>, String> {
        let before = std::fs::read_link(self.current()).ok();
        self.link_current(dir)?;
        Ok(before)
    }

    /// Points `current` back at `before`, or removes it.
    pub fn restore_current(&self, before: Option<&Path>) -> Result<(), String> {
        match before {
            Some(b) => self.link_current(b),
            None => std::fs::remove_file(self.current()).map_err(|e| e.to_string()),
        }
    }

    fn link_current(&self, dir: &Path) -> Result<(), String> {
        let tmp = self.path.join("current.new");
        let _ = std::fs::remove_file(&tmp);
        std::os::unix::fs::symlink(dir, &tmp)
            .and_then(|()| std::fs::rename(&tmp, self.current()))
            .map_err(|e| {
                format!(
                    "cannot point {} at {}: {e}",
                    self.current().display(),
                    dir.display()
                )
            })
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

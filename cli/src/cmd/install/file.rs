//! The files install touches: read and parse, render in the file's own
//! indentation, show as a diff, back up, write in one step.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// One JSON file: what it held and what it will hold.
pub(super) struct Doc {
    pub(super) path: PathBuf,
    /// The text before any change; `None` when the file does not exist.
    pub(super) before: Option<String>,
    /// Its top level, edited in place.
    pub(super) root: Map<String, Value>,
}

impl Doc {
    /// Reads `path`; a missing file is an empty object. A file that is not
    /// a JSON object is an error: install never rewrites what it cannot
    /// read, which would lose the user's settings.
    pub(super) fn load(path: &Path) -> Result<Doc, String> {
        let before = match std::fs::read_to_string(path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let root = match before.as_deref() {
            None => Map::new(),
            Some(text) if text.trim().is_empty() => Map::new(),
            Some(text) => match serde_json::from_str(text) {
                Ok(Value::Object(root)) => root,
                Ok(_) => return Err(format!("{}: not a JSON object", path.display())),
                Err(e) => {
                    return Err(format!(
                        "{} is not plain JSON ({e}); install edits only files it can \
                         read and write back whole (comments would be lost)",
                        path.display()
                    ));
                }
            },
        };
        Ok(Doc {
            path: path.to_path_buf(),
            before,
            root,
        })
    }

    /// The text the file will hold: pretty JSON in the file's own
    /// indentation (two spaces for a new file), ending in a newline.
    pub(super) fn render(&self) -> String {
        render(&self.root, self.before.as_deref())
    }

    /// Whether writing would change what the file says (formatting
    /// aside: a file install leaves alone is not rewritten).
    pub(super) fn changed(&self) -> bool {
        let before: Option<Value> = self
            .before
            .as_deref()
            .and_then(|t| serde_json::from_str(t).ok());
        let now = Value::Object(self.root.clone());
        // Compared as text, so a reordering counts.
        before.map(|b| b.to_string()) != Some(now.to_string())
    }
}

/// `root` as pretty JSON, indented as `like` is.
pub(super) fn render(root: &Map<String, Value>, like: Option<&str>) -> String {
    let indent = like.map_or_else(|| "  ".to_string(), indent_of);
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    // Serializing a map of JSON values into memory cannot fail.
    let _ = serde::Serialize::serialize(root, &mut ser);
    let mut text = String::from_utf8_lossy(&out).into_owned();
    text.push('\n');
    text
}

/// The indentation of the first indented line (two spaces if none).
fn indent_of(text: &str) -> String {
    text.lines()
        .map(|l| &l[..l.len() - l.trim_start().len()])
        .find(|ws| !ws.is_empty())
        .unwrap_or("  ")
        .to_string()
}

/// A unified diff from `before` to `after` (`None`: no file), headed by
/// the path.
pub(super) fn diff(path: &Path, before: Option<&str>, after: Option<&str>) -> String {
    let name = path.display().to_string();
    let (old, new) = (before.unwrap_or(""), after.unwrap_or(""));
    let old_name = if before.is_some() { &name } else { "/dev/null" };
    let new_name = if after.is_some() { &name } else { "/dev/null" };
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(old_name, new_name)
        .to_string()
}

/// Copies `path` to `<path>.hookhost-<unix seconds>.bak` (a suffix no
/// agent reads as settings: Copilot loads every `*.json` of its folder)
/// and returns the copy's path.
pub(super) fn backup(path: &Path) -> Result<PathBuf, String> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let name = path
        .file_name()
        .map_or_else(|| "settings".into(), |n| n.to_string_lossy().into_owned());
    let mut n = 0;
    let copy = loop {
        let suffix = if n == 0 {
            String::new()
        } else {
            format!("-{n}")
        };
        let candidate = path.with_file_name(format!("{name}.hookhost-{stamp}{suffix}.bak"));
        if !candidate.exists() {
            break candidate;
        }
        n += 1;
    };
    std::fs::copy(path, &copy).map_err(|e| {
        format!(
            "cannot back up {} to {}: {e}",
            path.display(),
            copy.display()
        )
    })?;
    Ok(copy)
}

/// Writes `text` to `path` in one step (a temporary file in the same
/// folder, renamed over it), so an agent reading the file never sees half
/// of it; creates the folders. The temporary file is created with its
/// final mode (`mode`, else the old file's, else 0644 less the umask):
/// a settings file holding a secret is never readable by others, not even
/// for a moment.
pub(super) fn write(path: &Path, text: &str, mode: Option<u32>) -> Result<(), String> {
    let fail = |what: &str, e: std::io::Error| format!("cannot {what} {}: {e}", path.display());
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| fail("create the folder of", e))?;
    let name = path
        .file_name()
        .map_or_else(|| "settings".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.hookhost-{}.tmp", std::process::id()));
    let old = std::fs::metadata(path)
        .ok()
        .map(|m| m.permissions().mode() & 0o7777);
    let mode = mode.or(old).unwrap_or(0o644);
    let _ = std::fs::remove_file(&tmp);
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp)?;
        // The umask may have narrowed it; never widened past `mode`.
        f.set_permissions(std::fs::Permissions::from_mode(mode))?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(fail("write", e));
    }
    Ok(())
}

/// Removes `path`.
pub(super) fn remove(path: &Path) -> Result<(), String> {
    std::fs::remove_file(path).map_err(|e| format!("cannot remove {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_in_the_files_own_indentation() {
        let root: Map<String, Value> = serde_json::from_str(r#"{"b": 1, "a": [2]}"#).unwrap();
        let four = "{\n    \"x\": 1\n}\n";
        assert_eq!(
            render(&root, Some(four)),
            "{\n    \"b\": 1,\n    \"a\": [\n        2\n    ]\n}\n"
        );
        assert_eq!(
            render(&root, None),
            "{\n  \"b\": 1,\n  \"a\": [\n    2\n  ]\n}\n"
        );
        let tabs = "{\n\t\"x\": 1\n}";
        assert!(render(&root, Some(tabs)).contains("\n\t\"b\""));
    }

    #[test]
    fn a_diff_names_the_file_and_shows_the_change() {
        let d = diff(Path::new("s.json"), Some("a\nb\n"), Some("a\nc\n"));
        assert!(d.contains("--- s.json\n+++ s.json\n"), "{d}");
        assert!(d.contains("-b\n+c\n"), "{d}");
        let new = diff(Path::new("s.json"), None, Some("x\n"));
        assert!(new.starts_with("--- /dev/null\n+++ s.json\n"), "{new}");
    }
}

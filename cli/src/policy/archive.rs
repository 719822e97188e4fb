//! The bundle archive (docs/src/bundles.md): a tar whose first entry is
//! `manifest.json` (format, version, per-file sha256), then the files it
//! lists, regular files only. Packing is deterministic (sorted names, no
//! owners, no times); reading checks every entry against the manifest and
//! refuses absolute paths, `..`, links, devices, duplicates, and archives
//! past [`MAX_BUNDLE_BYTES`] or [`MAX_ENTRIES`], before anything is written.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The manifest's name: always the archive's first entry.
pub const MANIFEST: &str = "manifest.json";
/// The config a bundle carries, at its root.
pub const CONFIG: &str = "hooks.toml";
/// The manifest's `format`: what readers of this version understand.
pub const FORMAT: &str = "hookhost-bundle/1";
/// The largest bundle fetched, read or unpacked: a policy is a config and
/// its scripts, and the cap bounds what a compromised server can make the
/// gateway hold or write.
pub const MAX_BUNDLE_BYTES: u64 = 64 * 1024 * 1024;
/// The most entries one bundle may have, the manifest included.
pub const MAX_ENTRIES: usize = 4096;

/// `manifest.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// [`FORMAT`].
    pub format: String,
    /// The bundle's version: a gateway never loads a lower one.
    pub version: u64,
    /// When it was built, in unix seconds.
    pub created: u64,
    /// Every file but the manifest: path (relative, `/`-separated) to its
    /// sha256 in lower-case hex.
    pub files: BTreeMap<String, String>,
}

/// The sha256 of `bytes`, in lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Packs `files` (relative to `dir`, each checked by the caller to be a
/// regular file under it) with a manifest of `version`.
pub fn pack(dir: &Path, files: &[String], version: u64, created: u64) -> Result<Vec<u8>, String> {
    let mut contents = BTreeMap::new();
    for name in files {
        let path = dir.join(name);
        let bytes =
            std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let exec = is_executable(&path);
        contents.insert(name.clone(), (bytes, exec));
    }
    let manifest = Manifest {
        format: FORMAT.into(),
        version,
        created,
        files: contents
            .iter()
            .map(|(n, (b, _))| (n.clone(), sha256_hex(b)))
            .collect(),
    };
    let text = serde_json::to_vec_pretty(&manifest).map_err(|e| e.to_string())?;
    let mut tar = tar::Builder::new(Vec::new());
    append(&mut tar, MANIFEST, &text, false)?;
    for (name, (bytes, exec)) in &contents {
        append(&mut tar, name, bytes, *exec)?;
    }
    tar.into_inner().map_err(|e| e.to_string())
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

fn append(
    tar: &mut tar::Builder<Vec<u8>>,
    name: &str,
    bytes: &[u8],
    exec: bool,
) -> Result<(), String> {
    let mut header = tar::Header::new_ustar();
    header.set_entry_type(tar::EntryType::Regular);
    header.set_size(bytes.len() as u64);
    header.set_mode(if exec { 0o755 } else { 0o644 });
    header.set_mtime(0);
    tar.append_data(&mut header, name, bytes)
        .map_err(|e| format!("cannot add {name}: {e}"))
}

/// Reads a bundle: checks every entry and, with `dest` (an empty private
/// folder), writes the files there. The manifest, or why the bundle is
/// refused.
pub fn read(bundle: &[u8], dest: Option<&Path>) -> Result<Manifest, String> {
    if bundle.len() as u64 > MAX_BUNDLE_BYTES {
        return Err(format!("larger than {MAX_BUNDLE_BYTES} bytes"));
    }
    let mut archive = tar::Archive::new(bundle);
    let entries = archive
        .entries()
        .map_err(|e| format!("not a tar archive: {e}"))?;
    let mut manifest: Option<Manifest> = None;
    let mut seen = BTreeMap::new();
    let mut count = 0usize;
    for entry in entries {
        let mut entry = entry.map_err(|e| format!("unreadable archive entry: {e}"))?;
        count += 1;
        if count > MAX_ENTRIES {
            return Err(format!("more than {MAX_ENTRIES} entries"));
        }
        let name = entry_name(&entry)?;
        let bytes = regular_contents(&mut entry, &name)?;
        let Some(m) = &manifest else {
            manifest = Some(first_manifest(&name, &bytes)?);
            continue;
        };
        check_listed(m, &name, &bytes)?;
        if seen.insert(name.clone(), ()).is_some() {
            return Err(format!("`{name}` is in the archive twice"));
        }
        if let Some(dest) = dest {
            write_file(dest, &name, &bytes, entry.header().mode().unwrap_or(0))?;
        }
    }
    let manifest = manifest.ok_or("empty archive: no manifest.json")?;
    if let Some(missing) = manifest.files.keys().find(|f| !seen.contains_key(*f)) {
        return Err(format!(
            "`{missing}` is in the manifest but not in the archive"
        ));
    }
    if !manifest.files.contains_key(CONFIG) {
        return Err(format!("no {CONFIG} in the bundle"));
    }
    Ok(manifest)
}

/// The entry's path as `/`-separated relative text: only plain names, no
/// root, `.` or `..`, valid UTF-8.
fn entry_name(entry: &tar::Entry<'_, &[u8]>) -> Result<String, String> {
    let raw = entry.path_bytes();
    let text = std::str::from_utf8(&raw).map_err(|_| "an entry's path is not UTF-8".to_string())?;
    let path = Path::new(text);
    let plain = !text.is_empty() && path.components().all(|c| matches!(c, Component::Normal(_)));
    if !plain || text.contains("//") || text.ends_with('/') {
        return Err(format!(
            "entry `{text}` is not a plain relative path (absolute paths, `.` and `..` are refused)"
        ));
    }
    Ok(text.to_string())
}

/// A regular file's bytes; any other kind of entry (link, device, fifo,
/// folder, global header) is refused.
fn regular_contents(entry: &mut tar::Entry<'_, &[u8]>, name: &str) -> Result<Vec<u8>, String> {
    let kind = entry.header().entry_type();
    if !kind.is_file() {
        return Err(format!(
            "entry `{name}` is a {kind:?}, not a regular file (links, devices and folders are refused)"
        ));
    }
    let size = entry.header().size().map_err(|e| e.to_string())?;
    if size > MAX_BUNDLE_BYTES {
        return Err(format!(
            "entry `{name}` is larger than {MAX_BUNDLE_BYTES} bytes"
        ));
    }
    // The header's size is claimed, not known: reserve little up front.
    let mut bytes = Vec::with_capacity(usize::try_from(size.min(1 << 20)).unwrap_or(0));
    entry
        .take(MAX_BUNDLE_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read `{name}`: {e}"))?;
    Ok(bytes)
}

fn first_manifest(name: &str, bytes: &[u8]) -> Result<Manifest, String> {
    if name != MANIFEST {
        return Err(format!("the first entry is `{name}`, not {MANIFEST}"));
    }
    let m: Manifest =
        serde_json::from_slice(bytes).map_err(|e| format!("{MANIFEST} is invalid: {e}"))?;
    if m.format != FORMAT {
        return Err(format!(
            "{MANIFEST}: format {:?} is not {FORMAT:?}",
            m.format
        ));
    }
    Ok(m)
}

fn check_listed(m: &Manifest, name: &str, bytes: &[u8]) -> Result<(), String> {
    let Some(want) = m.files.get(name) else {
        return Err(format!("`{name}` is not in the manifest"));
    };
    if *want != sha256_hex(bytes) {
        return Err(format!(
            "`{name}` does not match its sha256 in the manifest"
        ));
    }
    Ok(())
}

/// Writes one checked file under `dest`: folders 0700, the file new
/// (`O_EXCL | O_NOFOLLOW`), 0700 when the archive marks it executable,
/// else 0600.
fn write_file(dest: &Path, name: &str, bytes: &[u8], mode: u32) -> Result<(), String> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let path: PathBuf = dest.join(name);
    if let Some(parent) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    let mode = if mode & 0o111 != 0 { 0o700 } else { 0o600 };
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    file.write_all(bytes)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A tar whose entries are written raw (paths and kinds `pack` never
    /// writes), as an attacker's server would serve it.
    fn raw_tar(entries: &[(&str, tar::EntryType, &[u8])]) -> Vec<u8> {
        let mut tar = tar::Builder::new(Vec::new());
        for (name, kind, bytes) in entries {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(*kind);
            h.set_size(bytes.len() as u64);
            h.set_mode(0o644);
            // set_path refuses `..`: write the name field directly.
            let field = &mut h.as_old_mut().name;
            field[..name.len()].copy_from_slice(name.as_bytes());
            h.set_cksum();
            tar.append(&h, *bytes).unwrap();
        }
        tar.into_inner().unwrap()
    }

    fn manifest_for(files: &[(&str, &[u8])]) -> Vec<u8> {
        let m = Manifest {
            format: FORMAT.into(),
            version: 1,
            created: 0,
            files: files
                .iter()
                .map(|(n, b)| (n.to_string(), sha256_hex(b)))
                .collect(),
        };
        serde_json::to_vec(&m).unwrap()
    }

    #[test]
    fn traversal_absolute_links_and_devices_are_refused() {
        let reg = tar::EntryType::Regular;
        let (path, kind) = ("not a plain relative path", "not a regular file");
        for (name, entry, why) in [
            ("../evil", reg, path),
            ("a/../../evil", reg, path),
            ("/etc/evil", reg, path),
            ("./hooks.toml", reg, path),
            ("link", tar::EntryType::Symlink, kind),
            ("hard", tar::EntryType::Link, kind),
            ("dev", tar::EntryType::Char, kind),
            ("fifo", tar::EntryType::Fifo, kind),
            ("folder", tar::EntryType::Directory, kind),
        ] {
            let m = manifest_for(&[(CONFIG, b""), (name, b"x")]);
            let bundle = raw_tar(&[(MANIFEST, reg, &m), (CONFIG, reg, b""), (name, entry, b"x")]);
            let err = read(&bundle, None).unwrap_err();
            assert!(err.contains(name) && err.contains(why), "{name}: {err}");
        }
    }

    #[test]
    fn a_file_not_in_the_manifest_or_changed_is_refused() {
        let reg = tar::EntryType::Regular;
        let m = manifest_for(&[(CONFIG, b"a")]);
        let changed = raw_tar(&[(MANIFEST, reg, &m), (CONFIG, reg, b"b")]);
        assert!(read(&changed, None).unwrap_err().contains("sha256"));
        let extra = raw_tar(&[(MANIFEST, reg, &m), (CONFIG, reg, b"a"), ("x", reg, b"")]);
        assert!(
            read(&extra, None)
                .unwrap_err()
                .contains("not in the manifest")
        );
        let twice = raw_tar(&[
            (MANIFEST, reg, &m),
            (CONFIG, reg, b"a"),
            (CONFIG, reg, b"a"),
        ]);
        assert!(read(&twice, None).unwrap_err().contains("twice"));
    }
}

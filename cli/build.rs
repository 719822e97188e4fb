//! Builds the demo's file tree into the binary.
//!
//! `hookhost demo` runs the Python example hooks, and a `hookhost`
//! installed from the crate registry (or npm, or PyPI) has no repository
//! beside it. So every `.py` and `.toml` file under `demo/` is compiled in
//! (`$OUT_DIR/demo_files.rs`, a table of paths and contents) and written
//! to a fresh temporary folder when the demo runs.
//!
//! In the repository `demo/` holds links to the one copy of each file
//! (`examples/hooks.toml`, `examples/approval_allowlist.toml`, six hooks of
//! `examples/python/`, and `sdk-python/src/hookhost_sdk`); `cargo package`
//! stores what they point to, so the published crate carries real files.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let root =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo")).join("demo");
    let mut files = Vec::new();
    collect(&root, &root, &mut files);
    files.sort();
    assert!(
        files.iter().any(|(rel, _)| rel == "hooks.toml"),
        "{}: no hooks.toml; a checkout without symbolic links? (git config core.symlinks true)",
        root.display()
    );
    let mut out = String::from("&[\n");
    for (rel, path) in &files {
        println!("cargo::rerun-if-changed={}", path.display());
        let _ = writeln!(
            out,
            "    ({rel:?}, include_bytes!({:?})),",
            path.display().to_string()
        );
    }
    out.push_str("]\n");
    let dest =
        PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo")).join("demo_files.rs");
    std::fs::write(&dest, out).expect("write demo_files.rs");
    println!("cargo::rerun-if-changed={}", root.display());
}

/// Every `.py` and `.toml` file under `dir`, links followed, as its path
/// relative to `root` (with `/`) and its full path; `__pycache__` skipped.
fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf)>) {
    println!("cargo::rerun-if-changed={}", dir.display());
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("read demo/").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if path.is_dir() {
            if name != "__pycache__" {
                collect(root, &path, files);
            }
        } else if name.ends_with(".py") || name.ends_with(".toml") {
            let rel = path.strip_prefix(root).expect("under demo/");
            let rel: Vec<_> = rel.iter().map(|c| c.to_string_lossy()).collect();
            files.push((rel.join("/"), path));
        }
    }
}

//! Which files a bundle of a folder carries: its hooks.toml, the files the
//! config was read from (`[hooks.import]` settings files), every file its
//! hooks run that the config names (a process hook's or an argv command
//! hook's words that name a file, a shell command's words and a hook's
//! `env` values that name a file under the folder), and what `--include`
//! adds (files a hook reads that the config does not name, such as a
//! script's modules). A file named outside the folder is an error (a
//! bundle carries only the folder), as is a working folder outside it or
//! an absolute path into it (it would not point into the unpacked copy);
//! a bare program name (`python3`) is looked up on the gateway's PATH,
//! and an absolute program outside the folder (`/bin/sh`) is the
//! gateway's own.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use hookhost::{CommandConfig, Config, Runner, SetHook};

use super::archive::CONFIG;

/// The files to pack, relative to `dir` and `/`-separated: hooks.toml
/// first, then the rest sorted.
pub fn collect(dir: &Path, include: &[PathBuf]) -> Result<Vec<String>, String> {
    let dir = std::fs::canonicalize(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let config_path = dir.join(CONFIG);
    let config = Config::load(&config_path).map_err(|e| e.to_string())?;
    let mut found = Found {
        root: dir.clone(),
        files: BTreeSet::new(),
    };
    for source in &config.sources {
        found.named("the config", source, source, true)?;
    }
    for (name, p) in &config.processes {
        let (hook, at) = (format!("process hook `{name}`"), config.hook_dir(p));
        found.inside(&hook, &at)?;
        found.argv(&hook, &at, &p.command)?;
        found.env(&hook, &at, p.env.values())?;
    }
    for path in include {
        found.include(&dir.join(path))?;
    }
    for (name, c) in &config.commands {
        found.command(&format!("command hook `{name}`"), &config, c)?;
    }
    for (name, set) in &config.hook_sets {
        for entry in &set.entries {
            if let SetHook::Command(c) = &entry.hook {
                found.command(&format!("hook set `{name}`"), &config, c)?;
            }
        }
    }
    let mut files: Vec<String> = found.files.into_iter().filter(|f| f != CONFIG).collect();
    files.insert(0, CONFIG.to_string());
    Ok(files)
}

/// The files found so far under `root`.
struct Found {
    root: PathBuf,
    files: BTreeSet<String>,
}

impl Found {
    /// A working folder must be under the folder (the bundle cannot carry
    /// the one outside).
    fn inside(&self, hook: &str, at: &Path) -> Result<(), String> {
        let at = canonical(at);
        if at.starts_with(&self.root) {
            return Ok(());
        }
        Err(format!(
            "{hook} runs in {}, outside {}: a bundle carries only that folder",
            at.display(),
            self.root.display()
        ))
    }

    /// `env` values that name a file under the folder (an allow list a
    /// hook reads); any other value is left alone.
    fn env<'a>(
        &mut self,
        hook: &str,
        at: &Path,
        values: impl Iterator<Item = &'a String>,
    ) -> Result<(), String> {
        for value in values.filter(|v| !v.is_empty() && !v.starts_with('/')) {
            let path = at.join(value);
            if path.is_file() {
                self.named(hook, Path::new(value), &path, false)?;
            }
        }
        Ok(())
    }

    /// `--include PATH`: a file, or every file in a folder (links refused:
    /// a bundle carries files, never links).
    fn include(&mut self, path: &Path) -> Result<(), String> {
        let meta = std::fs::symlink_metadata(path)
            .map_err(|e| format!("--include {}: {e}", path.display()))?;
        if meta.file_type().is_symlink() {
            return Err(format!("--include {}: a link", path.display()));
        }
        if meta.is_file() {
            return self.named("--include", path, path, true);
        }
        let entries =
            std::fs::read_dir(path).map_err(|e| format!("--include {}: {e}", path.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("--include {}: {e}", path.display()))?;
            self.include(&entry.path())?;
        }
        Ok(())
    }

    fn command(&mut self, hook: &str, config: &Config, c: &CommandConfig) -> Result<(), String> {
        let at = config.command_dir(c);
        self.env(hook, &at, c.env.values())?;
        match c.runner() {
            Ok(Runner::Argv(argv)) => {
                self.inside(hook, &at)?;
                self.argv(hook, &at, argv)
            }
            Ok(Runner::Shell(text)) => {
                self.inside(hook, &at)?;
                let words = text.split(|c: char| c.is_whitespace() || ";|&<>()'\"`".contains(c));
                for word in words.filter(|w| !w.is_empty() && !w.starts_with('/')) {
                    let path = at.join(word);
                    if path.is_file() {
                        self.named(hook, Path::new(word), &path, true)?;
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// argv: the program and each argument that names a file. A bare
    /// program name is the gateway's PATH's, an absolute program outside
    /// the folder the gateway's own.
    fn argv(&mut self, hook: &str, at: &Path, argv: &[String]) -> Result<(), String> {
        for (i, word) in argv.iter().enumerate() {
            let path = at.join(word);
            let names_file = word.contains('/') || (i > 0 && path.is_file());
            if !names_file {
                continue;
            }
            let absolute = Path::new(word).is_absolute();
            if absolute && canonical(&path).starts_with(&self.root) {
                return Err(format!(
                    "{hook} names {word} by its absolute path: write it relative to {}, so it \
                     points into the bundle once unpacked",
                    self.root.display()
                ));
            }
            self.named(hook, Path::new(word), &path, !(i == 0 && absolute))?;
        }
        Ok(())
    }

    /// Takes `path` (as `word` was written) when it is a file under the
    /// folder; a file outside it is an error when `strict`.
    fn named(&mut self, hook: &str, word: &Path, path: &Path, strict: bool) -> Result<(), String> {
        let real = match std::fs::canonicalize(path) {
            Ok(r) => r,
            Err(_) if !path.exists() => return Ok(()),
            Err(e) => return Err(format!("{hook}: {}: {e}", path.display())),
        };
        match real.strip_prefix(&self.root) {
            Ok(rel) if real.is_file() => {
                let rel = rel
                    .to_str()
                    .ok_or_else(|| format!("{hook}: {} is not a UTF-8 path", real.display()))?;
                self.files.insert(rel.to_string());
                Ok(())
            }
            Ok(_) => Ok(()),
            Err(_) if !strict => Ok(()),
            Err(_) => Err(format!(
                "{hook} names {} ({}), outside {}: a bundle carries only that folder; \
                 copy the file into it or name a program on PATH",
                word.display(),
                real.display(),
                self.root.display()
            )),
        }
    }
}

/// `path` with links resolved, or as it is when it does not exist.
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

//! Which files a bundle of a folder carries: its hooks.toml, the files the
//! config was read from (`[hooks.import]` settings files), and every file
//! its hooks run that the config names: a process hook's or an argv
//! command hook's words that name a file, and a shell command's words that
//! name a file under the folder. A file named outside the folder is an
//! error (a bundle carries only the folder), as is a working folder
//! outside it; a bare program name (`python3`) is looked up on the
//! gateway's PATH, and an absolute program outside the folder
//! (`/bin/sh`) is the gateway's own.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use hookhost::{CommandConfig, Config, Runner, SetHook};

use super::archive::CONFIG;

/// The files to pack, relative to `dir` and `/`-separated: hooks.toml
/// first, then the rest sorted.
pub fn collect(dir: &Path) -> Result<Vec<String>, String> {
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
        let at = config.hook_dir(p);
        found.inside(&format!("process hook `{name}`"), &at)?;
        found.argv(&format!("process hook `{name}`"), &at, &p.command)?;
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
        let at = std::fs::canonicalize(at).unwrap_or_else(|_| at.to_path_buf());
        if at.starts_with(&self.root) {
            return Ok(());
        }
        Err(format!(
            "{hook} runs in {}, outside {}: a bundle carries only that folder",
            at.display(),
            self.root.display()
        ))
    }

    fn command(&mut self, hook: &str, config: &Config, c: &CommandConfig) -> Result<(), String> {
        let at = config.command_dir(c);
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
            let system_program = i == 0 && Path::new(word).is_absolute();
            self.named(hook, Path::new(word), &path, !system_program)?;
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

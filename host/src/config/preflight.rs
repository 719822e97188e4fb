//! Checks, when a config file is loaded, that what it will spawn is there:
//! each hook's folder exists and its program is an executable file. A
//! typo in `dir` or a script without its execute bit is then a config
//! error naming the hook and the key, rather than a start failure found
//! later in a log (or, for a hook that restarts, never looked at). A
//! PicoClaw config's process hooks are checked at spawn instead, as
//! PicoClaw does.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::config::{Config, ConfigError, Format};

/// Why a hook's folder or program cannot be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Unusable {
    /// The path exists but is no folder.
    #[error("{} is not a folder", .0.display())]
    NotAFolder(PathBuf),
    /// The folder cannot be read.
    #[error("folder {} cannot be used: {source}", path.display())]
    Folder {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// An empty program name.
    #[error("the program name is empty")]
    EmptyProgram,
    /// A bare name that no `PATH` entry holds.
    #[error(
        "`{program}` is not an executable on PATH ({search}); give its path, \
         e.g. \"./{program}\" for a file in the hook's folder"
    )]
    NotOnPath {
        /// The name.
        program: String,
        /// The `PATH` searched.
        search: String,
    },
    /// The program's path cannot be read.
    #[error("{}: {source}", path.display())]
    Missing {
        /// The program.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The path is a folder or a device.
    #[error("{} is not a file", .0.display())]
    NotAFile(PathBuf),
    /// No execute bit.
    #[error(
        "{} is not executable (mode {mode:o}); `chmod +x` it, or run it through \
         its interpreter, e.g. [\"python3\", \"{name}\"]",
        path.display()
    )]
    NotExecutable {
        /// The program.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
        /// Its file name, for the example.
        name: String,
    },
}

/// Checks every enabled process and command hook of `config`; `path`
/// names the file in the error.
pub(crate) fn check(config: &Config, path: &Path) -> Result<(), ConfigError> {
    if !config.enabled {
        return Ok(());
    }
    let invalid = |location: String, key: &str, e: Unusable| ConfigError::Invalid {
        path: path.to_path_buf(),
        location,
        message: format!("key `{key}`: {e}"),
    };
    // PicoClaw checks a process hook's folder and program when it spawns
    // it: in a PicoClaw config a missing one is that hook's start failure.
    let checked = config.format == Format::Hookhost;
    for (name, hook) in config
        .processes
        .iter()
        .filter(|(_, h)| h.enabled && checked)
    {
        let at = format!("hook `{name}`");
        let dir = config.hook_dir(hook);
        folder(&dir).map_err(|e| invalid(at.clone(), "dir", e))?;
        if let Some(program) = hook.command.first() {
            program_at(program, &dir, hook.env.get("PATH").map(String::as_str))
                .map_err(|e| invalid(at, "command", e))?;
        }
    }
    for (name, hook) in config.commands.iter().filter(|(_, h)| h.enabled) {
        let at = format!("command hook `{name}`");
        let dir = config.command_dir(hook);
        folder(&dir).map_err(|e| invalid(at.clone(), "working_dir", e))?;
        if let Some(program) = hook.expanded_args(&dir).as_ref().and_then(|a| a.first()) {
            program_at(program, &dir, hook.env.get("PATH").map(String::as_str))
                .map_err(|e| invalid(at, "args", e))?;
        }
    }
    Ok(())
}

fn folder(dir: &Path) -> Result<(), Unusable> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(Unusable::NotAFolder(dir.to_path_buf())),
        Err(source) => Err(Unusable::Folder {
            path: dir.to_path_buf(),
            source,
        }),
    }
}

/// Finds `program` the way the spawn will: a name with a `/` relative to
/// the hook's folder, a bare name on the hook's `PATH`.
fn program_at(program: &str, dir: &Path, hook_path: Option<&str>) -> Result<PathBuf, Unusable> {
    if program.is_empty() {
        return Err(Unusable::EmptyProgram);
    }
    if program.contains('/') {
        let p = Path::new(program);
        let full = if p.is_relative() {
            dir.join(p)
        } else {
            p.to_path_buf()
        };
        return executable(&full).map(|()| full);
    }
    let search = match hook_path {
        Some(p) => p.to_string(),
        None => std::env::var("PATH").unwrap_or_default(),
    };
    for entry in search.split(':').filter(|e| !e.is_empty()) {
        let candidate = Path::new(entry).join(program);
        if executable(&candidate).is_ok() {
            return Ok(candidate);
        }
    }
    Err(Unusable::NotOnPath {
        program: program.to_string(),
        search,
    })
}

fn executable(path: &Path) -> Result<(), Unusable> {
    let meta = std::fs::metadata(path).map_err(|source| Unusable::Missing {
        path: path.to_path_buf(),
        source,
    })?;
    if !meta.is_file() {
        return Err(Unusable::NotAFile(path.to_path_buf()));
    }
    let mode = meta.permissions().mode();
    if mode & 0o111 == 0 {
        return Err(Unusable::NotExecutable {
            path: path.to_path_buf(),
            mode: mode & 0o777,
            name: path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(dir: &Path, toml: &str) -> Result<Config, String> {
        let file = dir.join("hooks.toml");
        std::fs::write(&file, toml).map_err(|e| e.to_string())?;
        Config::load(&file).map_err(|e| e.to_string())
    }

    fn scratch(tag: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("hookhost-preflight-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch folder");
        dir
    }

    #[test]
    fn a_missing_folder_fails_at_load_naming_hook_and_key() {
        let dir = scratch("dir");
        let err = load(
            &dir,
            "[hooks.processes.g]\ncommand = [\"true\"]\ndir = \"no-such-folder\"\n",
        )
        .expect_err("missing folder");
        assert!(err.contains("hook `g`: key `dir`: folder"), "{err}");
        assert!(err.contains("no-such-folder"), "{err}");
    }

    #[test]
    fn a_script_without_execute_bit_fails_at_load_with_the_fix() {
        let dir = scratch("mode");
        std::fs::write(dir.join("guard.py"), "print()\n").expect("script");
        std::fs::set_permissions(dir.join("guard.py"), std::fs::Permissions::from_mode(0o644))
            .expect("chmod");
        let err = load(&dir, "[hooks.processes.g]\ncommand = [\"./guard.py\"]\n")
            .expect_err("not executable");
        assert!(err.contains("hook `g`: key `command`:"), "{err}");
        assert!(err.contains("is not executable (mode 644)"), "{err}");
        assert!(err.contains("chmod +x"), "{err}");
    }

    #[test]
    fn a_name_not_on_path_fails_and_one_on_path_loads() {
        let dir = scratch("path");
        let err = load(
            &dir,
            "[hooks.processes.g]\ncommand = [\"no-such-hook-binary\"]\n",
        )
        .expect_err("not on PATH");
        assert!(
            err.contains("`no-such-hook-binary` is not an executable on PATH"),
            "{err}"
        );
        load(
            &dir,
            "[hooks.processes.g]\ncommand = [\"sh\", \"-c\", \"true\"]\n",
        )
        .expect("sh is on PATH");
        // The hook's own PATH is where it is looked up.
        let err = load(
            &dir,
            "[hooks.processes.g]\ncommand = [\"sh\"]\nenv = { PATH = \"/nowhere\" }\n",
        )
        .expect_err("hook PATH has no sh");
        assert!(err.contains("(/nowhere)"), "{err}");
    }

    #[test]
    fn disabled_hooks_and_command_hooks_are_checked_as_they_will_run() {
        let dir = scratch("cmd");
        load(
            &dir,
            "[hooks.processes.g]\nenabled = false\ncommand = [\"no-such-hook-binary\"]\n",
        )
        .expect("a disabled hook is not spawned");
        let err = load(
            &dir,
            "[hooks.commands.c]\ncommand = \"true\"\nevents = [\"session_start\"]\nworking_dir = \"gone\"\n",
        )
        .expect_err("missing working_dir");
        assert!(err.contains("command hook `c`: key `working_dir`"), "{err}");
    }
}

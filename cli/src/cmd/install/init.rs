//! `hookhost init`: a first config, commented, where the daemon looks for
//! it; and which agents already have hooks of their own that
//! `hookhost install AGENT --adopt` would bring into hookhost's chain.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use hookhost::Dialect;

use super::file::Doc;
use super::plan::{self, Step};
use super::route::{self, is_ours};
use super::shape;
use super::target::{self, AGENTS, Scope, Shape};
use crate::shared::exit::usage_error;
use crate::shared::paths;

/// The config `init` writes: every example commented out, so that it
/// loads and runs no hook until the user chooses one.
const TEMPLATE: &str = include_str!("hooks.toml");

/// Write a commented hooks.toml where the daemon reads it, and name the
/// agents whose own hooks hookhost can take over.
#[derive(Args)]
#[command(after_help = "Examples:\n  \
hookhost init                        # ~/.config/hookhost/hooks.toml\n  \
hookhost init -c ./hooks.toml        # somewhere else\n  \
hookhost init --force                # replace an existing one (it is backed up first)\n\n\
The file's examples are all commented out: it runs no hook until you uncomment one. \
Then init looks at each agent's user settings (Claude Code ~/.claude/settings.json, Codex \
~/.codex/hooks.json, Gemini CLI ~/.gemini/settings.json, Cursor ~/.cursor/hooks.json, \
Copilot ~/.copilot/hooks/) and, for each that holds hooks of your own, prints the command \
that moves them into hookhost's chain: `hookhost install AGENT --adopt`. It runs none of them.")]
pub struct InitArgs {
    /// Where to write the config (default: ~/.config/hookhost/hooks.toml,
    /// the file `hookhost serve --socket` reads).
    #[arg(short = 'c', long = "config")]
    config: Option<PathBuf>,
    /// Replace the file if it exists (the old one is backed up beside it).
    #[arg(long)]
    force: bool,
}

/// Runs `hookhost init`: 0 written, 2 (with the reason) when the file
/// exists and `--force` was not given, or cannot be written.
pub async fn init(args: InitArgs) -> ExitCode {
    let path = args.config.clone().unwrap_or_else(paths::default_config);
    if let Err(e) = write(&path, args.force) {
        return usage_error(e);
    }
    let default = args.config.is_none();
    offer_adoption(if default { None } else { Some(&path) });
    ExitCode::SUCCESS
}

/// Writes the template at `path` (a config that must load once written),
/// refusing to replace a file unless `force`.
fn write(path: &Path, force: bool) -> Result<(), String> {
    let before = match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    // A link to a missing file is there too: never replaced unasked.
    let exists = before.is_some() || std::fs::symlink_metadata(path).is_ok();
    if exists && !force {
        return Err(format!(
            "{} exists; init does not overwrite it (--force replaces it, keeping a backup)",
            path.display()
        ));
    }
    let step = Step {
        path: path.to_path_buf(),
        before,
        after: Some(TEMPLATE.to_string()),
        note: "a commented config, no hook enabled yet (hookhost check shows what runs)".into(),
        check_config: true,
        mode: None,
    };
    plan::apply(&[step])
}

/// Prints, for each agent whose user settings hold hooks of the user's
/// own, the command that adopts them; `config` is init's `-c`, which the
/// command must carry so that the hooks land in that config.
fn offer_adoption(config: Option<&Path>) {
    let with = config.map_or_else(String::new, |c| {
        format!(" -c {}", route::quote(&c.display().to_string()))
    });
    for agent in AGENTS {
        match own_hooks(agent) {
            Ok(found) if found.is_empty() => {}
            Ok(found) => {
                let files: Vec<String> = found
                    .iter()
                    .map(|(f, n)| format!("{} ({n})", f.display()))
                    .collect();
                outln!(
                    "{agent} has hooks of its own: {}. To run them in hookhost's chain \
                     (warm, composed with the others), add --dry-run first to see the change:\n  \
                     hookhost install {agent} --adopt{with}",
                    files.join(", ")
                );
            }
            Err(e) => eprintln!("hookhost: init: {agent}: {e}"),
        }
    }
}

/// The files of `agent`'s user settings that hold handlers other than
/// hookhost's own entries, each with how many.
fn own_hooks(agent: Dialect) -> Result<Vec<(PathBuf, usize)>, String> {
    let file = target::settings_file(agent, Scope::User, &paths::home());
    // The settings file and, for Copilot, the other files of its folder.
    let mut files = target::adopt_sources(agent, &file)?;
    if !files.contains(&file) {
        files.insert(0, file);
    }
    let mut found = Vec::new();
    for f in files {
        let doc = Doc::load(&f)?;
        let n = shape::handlers(&doc.root, Shape::of(agent))
            .into_iter()
            .filter(|(_, h)| !is_ours(agent, h))
            .count();
        if n > 0 {
            found.push((f, n));
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_quoted_only_when_a_shell_would_split_or_expand_it() {
        assert_eq!(route::quote("/home/a/hooks.toml"), "/home/a/hooks.toml");
        assert_eq!(route::quote("/my hooks/h.toml"), "'/my hooks/h.toml'");
        assert_eq!(route::quote("/a'b $x"), r"'/a'\''b $x'");
    }

    #[test]
    fn a_link_to_a_missing_file_is_not_replaced_unless_forced() {
        let dir = std::env::temp_dir().join(format!("hookhost-init-link-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        let link = dir.join("hooks.toml");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(dir.join("elsewhere.toml"), &link).expect("link");
        let refused = write(&link, false).expect_err("a link is there");
        assert!(refused.contains("--force"), "{refused}");
        assert!(std::fs::symlink_metadata(&link).expect("kept").is_symlink());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_template_loads_and_enables_no_hook() {
        let dir = std::env::temp_dir().join(format!("hookhost-init-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        let path = dir.join("hooks.toml");
        std::fs::write(&path, TEMPLATE).expect("write");
        let config = hookhost::Config::load(&path).expect("the template loads");
        assert_eq!(config.hooks().len(), 0, "every example is commented out");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

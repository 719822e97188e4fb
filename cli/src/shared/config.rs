//! Loading a config the way every subcommand does.

use std::path::Path;

/// Loads a config and builds each enabled builtin once, so that an unknown
/// builtin or a bad builtin `config` is a config error (exit 2) rather
/// than a hook that fails every call.
pub fn load_config(path: &Path) -> Result<hookhost::Config, String> {
    let mut config = hookhost::Config::load(path).map_err(|e| e.to_string())?;
    let registry = hookhost::BuiltinRegistry::with_defaults();
    // A PicoClaw config's Go builtins are skipped and listed, not refused.
    config.skip_unknown_builtins(|name| registry.contains(name));
    for (name, b) in config.builtins.iter().filter(|(_, b)| b.enabled) {
        registry
            .build(name, &b.config)
            .map_err(|e| format!("{}: builtin `{name}`: {e}", path.display()))?;
    }
    Ok(config)
}

//! Where a per-user hookhost keeps its things: the daemon's socket and
//! lock in the user's runtime directory, its config in the user's config
//! directory. One place, so `serve`, `relay`, `status` and `install` agree.

use std::path::PathBuf;

/// The socket's file name inside [`runtime_dir`].
const SOCKET: &str = "hookhost.sock";

/// The user's runtime directory for hookhost: `$XDG_RUNTIME_DIR/hookhost`
/// (systemd's per-user tmpfs, mode 0700), else `/tmp/hookhost-UID`.
pub fn runtime_dir() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("hookhost"),
        // SAFETY: getuid cannot fail.
        None => PathBuf::from(format!("/tmp/hookhost-{}", unsafe { libc::getuid() })),
    }
}

/// The socket a daemon listens on and a relay connects to by default.
pub fn default_socket() -> PathBuf {
    runtime_dir().join(SOCKET)
}

/// The user's config directory: `$XDG_CONFIG_HOME`, else `~/.config`.
pub fn xdg_config_home() -> PathBuf {
    match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => home().join(".config"),
    }
}

/// hookhost's config directory: `$XDG_CONFIG_HOME/hookhost`, else
/// `~/.config/hookhost`.
pub fn config_dir() -> PathBuf {
    xdg_config_home().join("hookhost")
}

/// The config `hookhost serve` reads when not given `-c`.
pub fn default_config() -> PathBuf {
    config_dir().join("hooks.toml")
}

/// The user's home directory (`$HOME`; `/` when unset, which no settings
/// file lives under).
pub fn home() -> PathBuf {
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from("/"), PathBuf::from)
}

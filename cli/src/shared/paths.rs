//! Where a per-user hookhost keeps its things: the daemon's socket and
//! lock in the user's runtime directory, its config in the user's config
//! directory. One place, so `serve`, `relay`, `status` and `install` agree.

use std::path::{Path, PathBuf};

/// The socket's file name inside [`runtime_dir`].
const SOCKET: &str = "hookhost.sock";

/// The user's runtime directory for hookhost: `$XDG_RUNTIME_DIR/hookhost`
/// (systemd's per-user tmpfs, mode 0700), else `/tmp/hookhost-UID`. In a
/// shared `/tmp` anyone may create that name first, so it is used only
/// once [`check_private_dir`] finds it the user's own, mode 0700.
pub fn runtime_dir() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("hookhost"),
        None => PathBuf::from(format!("/tmp/hookhost-{}", my_uid())),
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

/// The per-user token the daemon's TCP port requires
/// (`Authorization: Bearer TOKEN`), which `install --via http` writes into
/// the agent's settings: `$XDG_CONFIG_HOME/hookhost/http-token`.
pub fn default_token_file() -> PathBuf {
    config_dir().join("http-token")
}

/// Where `install --via http` notes the address the agent posts to, for
/// `hookhost status` to check who holds that port.
pub fn http_listen_file() -> PathBuf {
    config_dir().join("http-listen")
}

/// Why a folder or file hookhost keeps private cannot be used: another
/// user could have put it there, or could read or replace what is in it.
#[derive(Debug, thiserror::Error)]
pub enum PrivateError {
    /// The path is a symbolic link (it could lead anywhere).
    #[error(
        "{0} is a symbolic link; hookhost keeps its socket only in a folder of its own: remove it"
    )]
    Symlink(PathBuf),
    /// The path is not a folder (or not a regular file, for a file).
    #[error("{0} is not a {1}")]
    Kind(PathBuf, &'static str),
    /// Another user owns it: never used, never chmod-ed or chown-ed.
    #[error(
        "{path} belongs to uid {owner}, not to you (uid {me}): another user may have put it there; \
         hookhost will not use it (remove it, or set XDG_RUNTIME_DIR)"
    )]
    Owner {
        /// The path.
        path: PathBuf,
        /// Its owner's uid.
        owner: u32,
        /// This process's uid.
        me: u32,
    },
    /// Others may enter or write it.
    #[error("{path} has mode {mode:04o}; it must be 0700 (chmod 700 it)")]
    Mode {
        /// The path.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The system refused to create or inspect it.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
}

/// This process's uid.
pub fn my_uid() -> u32 {
    // SAFETY: getuid cannot fail.
    unsafe { libc::getuid() }
}

/// Creates `dir` with mode 0700 when it is missing (its parent must
/// exist), then checks it as [`check_private_dir`] does. A folder someone
/// else made is refused, never taken over (no chmod, no chown).
pub fn ensure_private_dir(dir: &Path) -> Result<(), PrivateError> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(source) => {
            return Err(PrivateError::Io {
                path: dir.to_path_buf(),
                source,
            });
        }
    }
    check_private_dir(dir)
}

/// Checks, without following a symbolic link, that `dir` is a folder of
/// this user's with mode 0700: what the daemon's socket folder must be
/// before anything is read from or written into it.
pub fn check_private_dir(dir: &Path) -> Result<(), PrivateError> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta = std::fs::symlink_metadata(dir).map_err(|source| PrivateError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    if meta.file_type().is_symlink() {
        return Err(PrivateError::Symlink(dir.to_path_buf()));
    }
    if !meta.is_dir() {
        return Err(PrivateError::Kind(dir.to_path_buf(), "folder"));
    }
    let me = my_uid();
    if meta.uid() != me {
        return Err(PrivateError::Owner {
            path: dir.to_path_buf(),
            owner: meta.uid(),
            me,
        });
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode != 0o700 {
        return Err(PrivateError::Mode {
            path: dir.to_path_buf(),
            mode,
        });
    }
    Ok(())
}

/// Whether `socket` lives in the default socket folder, which must be
/// private ([`check_private_dir`]); a socket given elsewhere is the
/// user's choice, and its peer is checked instead.
pub fn in_runtime_dir(socket: &Path) -> bool {
    socket.parent() == Some(runtime_dir().as_path())
}

/// Opens (creating it 0600 when missing) a file that must not be a
/// symbolic link: `O_NOFOLLOW`, so a link planted at `path` makes the open
/// fail instead of writing where it points. The file must be a regular
/// file of this user's with one name, or it is refused.
pub fn open_private_file(path: &Path) -> Result<std::fs::File, PrivateError> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let io = |source| PrivateError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => PrivateError::Symlink(path.to_path_buf()),
            _ => io(e),
        })?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() || meta.nlink() != 1 {
        return Err(PrivateError::Kind(
            path.to_path_buf(),
            "regular file with one name",
        ));
    }
    if meta.uid() != my_uid() {
        return Err(PrivateError::Owner {
            path: path.to_path_buf(),
            owner: meta.uid(),
            me: my_uid(),
        });
    }
    Ok(file)
}

/// Writes `text` to `path` as a new file of mode 0600 from its first
/// byte, in one step and without replacing a file already there: a
/// temporary file created 0600 (`O_EXCL | O_NOFOLLOW`), then linked to
/// `path`. `Ok(false)`: `path` existed already and is left as it was.
pub fn create_secret_file(path: &Path, text: &str) -> Result<bool, PrivateError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let io = |source| PrivateError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io)?;
    let tmp = dir.join(format!(".hookhost-secret-{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let written = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::hard_link(&tmp, path)
    })();
    let _ = std::fs::remove_file(&tmp);
    match written {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(io(e)),
    }
}

/// 32 random bytes from the kernel, as 64 hex digits.
pub fn random_token() -> Result<String, std::io::Error> {
    let mut bytes = [0u8; 32];
    let mut filled = 0;
    while filled < bytes.len() {
        let rest = &mut bytes[filled..];
        // SAFETY: getrandom writes at most `rest.len()` bytes into `rest`.
        let n = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
            continue;
        }
        filled += n.unsigned_abs();
    }
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The per-user token in `path`, created (random, 0600) when missing.
pub fn ensure_token(path: &Path) -> Result<String, String> {
    if !path.exists() {
        let token = random_token().map_err(|e| format!("cannot make a token: {e}"))?;
        create_secret_file(path, &format!("{token}\n")).map_err(|e| e.to_string())?;
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the token {}: {e}", path.display()))?;
    let token = text.trim();
    if token.is_empty() {
        return Err(format!("the token file {} is empty", path.display()));
    }
    Ok(token.to_string())
}

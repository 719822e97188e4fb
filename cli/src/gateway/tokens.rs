//! `--auth tokens:FILE`: the gateway's callers, one line per token.
//!
//! ```text
//! # hookhost tokens: sha256 of the token, then whom it stands for
//! sha256:9f86d0…  tenant=acme user=ann agent=claude-code
//! sha256:60303a…  tenant=acme user=bob
//! ```
//!
//! The file holds hashes, never tokens: whoever reads it (a backup, an
//! image layer) cannot call the gateway. `hookhost token new` appends a
//! line and prints the token once. The file is read again when it
//! changes, so a token added or removed takes effect at the next request
//! without a restart.

use std::collections::HashMap;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use hookhost::Identity;
use sha2::{Digest, Sha256};

/// What a token's line says: whom it stands for.
type Table = HashMap<[u8; 32], Identity>;

/// The tokens file, re-read when its size or time changes.
#[derive(Debug)]
pub struct Tokens {
    path: PathBuf,
    state: Mutex<Loaded>,
}

#[derive(Debug)]
struct Loaded {
    stamp: Option<(SystemTime, u64, u64)>,
    table: Arc<Table>,
}

impl Tokens {
    /// Reads `path`; an unreadable file or a bad line is an error naming
    /// the line, so a gateway never starts with fewer callers than meant.
    pub fn open(path: &Path) -> Result<Tokens, String> {
        let stamp = stamp(path)?;
        let table = read(path)?;
        if std::fs::metadata(path).is_ok_and(|m| m.mode() & 0o022 != 0) {
            return Err(format!(
                "{}: other users can write it, and so add themselves: chmod go-w it",
                path.display()
            ));
        }
        Ok(Tokens {
            path: path.to_path_buf(),
            state: Mutex::new(Loaded {
                stamp: Some(stamp),
                table: Arc::new(table),
            }),
        })
    }

    /// The identity `token` stands for, if any line names it. When the
    /// file changed and no longer reads, the lines read last are kept and
    /// the error logged: a typo while editing must not lock a team out.
    pub fn identify(&self, token: &[u8]) -> Option<Identity> {
        let table = self.current();
        table.get(&hash(token)).cloned()
    }

    fn current(&self) -> Arc<Table> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let now = stamp(&self.path).ok();
        if now != state.stamp {
            state.stamp = now;
            match read(&self.path) {
                Ok(table) => state.table = Arc::new(table),
                Err(e) => tracing::error!("--auth tokens: {e}; keeping the tokens read before"),
            }
        }
        state.table.clone()
    }
}

/// What tells a changed file: its time, size and inode.
fn stamp(path: &Path) -> Result<(SystemTime, u64, u64), String> {
    let m = std::fs::metadata(path)
        .map_err(|e| format!("cannot read the tokens file {}: {e}", path.display()))?;
    let modified = m.modified().unwrap_or(SystemTime::UNIX_EPOCH);
    Ok((modified, m.len(), m.ino()))
}

fn read(path: &Path) -> Result<Table, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the tokens file {}: {e}", path.display()))?;
    let mut table = Table::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (digest, identity) =
            parse_line(line).map_err(|e| format!("{}:{}: {e}", path.display(), n + 1))?;
        if table.insert(digest, identity).is_some() {
            return Err(format!(
                "{}:{}: the same token twice",
                path.display(),
                n + 1
            ));
        }
    }
    Ok(table)
}

/// `sha256:HEX tenant=T user=U [agent=A]`.
fn parse_line(line: &str) -> Result<([u8; 32], Identity), String> {
    let mut words = line.split_whitespace();
    let digest = words
        .next()
        .and_then(|w| w.strip_prefix("sha256:"))
        .and_then(unhex)
        .ok_or("a line starts with sha256: and 64 hex digits")?;
    let (mut tenant, mut user, mut agent) = (None, None, None);
    for word in words {
        let (key, value) = word
            .split_once('=')
            .filter(|(_, v)| valid_name(v))
            .ok_or_else(|| format!("{word:?} is not key=value (letters, digits, . _ @ -)"))?;
        let slot = match key {
            "tenant" => &mut tenant,
            "user" => &mut user,
            "agent" => &mut agent,
            other => return Err(format!("unknown key {other:?}: tenant, user or agent")),
        };
        if slot.replace(value.to_string()).is_some() {
            return Err(format!("{key} given twice"));
        }
    }
    let tenant = tenant.ok_or("no tenant=")?;
    let user = user.ok_or("no user=")?;
    Ok((digest, Identity::new(tenant, user, agent)))
}

/// A tenant, user or agent name: what a scope can list and a log can
/// show without quoting.
pub fn valid_name(v: &str) -> bool {
    !v.is_empty()
        && v.len() <= 128
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._@-".contains(&b))
}

fn unhex(s: &str) -> Option<[u8; 32]> {
    if s.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

fn hash(token: &[u8]) -> [u8; 32] {
    Sha256::digest(token).into()
}

/// Appends a line for a new token standing for `identity` to `path`
/// (created 0600 when missing) and returns the token, which is stored
/// nowhere else.
pub fn append_new(path: &Path, identity: &Identity) -> Result<String, String> {
    for name in [
        Some(&identity.tenant),
        Some(&identity.user),
        identity.agent.as_ref(),
    ]
    .into_iter()
    .flatten()
    {
        if !valid_name(name) {
            return Err(format!(
                "{name:?}: names are 1 to 128 letters, digits, '.', '_', '@' or '-'"
            ));
        }
    }
    let secret =
        crate::shared::paths::random_token().map_err(|e| format!("cannot make a token: {e}"))?;
    let token = format!("hh_{secret}");
    let digest: String = hash(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let mut line = format!(
        "sha256:{digest} tenant={} user={}",
        identity.tenant, identity.user
    );
    if let Some(agent) = &identity.agent {
        line.push_str(&format!(" agent={agent}"));
    }
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    writeln!(file, "{line}").map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_names_a_tenant_and_a_user_and_maybe_an_agent() {
        let d = "ab".repeat(32);
        let (_, id) = parse_line(&format!("sha256:{d} tenant=acme user=ann agent=codex")).unwrap();
        assert_eq!(id, Identity::new("acme", "ann", Some("codex".into())));
        for bad in [
            format!("sha256:{d} user=ann"),
            format!("sha256:{d} tenant=acme"),
            format!("sha256:{d} tenant=acme user=ann role=admin"),
            format!("sha256:{d} tenant=acme user=ann user=bob"),
            format!("sha256:{d} tenant=ac\"me user=ann"),
            format!("sha256:{} tenant=acme user=ann", "ab".repeat(31)),
            format!("{d} tenant=acme user=ann"),
        ] {
            assert!(parse_line(&bad).is_err(), "{bad}");
        }
    }
}

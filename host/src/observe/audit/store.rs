//! Where an audit log lives, from `[hooks.audit]` (`path`, or `url`) or
//! `hookhost audit --url`: a JSONL file, an SQLite database or a
//! PostgreSQL database. The scheme decides; a path without one is a JSONL
//! file, as `path` always was.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// An audit log's backend and address.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuditStore {
    /// A file of JSON lines.
    Jsonl(PathBuf),
    /// An SQLite database file (`sqlite://PATH`): one host's log, queryable
    /// without a server.
    Sqlite(PathBuf),
    /// A PostgreSQL database (`postgres://…`), the URL as written: the log
    /// every replica of a gateway shares. A password may come from the
    /// URL or, as libpq does, from `PGPASSWORD`.
    Postgres(String),
}

/// Why an audit store could not be named, opened or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuditError {
    /// The URL is not one this build understands.
    #[error("audit store `{url}`: {why}")]
    Url {
        /// The URL, its password masked.
        url: String,
        /// What is wrong with it.
        why: String,
    },
    /// The scheme is known but its backend was not compiled in.
    #[error(
        "audit store `{url}`: needs hookhost's `{feature}` cargo feature, which this build lacks"
    )]
    NeedsFeature {
        /// The URL, its password masked.
        url: String,
        /// The cargo feature that adds the backend.
        feature: &'static str,
    },
    /// Reading or writing the store failed.
    #[error("audit store {store}: {source}")]
    Io {
        /// The store, its password masked.
        store: String,
        /// What failed.
        #[source]
        source: io::Error,
    },
}

impl AuditStore {
    /// Reads `url`: `sqlite://PATH`, `postgres://…` (or `postgresql://`),
    /// or a path without a scheme (JSONL). Relative paths are taken from
    /// `base`, the config file's folder. A backend this build lacks is an
    /// error naming its feature, so a config asking for it fails at load.
    pub fn parse(url: &str, base: &Path) -> Result<AuditStore, AuditError> {
        let at = |p: &str| base.join(p);
        let bad = |why: &str| AuditError::Url {
            url: masked(url),
            why: why.to_string(),
        };
        let Some((scheme, rest)) = url.split_once("://") else {
            if url.is_empty() {
                return Err(bad("is empty"));
            }
            return Ok(AuditStore::Jsonl(at(url)));
        };
        match scheme {
            "sqlite" if rest.is_empty() => Err(bad("names no database file")),
            "sqlite" if cfg!(feature = "audit-sqlite") => Ok(AuditStore::Sqlite(at(rest))),
            "postgres" | "postgresql" if cfg!(feature = "audit-postgres") => {
                check_postgres(url).map_err(|why| bad(&why))?;
                Ok(AuditStore::Postgres(url.to_string()))
            }
            "sqlite" => Err(needs(url, "audit-sqlite")),
            "postgres" | "postgresql" => Err(needs(url, "audit-postgres")),
            "file" => Ok(AuditStore::Jsonl(at(rest))),
            _ => Err(bad(
                "unknown scheme; use a file path (JSONL), sqlite://PATH or postgres://…",
            )),
        }
    }

    /// An I/O error on this store, named.
    pub(crate) fn io_error(&self, source: io::Error) -> AuditError {
        AuditError::Io {
            store: self.to_string(),
            source,
        }
    }
}

fn needs(url: &str, feature: &'static str) -> AuditError {
    AuditError::NeedsFeature {
        url: masked(url),
        feature,
    }
}

#[cfg(feature = "audit-postgres")]
fn check_postgres(url: &str) -> Result<(), String> {
    url.parse::<postgres::Config>()
        .map(drop)
        .map_err(|e| e.to_string())
}

#[cfg(not(feature = "audit-postgres"))]
fn check_postgres(_: &str) -> Result<(), String> {
    Ok(())
}

/// `url` with the password of its `user:password@` masked, for messages
/// and `status`: a config may hold the password, a log must not. Public
/// so that every store URL an embedder shows (a state store's too) is
/// masked alike.
pub fn masked(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    match authority.rfind('@') {
        Some(at) => match authority[..at].split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***{}", &rest[at..]),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

impl fmt::Display for AuditStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AuditStore::Jsonl(path) => write!(f, "{}", path.display()),
            AuditStore::Sqlite(path) => write!(f, "sqlite://{}", path.display()),
            AuditStore::Postgres(url) => f.write_str(&masked(url)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scheme_picks_the_backend_and_relative_paths_follow_the_config() {
        let base = Path::new("/cfg");
        let parse = |u: &str| AuditStore::parse(u, base);
        assert_eq!(
            parse("audit.jsonl").ok(),
            Some(AuditStore::Jsonl("/cfg/audit.jsonl".into()))
        );
        assert_eq!(
            parse("/var/log/a.jsonl").ok(),
            Some(AuditStore::Jsonl("/var/log/a.jsonl".into()))
        );
        let unknown = parse("mysql://db/audit").map(drop);
        assert!(
            matches!(&unknown, Err(AuditError::Url { why, .. }) if why.contains("unknown scheme")),
            "{unknown:?}"
        );
        assert!(parse("").is_err());
        assert!(parse("sqlite://").is_err());
    }

    #[cfg(all(feature = "audit-sqlite", feature = "audit-postgres"))]
    #[test]
    fn database_urls_are_read_and_checked() {
        let base = Path::new("/cfg");
        assert_eq!(
            AuditStore::parse("sqlite://audit.db", base).ok(),
            Some(AuditStore::Sqlite("/cfg/audit.db".into()))
        );
        assert_eq!(
            AuditStore::parse("sqlite:///var/a.db", base).ok(),
            Some(AuditStore::Sqlite("/var/a.db".into()))
        );
        let pg = "postgres://hh:s3cret@127.0.0.1:5432/audit";
        let store = AuditStore::parse(pg, base).ok();
        assert_eq!(store, Some(AuditStore::Postgres(pg.into())));
        let shown = store.map(|s| s.to_string()).unwrap_or_default();
        assert_eq!(shown, "postgres://hh:***@127.0.0.1:5432/audit");
        let err = AuditStore::parse("postgres://hh:s3cret@h:notaport/x", base)
            .map(drop)
            .map_err(|e| e.to_string());
        assert!(
            matches!(&err, Err(m) if !m.contains("s3cret") && m.contains("***")),
            "{err:?}"
        );
    }

    #[cfg(not(feature = "audit-sqlite"))]
    #[test]
    fn a_backend_left_out_names_its_feature() {
        let err = AuditStore::parse("sqlite://a.db", Path::new("/")).map(drop);
        assert!(
            matches!(
                err,
                Err(AuditError::NeedsFeature {
                    feature: "audit-sqlite",
                    ..
                })
            ),
            "{err:?}"
        );
    }
}

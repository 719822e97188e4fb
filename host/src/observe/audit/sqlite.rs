//! The SQLite backend: one table, `hookhost_audit`, whose `line` column is
//! the record as JSONL would hold it; `writer` and `seq` are copied out of
//! it so that a retried insert is recognised. Write-ahead logging lets
//! `hookhost audit query` read while a host writes.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, params_from_iter};

use super::db::Table;
use super::line::Sealed;
use super::read::Filter;

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS hookhost_audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    writer TEXT NOT NULL,
    seq INTEGER NOT NULL,
    line TEXT NOT NULL,
    UNIQUE (writer, seq)
)";

/// The writer's connection.
pub(super) struct SqliteTable {
    path: PathBuf,
    conn: Connection,
}

impl SqliteTable {
    /// Creates the file (0600, never through a symlink) and the table.
    pub(super) fn open(path: &Path) -> std::io::Result<SqliteTable> {
        drop(super::file::open_file(path)?);
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| named(path, e))?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .and_then(|()| conn.pragma_update(None, "synchronous", "NORMAL"))
            .and_then(|()| conn.busy_timeout(std::time::Duration::from_secs(5)))
            .and_then(|()| conn.execute_batch(SCHEMA))
            .map_err(|e| named(path, e))?;
        Ok(SqliteTable {
            path: path.to_path_buf(),
            conn,
        })
    }
}

impl Table for SqliteTable {
    fn insert(&mut self, rows: &[Sealed]) -> Result<(), String> {
        let tx = self.conn.transaction().map_err(|e| e.to_string())?;
        {
            let mut insert = tx
                .prepare(
                    "INSERT OR IGNORE INTO hookhost_audit (writer, seq, line) VALUES (?1, ?2, ?3)",
                )
                .map_err(|e| e.to_string())?;
            for row in rows {
                let seq = i64::try_from(row.seq).map_err(|e| e.to_string())?;
                insert
                    .execute((&row.writer, seq, &row.line))
                    .map_err(|e| e.to_string())?;
            }
        }
        tx.commit().map_err(|e| e.to_string())
    }

    fn name(&self) -> String {
        format!("sqlite://{}", self.path.display())
    }
}

/// Calls `each` with every line `filter` keeps, in the order written,
/// until it returns `false`. The database is opened read-only.
pub(super) fn read(
    path: &Path,
    filter: &Filter,
    each: &mut dyn FnMut(&str) -> bool,
) -> std::io::Result<()> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NOFOLLOW;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| named(path, e))?;
    let (clause, args) = filter.sql(
        |n| format!("?{n}"),
        |k| format!("json_extract(line, '$.{k}')"),
    );
    let sql = format!("SELECT line FROM hookhost_audit{clause} ORDER BY id");
    let mut stmt = conn.prepare(&sql).map_err(|e| named(path, e))?;
    let mut rows = stmt
        .query(params_from_iter(args.iter()))
        .map_err(|e| named(path, e))?;
    while let Some(row) = rows.next().map_err(|e| named(path, e))? {
        let line: String = row.get(0).map_err(|e| named(path, e))?;
        if !each(&line) {
            break;
        }
    }
    Ok(())
}

fn named(path: &Path, e: rusqlite::Error) -> std::io::Error {
    std::io::Error::other(format!("audit log sqlite://{}: {e}", path.display()))
}

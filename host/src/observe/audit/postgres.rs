//! The PostgreSQL backend: the table of the SQLite backend, shared by every
//! replica of a gateway (each writer keeps its own chain). A batch is one
//! statement over arrays, so a burst costs one round trip; the connection
//! is made lazily and again after any error, so a database that restarts
//! is written to again once it is back. TLS follows the URL's `sslmode`.

use std::time::Duration;

use postgres::{Client, Config};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::db::Table;
use super::line::Sealed;
use super::read::Filter;
use super::store::masked;

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS hookhost_audit (
    id BIGSERIAL PRIMARY KEY,
    writer TEXT NOT NULL,
    seq BIGINT NOT NULL,
    line TEXT NOT NULL,
    UNIQUE (writer, seq)
)";

const INSERT: &str = "INSERT INTO hookhost_audit (writer, seq, line)
    SELECT * FROM UNNEST($1::text[], $2::bigint[], $3::text[])
    ON CONFLICT (writer, seq) DO NOTHING";

/// How long a connection attempt, and a silent peer, may take.
const TIMEOUT: Duration = Duration::from_secs(5);

/// The writer's connection, made on first use.
pub(super) struct PgTable {
    url: String,
    client: Option<Client>,
}

impl PgTable {
    pub(super) fn new(url: &str) -> PgTable {
        PgTable {
            url: url.to_string(),
            client: None,
        }
    }

    fn client(&mut self) -> Result<&mut Client, String> {
        if self.client.is_none() {
            let mut client = connect(&self.url)?;
            // Two replicas creating the table at once can collide; the
            // loser finds it made on the next try.
            client.batch_execute(SCHEMA).map_err(|e| e.to_string())?;
            self.client = Some(client);
        }
        self.client
            .as_mut()
            .ok_or_else(|| "no connection".to_string())
    }
}

impl Table for PgTable {
    fn insert(&mut self, rows: &[Sealed]) -> Result<(), String> {
        let writers: Vec<&str> = rows.iter().map(|r| r.writer.as_str()).collect();
        let seqs: Vec<i64> = rows
            .iter()
            .map(|r| i64::try_from(r.seq).unwrap_or(i64::MAX))
            .collect();
        let lines: Vec<&str> = rows.iter().map(|r| r.line.as_str()).collect();
        let result = self.client().and_then(|c| {
            c.execute(INSERT, &[&writers, &seqs, &lines])
                .map_err(|e| e.to_string())
        });
        if result.is_err() {
            // Whatever broke, the next attempt starts from a new connection.
            self.client = None;
        }
        result.map(drop)
    }

    fn name(&self) -> String {
        masked(&self.url)
    }
}

/// A connection with bounded waits; the password from `PGPASSWORD` when
/// the URL has none, as libpq takes it.
fn connect(url: &str) -> Result<Client, String> {
    let mut config: Config = url.parse().map_err(|e: postgres::Error| e.to_string())?;
    if config.get_password().is_none() {
        if let Ok(password) = std::env::var("PGPASSWORD") {
            config.password(password);
        }
    }
    config
        .connect_timeout(TIMEOUT)
        .keepalives(true)
        .keepalives_idle(TIMEOUT)
        .tcp_user_timeout(TIMEOUT * 2);
    config.connect(tls()).map_err(|e| e.to_string())
}

/// TLS as `sslmode` asks (`prefer` by default: TLS when the server offers
/// it): rustls with the platform's roots, or `SSL_CERT_FILE`'s, and the
/// server's name checked, so `require` means a verified server.
fn tls() -> MakeRustlsConnect {
    use rustls_platform_verifier::ConfigVerifierExt;
    MakeRustlsConnect::new(rustls::ClientConfig::with_platform_verifier())
}

/// Calls `each` with every line `filter` keeps, in the order written,
/// until it returns `false`.
pub(super) fn read(
    url: &str,
    filter: &Filter,
    each: &mut dyn FnMut(&str) -> bool,
) -> std::io::Result<()> {
    let named = |e: String| std::io::Error::other(format!("audit log {}: {e}", masked(url)));
    let mut client = connect(url).map_err(named)?;
    let (clause, args) = filter.sql(|n| format!("${n}"), |k| format!("(line::jsonb ->> '{k}')"));
    let sql = format!("SELECT line FROM hookhost_audit{clause} ORDER BY id");
    let params: Vec<&(dyn postgres::types::ToSql + Sync)> = args
        .iter()
        .map(|a| a as &(dyn postgres::types::ToSql + Sync))
        .collect();
    let mut rows = client
        .query_raw(sql.as_str(), params)
        .map_err(|e| named(e.to_string()))?;
    use postgres::fallible_iterator::FallibleIterator;
    while let Some(row) = rows.next().map_err(|e| named(e.to_string()))? {
        let line: String = row.try_get(0).map_err(|e| named(e.to_string()))?;
        if !each(&line) {
            break;
        }
    }
    Ok(())
}

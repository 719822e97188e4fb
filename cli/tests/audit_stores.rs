//! The audit log in a database: a gateway writes `[hooks.audit] url =
//! "sqlite://…"` or `"postgres://…"` (a real PostgreSQL, Debian's
//! package, started for the test), two runs give two writers' chains, and
//! `hookhost audit verify` and `hookhost audit query` read them back. Then
//! the rows are tampered with as someone holding the database's
//! credentials could: an edited, a deleted and a reordered record are each
//! found. A gateway started before its database answers its agents, and
//! its records reach the database once it is up.

#![allow(clippy::unwrap_used)]

mod common;
#[path = "common/gateway.rs"]
mod gw;
#[path = "common/postgres.rs"]
mod pg;

use std::process::Command;

use serde_json::Value;

use common::HOOKHOST;
use gw::{CONFIG, Gateway};
use pg::Postgres;

/// `hookhost audit ARGS --url URL`: exit code, stdout and stderr.
fn audit(url: &str, args: &[&str]) -> (Option<i32>, String) {
    audit_with(&[], url, args)
}

/// [`audit`] with `env` set.
fn audit_with(env: &[(&str, &str)], url: &str, args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(HOOKHOST)
        .envs(env.iter().copied())
        .arg("audit")
        .args(args)
        .args(["--url", url])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code(), format!("{stdout}{stderr}"))
}

/// Two gateway runs on one store, each answering two of acme's calls
/// (denied by `acme_guard`): eight records, two writers.
fn two_runs(name: &str, url: &str) {
    let config = format!("{CONFIG}\n[hooks.audit]\nurl = \"{url}\"\n");
    for run in 1..=2 {
        let mut gw = Gateway::start(&format!("{name}-{run}"), &config);
        let ann = gw.token("acme", "ann");
        for _ in 0..2 {
            let (status, _, body) = gw.send("POST", "/hooks/claude-code", Some(&ann), gw::EVENT);
            assert_eq!(status, 200, "{body}");
            assert!(body.contains("acme says no"), "{body}");
        }
        gw.stop();
    }
}

/// What `audit query` printed, as records.
fn records(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The reads and the tampering shared by both databases; `sql` runs
/// statements on the store as its owner could.
fn check_store(url: &str, sql: &mut dyn FnMut(&str)) {
    let (code, said) = audit(url, &["verify"]);
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("8 records from 2 writer(s)"), "{said}");

    let (code, out) = audit(url, &["query", "--decision", "deny"]);
    assert_eq!(code, Some(0), "{out}");
    let denies = records(&out);
    assert_eq!(denies.len(), 4, "{out}");
    for r in &denies {
        assert_eq!(
            (r["kind"].as_str(), r["hook"].as_str(), r["tenant"].as_str()),
            (Some("decision"), Some("acme_guard"), Some("acme")),
            "{r}"
        );
    }
    let (_, out) = audit(url, &["query", "--hook", "acme_guard", "--session", "s1"]);
    assert_eq!(records(&out).len(), 8, "{out}");
    let (_, out) = audit(url, &["query", "--since", "1h"]);
    assert_eq!(records(&out).len(), 8, "{out}");
    let (_, out) = audit(url, &["query", "--since", "2999-01-01"]);
    assert_eq!(out, "");
    let (code, out) = audit(url, &["query", "--since", "yesterday"]);
    assert_eq!(code, Some(2), "{out}");

    sql("CREATE TABLE kept AS SELECT * FROM hookhost_audit");
    let first = "(SELECT min(id) FROM hookhost_audit)";
    let tamperings = [
        (
            "edited",
            format!(
                "UPDATE hookhost_audit SET line = replace(line, 'acme says no', 'acme says yes') \
                 WHERE id = {first}"
            ),
        ),
        (
            "deleted",
            format!("DELETE FROM hookhost_audit WHERE id = {first} + 1"),
        ),
        (
            "reordered",
            "UPDATE hookhost_audit SET id = -id WHERE id = (SELECT min(id) FROM kept); \
             UPDATE hookhost_audit SET id = (SELECT min(id) FROM kept) WHERE id = (SELECT min(id) + 1 FROM kept); \
             UPDATE hookhost_audit SET id = (SELECT min(id) + 1 FROM kept) WHERE id = -(SELECT min(id) FROM kept)"
                .to_string(),
        ),
    ];
    for (what, statement) in tamperings {
        sql(&statement);
        let (code, said) = audit(url, &["verify"]);
        assert_eq!(code, Some(1), "{what} went unseen: {said}");
        assert!(said.contains("record "), "{what}: {said}");
        sql("DELETE FROM hookhost_audit; INSERT INTO hookhost_audit SELECT * FROM kept");
        let (code, said) = audit(url, &["verify"]);
        assert_eq!(code, Some(0), "after undoing {what}: {said}");
    }
}

#[test]
fn an_sqlite_audit_log_is_queried_and_its_tampering_found() {
    let dir = gw::scratch("audit-sqlite");
    let db = dir.join("audit.db");
    let url = format!("sqlite://{}", db.display());
    two_runs("audit-sqlite", &url);
    let mode = std::fs::metadata(&db).unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(mode.permissions().mode() & 0o777, 0o600);
    let conn = rusqlite::Connection::open(&db).unwrap();
    check_store(&url, &mut |s| conn.execute_batch(s).unwrap());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_postgres_audit_log_is_queried_and_its_tampering_found() {
    let pg = Postgres::start("audit");
    two_runs("audit-pg", &pg.url());
    let mut client = pg.client();
    check_store(&pg.url(), &mut |s| client.batch_execute(s).unwrap());
}

/// The gateway starts while PostgreSQL is down: its agents are answered
/// all the same, the records wait in the queue, and once the database is
/// up they are written, every chain whole.
#[test]
fn records_wait_for_a_postgres_that_is_not_up_yet() {
    let mut pg = Postgres::start("audit-late");
    pg.stop();
    let config = format!("{CONFIG}\n[hooks.audit]\nurl = \"{}\"\n", pg.url());
    let mut gw = Gateway::start("audit-late", &config);
    let ann = gw.token("acme", "ann");
    for _ in 0..3 {
        let (status, _, body) = gw.send("POST", "/hooks/claude-code", Some(&ann), gw::EVENT);
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("acme says no"), "{body}");
    }
    let figures = |gw: &Gateway| {
        let (status, body) = gw.get("/status", Some(&ann));
        assert_eq!(status, 200, "{body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        let n = |k: &str| v["audit"][k].as_u64().unwrap();
        (n("written"), n("queued"), n("dropped"), n("lost"))
    };
    // Three events, two records each: the writer holds one batch while it
    // retries, so what is not in the queue is in its hands.
    let (written, queued, dropped, lost) = figures(&gw);
    assert_eq!((written, dropped, lost), (0, 0, 0));
    assert!(queued <= 6, "{queued}");
    pg.restart();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let (_, out) = audit(&pg.url(), &["query"]);
        if out.lines().count() == 6 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the queued records never arrived: {out}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert_eq!(figures(&gw), (6, 0, 0, 0));
    let (status, metrics) = gw.get("/metrics", Some(&ann));
    assert_eq!(status, 200, "{metrics}");
    for line in [
        "hookhost_audit_written_total 6",
        "hookhost_audit_queued 0",
        "hookhost_audit_dropped_total 0",
        "hookhost_audit_lost_total 0",
    ] {
        assert!(
            metrics.lines().any(|l| l == line),
            "{line} not in:\n{metrics}"
        );
    }
    gw.stop();
    let (code, said) = audit(&pg.url(), &["verify"]);
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("6 records from 1 writer(s)"), "{said}");
}

/// A database that takes TLS only: with `sslmode=require` and the
/// server's CA in SSL_CERT_FILE, records are written and read over TLS; a
/// server whose certificate does not verify is refused, as is a client
/// that would not use TLS.
#[test]
fn postgres_over_tls_verifies_the_server() {
    let mut pg = Postgres::start("audit-tls");
    let pki = gw::scratch("audit-tls-pki");
    gw::pki(&pki);
    pg.require_tls(&pki.join("gw.pem"), &pki.join("gw.key"));
    let url = format!(
        "postgres://postgres@localhost:{}/postgres?sslmode=require",
        pg.port
    );
    let ca = pki.join("ca.pem").display().to_string();
    let trusted = [("SSL_CERT_FILE", ca.as_str())];
    let config = format!("{CONFIG}\n[hooks.audit]\nurl = \"{url}\"\n");
    let mut gw = Gateway::start_with("audit-tls", &config, |dir| {
        std::fs::write(dir.join("tokens"), "# the team\n").unwrap();
        let auth = format!("tokens:{}", dir.join("tokens").display());
        (
            vec![format!("SSL_CERT_FILE={ca}")],
            vec!["--auth".into(), auth],
        )
    });
    let ann = gw.token("acme", "ann");
    let (status, _, body) = gw.send("POST", "/hooks/claude-code", Some(&ann), gw::EVENT);
    assert_eq!(status, 200, "{body}");
    gw.stop();
    let (code, said) = audit_with(&trusted, &url, &["verify"]);
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("2 records from 1 writer(s)"), "{said}");
    let untrusted = [("SSL_CERT_FILE", "/dev/null")];
    let (code, said) = audit_with(&untrusted, &url, &["verify"]);
    assert_eq!(code, Some(2), "an unverified server was read: {said}");
    let plain = url.replace("sslmode=require", "sslmode=disable");
    let (code, said) = audit_with(&trusted, &plain, &["verify"]);
    assert_eq!(code, Some(2), "a plain connection was let in: {said}");
    let _ = std::fs::remove_dir_all(pki);
}

//! The probe driven in memory by scripted hosts, good and bad, and the
//! checks over hand-built records.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use tokio::sync::oneshot;

use super::record::{Arrival, Record};
use super::*;

const HELLO: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"hook.hello","params":{"name":"probe","version":1}}"#;
const CALL_2: &str = r#"{"jsonrpc":"2.0","id":2,"method":"hook.before_tool","params":{"tool":"shell","arguments":{"command":"ls"}}}"#;
const EVENT: &str = r#"{"jsonrpc":"2.0","method":"hook.runtime_event","params":{"id":"e1","kind":"agent.turn.start","time":"2026-01-01T00:00:00Z"}}"#;

/// The host's side of the wire.
struct Host {
    to_probe: Option<DuplexStream>,
    from_probe: Lines<BufReader<DuplexStream>>,
}

impl Host {
    async fn send(&mut self, line: &str) {
        let w = self.to_probe.as_mut().expect("stdin still open");
        w.write_all(format!("{line}\n").as_bytes())
            .await
            .expect("probe reads");
    }

    async fn answer(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(5), self.from_probe.next_line())
            .await
            .expect("an answer within 5 s")
            .expect("readable")
            .expect("a line");
        serde_json::from_str(&line).expect("JSON")
    }

    /// Sends the hello and waits for its answer, as a good host does.
    async fn handshake(&mut self) {
        self.send(HELLO).await;
        self.answer().await;
    }

    fn close(&mut self) {
        self.to_probe = None;
    }
}

/// Runs the probe with `opts` against `script`; SIGTERM is sent when the
/// script's `term` sender fires.
async fn probe_with<F, Fut>(opts: Options, script: F) -> Report
where
    F: FnOnce(Host, oneshot::Sender<()>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let (host_w, probe_r) = tokio::io::duplex(1 << 16);
    let (probe_w, host_r) = tokio::io::duplex(1 << 16);
    let (term_tx, term_rx) = oneshot::channel();
    let term = async move {
        if term_rx.await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    let host = Host {
        to_probe: Some(host_w),
        from_probe: BufReader::new(host_r).lines(),
    };
    let (record, ()) = tokio::join!(
        session::serve(&opts, probe_r, probe_w, term),
        script(host, term_tx)
    );
    report(&record, &opts)
}

fn violations<'r>(report: &'r Report, check: &str) -> Vec<&'r Violation> {
    let c = report.checks.iter().find(|c| c.name == check);
    c.map(|c| c.violations.iter().collect()).unwrap_or_default()
}

fn quick() -> Options {
    let mut opts = Options::new();
    opts.hello_delay = Duration::from_millis(30);
    opts
}

#[tokio::test]
async fn a_good_host_passes_every_check() {
    let mut opts = quick();
    opts.declare_all();
    let report = probe_with(opts, |mut host, _term| async move {
        host.send(HELLO).await;
        let hello = host.answer().await;
        assert_eq!(
            hello["result"]["intercept"].as_array().map(Vec::len),
            Some(6)
        );
        host.send(CALL_2).await;
        assert_eq!(host.answer().await["result"], json!({"action": "continue"}));
        host.send(EVENT).await;
        host.close();
    })
    .await;
    assert_eq!(report.violations(), 0, "{}", report.to_text());
    assert_eq!(report.summary.requests.get("hook.hello"), Some(&1));
    assert_eq!(
        report.summary.notifications.get("hook.runtime_event"),
        Some(&1)
    );
    assert_eq!(report.summary.ended, Some(Ending::Eof));
    let text = report.to_text();
    assert!(text.ends_with("10 checks, 0 violations\n"), "{text}");
}

#[tokio::test]
async fn a_call_before_the_hello_answer_is_seen_and_answered_after_it() {
    let report = probe_with(quick(), |mut host, _term| async move {
        host.send(HELLO).await;
        host.send(CALL_2).await;
        assert_eq!(host.answer().await["id"], 1, "the hello is answered first");
        assert_eq!(host.answer().await["id"], 2);
        host.close();
    })
    .await;
    let v = violations(&report, "nothing_before_hello_answer");
    assert_eq!(v.len(), 1, "{}", report.to_text());
    assert_eq!(v[0].line, Some(2));
    assert!(
        v[0].detail.contains("hook.before_tool id 2"),
        "{}",
        v[0].detail
    );
    assert_eq!(report.violations(), 1, "{}", report.to_text());
}

#[tokio::test]
async fn bad_ids_each_count_once() {
    let report = probe_with(quick(), |mut host, _term| async move {
        host.handshake().await;
        for id in [r#"0"#, r#""x""#, "1.5", "null", "7", "7", "5"] {
            host.send(&CALL_2.replace(r#""id":2"#, &format!(r#""id":{id}"#)))
                .await;
            host.answer().await;
        }
        host.close();
    })
    .await;
    let details: Vec<String> = violations(&report, "ids")
        .iter()
        .map(|v| v.detail.clone())
        .collect();
    assert_eq!(details.len(), 6, "{}", report.to_text());
    assert!(details[0].starts_with("id 0"), "{details:?}");
    assert!(details[1].contains("is a string"), "{details:?}");
    assert!(details[2].contains("not an integer"), "{details:?}");
    assert!(details[3].starts_with("id null"), "{details:?}");
    assert!(details[4].contains("repeats line 6"), "{details:?}");
    assert!(details[5].contains("not greater than id 7"), "{details:?}");
}

#[tokio::test]
async fn a_stalled_call_passes_once_cancelled_and_fails_otherwise() {
    for cancel in [true, false] {
        let mut opts = quick();
        opts.stall.push(hookhost_protocol::Stage::BeforeTool);
        let report = probe_with(opts, |mut host, _term| async move {
            host.handshake().await;
            host.send(CALL_2).await;
            tokio::time::sleep(Duration::from_millis(40)).await;
            if cancel {
                host.send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"id":2}}"#)
                    .await;
            }
            host.close();
        })
        .await;
        let v = violations(&report, "cancel_after_deadline");
        if cancel {
            assert!(v.is_empty(), "{}", report.to_text());
            let c = &report.summary.cancels[0];
            assert_eq!((c.target, c.request_line), ("stalled", Some(2)));
            assert!(c.after_ms.is_some_and(|ms| ms >= 40), "{c:?}");
        } else {
            assert_eq!(v.len(), 1, "{}", report.to_text());
            assert!(v[0].detail.contains("never cancelled"), "{}", v[0].detail);
        }
    }
}

#[tokio::test]
async fn a_cancel_for_an_id_never_sent_is_a_violation_one_for_an_answered_id_is_not() {
    let report = probe_with(quick(), |mut host, _term| async move {
        host.handshake().await;
        host.send(CALL_2).await;
        host.answer().await;
        host.send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"id":2}}"#)
            .await;
        host.send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"id":9}}"#)
            .await;
        host.close();
    })
    .await;
    let v = violations(&report, "cancel_after_deadline");
    assert_eq!(v.len(), 1, "{}", report.to_text());
    assert_eq!(v[0].line, Some(4));
    let targets: Vec<&str> = report.summary.cancels.iter().map(|c| c.target).collect();
    assert_eq!(targets, ["answered", "unknown"]);
}

#[tokio::test]
async fn sigterm_before_eof_is_a_violation_after_it_is_not() {
    let early = probe_with(quick(), |mut host, term| async move {
        host.handshake().await;
        let _ = term.send(());
        // Keep stdin open until the probe has ended on the signal.
        tokio::time::sleep(Duration::from_millis(50)).await;
    })
    .await;
    assert_eq!(violations(&early, "eof_before_term").len(), 1);
    assert_eq!(early.summary.ended, Some(Ending::Term));

    let mut opts = quick();
    opts.linger = Some(Duration::from_secs(5));
    let late = probe_with(opts, |mut host, term| async move {
        host.handshake().await;
        host.close();
        tokio::time::sleep(Duration::from_millis(30)).await;
        let _ = term.send(());
    })
    .await;
    assert_eq!(late.violations(), 0, "{}", late.to_text());
    assert_eq!(late.summary.ended, Some(Ending::Term));
    let (eof, term) = (late.summary.eof_ms, late.summary.term_ms);
    assert!(
        eof.zip(term).is_some_and(|(e, t)| t >= e + 30),
        "{eof:?} {term:?}"
    );
}

#[tokio::test]
async fn linger_expires_without_a_sigterm() {
    let mut opts = quick();
    opts.linger = Some(Duration::from_millis(20));
    let report = probe_with(opts, |mut host, _term| async move {
        host.handshake().await;
        host.close();
    })
    .await;
    assert_eq!(report.summary.ended, Some(Ending::LingerExpired));
    assert_eq!(report.violations(), 0, "{}", report.to_text());
}

#[tokio::test]
async fn malformed_lines_are_answered_and_reported() {
    let report = probe_with(quick(), |mut host, _term| async move {
        host.handshake().await;
        host.send("not json").await;
        let err = host.answer().await;
        assert_eq!(
            (err["id"].clone(), err["error"]["code"].clone()),
            (Value::Null, json!(-32700))
        );
        host.send(r#"[{"jsonrpc":"2.0","id":3,"method":"hook.before_tool","params":{}}]"#)
            .await;
        assert_eq!(host.answer().await["error"]["code"], -32600);
        host.send(r#"{"jsonrpc":"2.0","id":4,"result":{}}"#).await;
        host.send(r#"{"jsonrpc":"2.0","method":"hook.nope","params":{}}"#)
            .await;
        host.close();
    })
    .await;
    let lines = |check| -> Vec<Option<usize>> {
        violations(&report, check).iter().map(|v| v.line).collect()
    };
    assert_eq!(
        lines("jsonrpc"),
        [Some(2), Some(3), Some(4)],
        "{}",
        report.to_text()
    );
    assert_eq!(lines("notifications"), [Some(5)]);
}

fn record(lines: &[&str]) -> Record {
    let mut rec = Record::default();
    for (i, l) in lines.iter().enumerate() {
        let at = Duration::from_millis(i as u64 * 10);
        rec.arrivals
            .push(Arrival::from_line(i + 1, at, l.as_bytes()));
    }
    rec.hello_answered = Some(Duration::from_millis(5));
    rec
}

#[test]
fn params_and_declarations_are_checked_per_line() {
    let bad_call =
        r#"{"jsonrpc":"2.0","id":2,"method":"hook.after_tool","params":{"tool":"shell"}}"#;
    let llm = r#"{"jsonrpc":"2.0","id":3,"method":"hook.before_llm","params":{"model":"m"}}"#;
    let mut opts = Options::new();
    opts.intercept = Some(vec![hookhost_protocol::Stage::AfterTool]);
    opts.observe = Some(vec!["agent.tool.*".into()]);
    let rec = record(&[HELLO, bad_call, llm, EVENT]);
    let report = report(&rec, &opts);
    let params = violations(&report, "params");
    assert_eq!(params.len(), 1);
    assert!(
        params[0].detail.contains("missing field `result`"),
        "{}",
        params[0].detail
    );
    let declared: Vec<Option<usize>> = violations(&report, "declared")
        .iter()
        .map(|v| v.line)
        .collect();
    assert_eq!(declared, [Some(3), Some(4)]);
}

#[test]
fn the_hello_must_come_first_and_once() {
    let rec = record(&[CALL_2, HELLO, HELLO]);
    let report = report(&rec, &Options::new());
    let lines: Vec<Option<usize>> = violations(&report, "hello_first")
        .iter()
        .map(|v| v.line)
        .collect();
    assert_eq!(lines, [Some(1), Some(3)]);
    let rec = record(&[]);
    assert_eq!(
        violations(&super::report(&rec, &Options::new()), "hello_first").len(),
        1
    );
}

#[test]
fn the_json_form_has_counts_and_every_check() {
    let rec = record(&[HELLO]);
    let json = report(&rec, &Options::new()).to_json();
    assert_eq!(json["checks_run"], 10);
    assert_eq!(json["violations"], 0);
    assert_eq!(json["checks"][0]["name"], "hello_first");
    assert_eq!(json["checks"][0]["passed"], true);
    assert_eq!(json["summary"]["requests"]["hook.hello"], 1);
}

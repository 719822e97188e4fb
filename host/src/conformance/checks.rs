//! The checks, one function each, and the order they run in
//! ([`run_checks`]): the handshake, the stage samples, the other required
//! checks, the robustness checks, then the checks of the end. Each runs
//! through the [`Runner`], so a check that kills the hook reports its own
//! result and the next one gets a fresh process. The names and detail
//! texts are what `hookhost conformance` prints, so they are stable.

use std::time::Duration;

use hookhost_protocol::chain::StepOutcome;
use hookhost_protocol::stage::method;
use hookhost_protocol::{Chain, HelloResult, OnError, Stage, error_code};
use serde_json::{Value, json};

use super::report::{Level, Verdict};
use super::runner::{Runner, hello};
use super::samples::{plain, samples};
use super::session::Session;

/// The stages a hook that declares nothing is checked at unless asked for
/// others: PicoClaw's five, the ones a PicoClaw hook can be configured
/// for. Lifecycle is hookhost's own and is checked only when declared.
const LEGACY_STAGES: [Stage; 5] = [
    Stage::BeforeLlm,
    Stage::AfterLlm,
    Stage::BeforeTool,
    Stage::AfterTool,
    Stage::ApproveTool,
];

/// Runs every check in order; a failed hello skips to the checks of the
/// end.
pub(super) async fn run_checks(r: &mut Runner<'_>, asked: Option<&[Stage]>) {
    match hello(&mut r.session).await {
        Ok((declared, ms)) => {
            r.report.required(format!("hello ({ms} ms)"), Ok(()));
            let stages = plan(r, &declared, asked);
            let probe = stage_samples(r, &stages, declared.intercept.is_none()).await;
            required(r, &probe).await;
            robustness(r, &probe).await;
        }
        Err(why) => r.report.required("hello", Err(why)),
    }
    finish(r).await;
}

/// The stages to check: what the hook declared (narrowed to `asked`, with
/// a note for each asked stage it did not declare), or, for a hook that
/// declares nothing, `asked` or PicoClaw's five.
fn plan(r: &mut Runner<'_>, declared: &HelloResult, asked: Option<&[Stage]>) -> Vec<Stage> {
    let Some(intercept) = &declared.intercept else {
        return asked.map_or_else(|| LEGACY_STAGES.to_vec(), <[Stage]>::to_vec);
    };
    let Some(asked) = asked else {
        return intercept.clone();
    };
    for stage in asked.iter().filter(|s| !intercept.contains(s)) {
        r.report.note(format!(
            "{stage}: not checked, the hook does not declare it (a host never calls it there)"
        ));
    }
    intercept
        .iter()
        .copied()
        .filter(|s| asked.contains(s))
        .collect()
}

/// What a robustness miss at the 1 MiB sample advises.
const HUGE_ADVICE: &str = "read lines of any length: params carry whole conversations and tool \
outputs, and a line reader with a small default cap (Go's bufio.Scanner stops at 64 KiB) fails on them";

/// Every stage with each sample; returns the probe, built from the first
/// stage answered legally.
async fn stage_samples(r: &mut Runner<'_>, stages: &[Stage], legacy: bool) -> Probe {
    let mut next_id = 100;
    let mut first_legal = None;
    for &stage in stages {
        for (label, params) in samples(stage) {
            next_id += 1;
            match sample(r, stage, label, &params, next_id, legacy).await {
                Answer::NotOffered => break,
                Answer::Legal => {
                    first_legal.get_or_insert(stage);
                }
                Answer::Other => {}
            }
        }
    }
    Probe::new(first_legal)
}

/// What one sample call came to, for the loop over samples.
enum Answer {
    /// A hook that declares nothing answered -32601: it does not offer
    /// the stage, which is a note, not a failure.
    NotOffered,
    /// A legal answer.
    Legal,
    /// Anything else (recorded as a miss).
    Other,
}

/// Sends one sample under `id` and records its check.
async fn sample(
    r: &mut Runner<'_>,
    stage: Stage,
    label: &str,
    params: &Value,
    id: i64,
    legacy: bool,
) -> Answer {
    let ran = r
        .run(Level::Required, async |s: &mut Session| {
            s.call(json!(id), stage.method(), params).await
        })
        .await;
    if legacy && ran.result.as_ref().is_ok_and(not_found) {
        let note = "not offered (answered -32601); a config that lists it for this hook would fail";
        r.report.note(format!("{stage}: {note}"));
        return Answer::NotOffered;
    }
    let verdict = ran
        .result
        .as_ref()
        .map_err(String::clone)
        .and_then(|answer| judge(stage, params, answer));
    let answer = match verdict {
        Ok(()) => Answer::Legal,
        Err(_) => Answer::Other,
    };
    let (level, advice) = sample_level(label, ran.result.is_ok());
    let name = format!("{stage}: {label}");
    r.record(name, level, advice, ran.judged(verdict)).await;
    answer
}

/// Every sample is required, but a hook that could not take the 1 MiB
/// one in (it died or went mute) misses a robustness check: an answer to
/// it, once given, must be as legal as any other.
fn sample_level(label: &str, answered: bool) -> (Level, &'static str) {
    if label == super::samples::HUGE && !answered {
        (Level::Robustness, HUGE_ADVICE)
    } else {
        (Level::Required, "")
    }
}

fn not_found(answer: &Value) -> bool {
    answer["error"]["code"] == json!(error_code::METHOD_NOT_FOUND)
}

/// Whether `answer` is a valid result for `stage` with `params`: the shape,
/// the action's legality and, for modify, that the patched params still
/// have the stage's shape.
fn judge(stage: Stage, params: &Value, answer: &Value) -> Verdict {
    if let Some(err) = answer.get("error") {
        return Err(format!("answered an error: {err}"));
    }
    let result = answer.get("result").ok_or("the response has no result")?;
    let mut chain = Chain::new(stage, params.clone()).map_err(|e| e.to_string())?;
    chain.step("hook", OnError::Deny, Ok(result));
    match chain.steps().last().map(|s| &s.outcome) {
        Some(StepOutcome::Failed { error, .. }) => Err(error.clone()),
        _ => Ok(()),
    }
}

/// The call the liveness checks send: the plain sample of the first stage
/// the hook answered, or an unknown method (answered with an error, which
/// still shows the hook alive) when it answered none.
struct Probe(Option<(Stage, Value)>);

impl Probe {
    fn new(stage: Option<Stage>) -> Self {
        Probe(stage.map(|stage| (stage, plain(stage))))
    }

    fn method(&self) -> &'static str {
        match &self.0 {
            Some((stage, _)) => stage.method(),
            None => "hook.no_such_method",
        }
    }

    fn params(&self) -> Value {
        match &self.0 {
            Some((_, params)) => params.clone(),
            None => json!({}),
        }
    }

    /// Sends the probe under `id` and waits for the answer; `after` names
    /// what came before, for the detail.
    async fn call(&self, s: &mut Session, id: i64, after: &str) -> Verdict {
        s.call(json!(id), self.method(), &self.params())
            .await
            .map(drop)
            .map_err(|e| format!("{after}: {e}"))
    }

    /// Sends the probe under `id` without waiting.
    async fn send(&self, s: &mut Session, id: &Value) -> Result<(), String> {
        s.send_request(id, self.method(), &self.params()).await
    }
}

/// The required checks besides the stages: what every host relies on.
async fn required(r: &mut Runner<'_>, probe: &Probe) {
    unknown_method(r, probe).await;
    let name = "notifications get no response";
    r.check(name, Level::Required, "", async |s| {
        notifications(s, probe).await
    })
    .await;
    let name = "64 concurrent requests answered with matching ids";
    r.check(name, Level::Required, "", async |s| {
        concurrent(s, probe).await
    })
    .await;
}

/// An unknown method gets an error and the hook answers the probe after
/// it (required: a host needs an answer, and treats every error alike);
/// that the error is -32601 is a robustness check on the same answer.
async fn unknown_method(r: &mut Runner<'_>, probe: &Probe) {
    let ran = r
        .run(Level::Required, async |s: &mut Session| {
            let answer = s
                .call(json!(2001), "hook.no_such_method", &json!({}))
                .await?;
            probe.call(s, 2002, "answered, but then").await?;
            Ok(answer)
        })
        .await;
    let code = ran.result.as_ref().ok().map(|a| a["error"]["code"].clone());
    let verdict = match &ran.result {
        Ok(answer) if answer.get("error").is_some() => Ok(()),
        Ok(answer) => Err(format!("expected an error, got {answer}")),
        Err(why) => Err(why.clone()),
    };
    let name = "unknown method answered with an error and the hook lives on";
    r.record(name, Level::Required, "", ran.judged(verdict))
        .await;
    if let Some(code) = code.filter(|c| !c.is_null()) {
        let verdict = if code == json!(error_code::METHOD_NOT_FOUND) {
            Ok(())
        } else {
            Err(format!("answered error code {code}"))
        };
        let advice = "answer an unknown method with -32601 (method not found): hookhost treats \
every error alike, but a host that calls a method a hook may not offer tells the two apart by it";
        r.report
            .robustness("unknown method answered -32601", verdict, advice);
    }
}

/// A runtime event and a cancel for an unknown id draw no response.
async fn notifications(s: &mut Session, probe: &Probe) -> Verdict {
    let before = s.unsolicited().len();
    let event = json!({"id": "evt-1", "kind": "agent.turn.start", "time": "2026-01-01T00:00:00Z", "payload": {}});
    s.notify(method::RUNTIME_EVENT, &event).await?;
    s.notify(method::CANCEL_REQUEST, &json!({"id": 999_999}))
        .await?;
    let r = probe.call(s, 2003, "after two notifications").await;
    s.settle(Duration::from_millis(100)).await;
    let unsolicited = s.unsolicited();
    if r.is_ok() && unsolicited.len() > before {
        return Err(format!("answered a notification: {}", unsolicited[before]));
    }
    r
}

/// 64 requests in flight at once, with integer ids as the host sends
/// them, each answered under its own id.
async fn concurrent(s: &mut Session, probe: &Probe) -> Verdict {
    let ids: Vec<Value> = (0..64).map(|i| json!(3000 + i)).collect();
    for id in &ids {
        probe.send(s, id).await?;
    }
    s.collect(&ids).await.map(drop)
}

/// What each robustness miss advises.
const STRING_IDS_ADVICE: &str = "echo the id exactly as it came, whatever its JSON type: \
JSON-RPC allows string ids and another host may send them (hookhost sends integers, so this \
works under hookhost)";
const MALFORMED_ADVICE: &str =
    "skip a line that is not JSON (or answer -32700 with a null id) and keep reading";
const BATCH_ADVICE: &str = "a JSON array (a JSON-RPC batch) is never sent by hookhost: skip \
it or answer -32600 with a null id, and keep reading";
const CANCEL_ADVICE: &str = "ignore $/cancel_request for ids you do not know, or stop that \
request's work and answer it -32800 (or not at all), and keep serving";

/// The robustness checks: what a careful hook also does. Each may kill a
/// hook that works under hookhost, which is why the runner isolates them.
async fn robustness(r: &mut Runner<'_>, probe: &Probe) {
    let level = Level::Robustness;
    r.check(
        "string ids echoed exactly",
        level,
        STRING_IDS_ADVICE,
        async |s| string_ids(s, probe).await,
    )
    .await;
    r.check(
        "malformed lines do not kill it",
        level,
        MALFORMED_ADVICE,
        async |s| malformed_lines(s, probe).await,
    )
    .await;
    r.check("a batch does not kill it", level, BATCH_ADVICE, async |s| {
        batch(s, probe).await
    })
    .await;
    r.check(
        "$/cancel_request tolerated",
        level,
        CANCEL_ADVICE,
        async |s| cancel(s, probe).await,
    )
    .await;
}

/// Requests with string ids, one of them numeric-looking, each answered
/// under the very same id.
async fn string_ids(s: &mut Session, probe: &Probe) -> Verdict {
    let ids = [json!("s-1"), json!("7"), json!("id with spaces")];
    for id in &ids {
        probe.send(s, id).await?;
    }
    s.collect(&ids).await.map(drop)
}

/// Lines that are not JSON or are cut off leave the hook answering.
async fn malformed_lines(s: &mut Session, probe: &Probe) -> Verdict {
    s.send("this is not json").await?;
    s.send(r#"{"jsonrpc":"2.0","id":"#).await?;
    probe.call(s, 2004, "after malformed lines").await
}

/// A batch (never sent by a hookhost host) leaves the hook answering.
async fn batch(s: &mut Session, probe: &Probe) -> Verdict {
    s.send(r#"[1,2,3]"#).await?;
    s.send(r#"[{"jsonrpc":"2.0","method":"hook.runtime_event","params":{}}]"#)
        .await?;
    probe.call(s, 2005, "after a batch").await
}

/// `$/cancel_request` for a request in flight leaves the hook answering;
/// that request's own answer may still come, late.
async fn cancel(s: &mut Session, probe: &Probe) -> Verdict {
    let id = json!(4000);
    s.allow_late(id.clone());
    probe.send(s, &id).await?;
    s.notify(method::CANCEL_REQUEST, &json!({ "id": id }))
        .await?;
    probe.call(s, 2006, "after $/cancel_request").await
}

/// The checks that end every run, hello or not: exit on stdin EOF, a
/// clean stdout, nothing unsolicited; then the hook is stopped.
async fn finish(r: &mut Runner<'_>) {
    r.note_skipped();
    exits_on_eof(r).await;
    let verdict = only_json_rpc(&r.all_garbage());
    r.report.required("only JSON-RPC on stdout", verdict);
    let verdict = no_unsolicited(&r.all_unsolicited());
    r.report.required("no unsolicited messages", verdict);
    r.session.stop(Duration::from_millis(200)).await;
}

/// The hook exits within 2 s of stdin EOF; its name carries the status.
async fn exits_on_eof(r: &mut Runner<'_>) {
    let name = "exits within 2 s of stdin EOF";
    if let Some(why) = r.broken() {
        let why = format!("not run: {why}");
        r.report.required(name, Err(why));
        return;
    }
    let s = &mut r.session;
    let exited = s.close_and_wait(Duration::from_secs(2)).await;
    s.settle(Duration::from_millis(50)).await;
    match exited {
        Some(status) => r.report.required(format!("{name} ({status})"), Ok(())),
        None => {
            let why = "still running 2 s after stdin closed";
            r.report.required(name, Err(why.into()));
            r.session.kill().await;
        }
    }
}

fn only_json_rpc(garbage: &[String]) -> Verdict {
    match garbage {
        [] => Ok(()),
        all @ [first, ..] => Err(format!("{} other line(s), first: {first:?}", all.len())),
    }
}

fn no_unsolicited(unsolicited: &[String]) -> Verdict {
    match unsolicited {
        [] => Ok(()),
        all @ [first, ..] => Err(format!(
            "{} message(s) answering nothing, first: {first}",
            all.len()
        )),
    }
}

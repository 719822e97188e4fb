//! The checks of one event, one function each: the run ends in time, its
//! exit code is one the agent understands, its answer is one the agent can
//! parse and may give there, nothing on stdout would be misread, nothing
//! is left running; then the same event with unusual input.
//!
//! Each verdict's text says what the agent makes of the miss, because
//! that is what a hook author needs to know: "Claude Code reads the whole
//! stdout as plain text" tells why a correct-looking JSON answer is lost.

use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use hookhost_protocol::Stage;
use serde_json::Value;

use super::events::{self, Variant};
use super::run::{self, Outcome};
use crate::conformance::report::{Report, Status, Verdict};
use crate::dialect::Dialect;
use crate::dialect::contract;
use crate::dialect::keys;
use crate::dialect::reply::{self, Reply};
use crate::dialect::spec::{Event, Spec, Target};
use crate::members::command::{CommandHook, Finished, OUTPUT_CAP};
use crate::members::neutral;

/// The longest piece of the hook's output quoted in a verdict.
const QUOTE: usize = 120;

const ADVICE_IGNORED: &str = "write only what the agent acts on at this event: debug output \
to stderr, and only the fields the event takes (spec/dialects.md sections 6 and 9)";
const ADVICE_INPUT: &str = "read every input field as optional and any text as UTF-8 of any \
size; answer (or exit 0 with nothing) rather than crash";

/// What the checks of one event need.
pub(super) struct Ctx<'a> {
    pub(super) hook: &'a CommandHook,
    pub(super) spec: &'static Spec,
    pub(super) event: &'static Event,
    pub(super) timeout: Duration,
}

/// Runs the sample of `cx.event` and records its checks, then the
/// robustness runs.
pub(super) async fn check_event(cx: &Ctx<'_>, report: &mut Report) {
    let name = cx.event.native;
    let failed = report.count(Status::Fail);
    let params = events::params(cx.event, Variant::Plain);
    let input = cx.hook.render(cx.event, &params);
    let out = run::run(cx.hook, cx.event, &params, &input).await;
    report.required(format!("{name}: ends in time"), ended(cx, &out));
    let Ok(done) = &out.run else {
        report.note(format!(
            "{name}: the other checks of this event did not run"
        ));
        return;
    };
    report.required(format!("{name}: exit code"), exit_code(cx, done));
    report.required(format!("{name}: answer"), answer(cx, &params, done, &input));
    report.required(format!("{name}: stdout"), stdout_clean(cx, done, &input));
    report.required(
        format!("{name}: no process left behind"),
        no_leftovers(&out),
    );
    let ignored = nothing_ignored(cx, done);
    report.robustness(format!("{name}: nothing ignored"), ignored, ADVICE_IGNORED);
    note_verdict(cx, &params, done, &input, report);
    if report.count(Status::Fail) > failed {
        // The same miss again under odd input would say nothing new.
        report.note(format!(
            "{name}: robustness not checked: the sample already fails"
        ));
        return;
    }
    robustness(cx, &input, report).await;
}

/// The same event with unicode text, with a 1 MiB field, and with its
/// fields missing.
async fn robustness(cx: &Ctx<'_>, plain: &Value, report: &mut Report) {
    let name = cx.event.native;
    for (label, variant) in [("unicode", Variant::Unicode), ("1 MiB field", Variant::Big)] {
        let params = events::params(cx.event, variant);
        let input = cx.hook.render(cx.event, &params);
        let out = run::run(cx.hook, cx.event, &params, &input).await;
        let verdict = holds_up(cx, &params, &out, &input);
        report.robustness(format!("{name}: {label}"), verdict, ADVICE_INPUT);
    }
    let params = events::params(cx.event, Variant::Plain);
    let input = events::stripped(plain);
    let out = run::run(cx.hook, cx.event, &params, &input).await;
    let verdict = holds_up(cx, &params, &out, &input);
    report.robustness(format!("{name}: missing fields"), verdict, ADVICE_INPUT);
}

/// A robustness run: it ends, exits 0 or 2, answers readably and leaves
/// nothing behind.
fn holds_up(cx: &Ctx<'_>, params: &Value, out: &Outcome, input: &Value) -> Verdict {
    ended(cx, out)?;
    let Ok(done) = &out.run else {
        return Ok(());
    };
    no_leftovers(out)?;
    exit_code(cx, done)?;
    answer(cx, params, done, input)?;
    stdout_clean(cx, done, input)
}

/// The run ended on its own within the timeout.
fn ended(cx: &Ctx<'_>, out: &Outcome) -> Verdict {
    match &out.run {
        Ok(_) => Ok(()),
        Err(crate::CallError::Timeout(_)) => Err(format!(
            "did not exit within {} ms; its process group was killed",
            cx.timeout.as_millis()
        )),
        Err(e) => Err(format!("could not run: {e}")),
    }
}

/// 0 and 2 are the exit codes every dialect gives a meaning; anything
/// else, or a signal, is a failed hook whose output is ignored.
fn exit_code(cx: &Ctx<'_>, done: &Finished) -> Verdict {
    let d = cx.spec.dialect;
    let how = match (done.status.code(), done.status.signal()) {
        (Some(0 | 2), _) => return Ok(()),
        (Some(code), _) => format!("exit {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        (None, None) => "an unknown exit status".to_string(),
    };
    let closed = if cx.event.fails_closed() {
        format!("; at {} that refuses the call", cx.event.native)
    } else {
        String::new()
    };
    Err(format!(
        "{how}: {d} counts any exit but 0 and 2 as a failed hook (a non-blocking error: its \
         output is ignored and the agent goes on{closed}){}",
        crashed(done)
    ))
}

/// `; stderr: …` with the last line of stderr, naming a crash.
fn crashed(done: &Finished) -> String {
    let stderr = done.stderr.text();
    let Some(last) = stderr.lines().rev().find(|l| !l.trim().is_empty()) else {
        return String::new();
    };
    let crash = ["Traceback", "Error", "panicked", "error:"]
        .iter()
        .any(|w| stderr.contains(w));
    let what = if crash { "it crashed" } else { "stderr" };
    format!("; {what}: {}", quote(last))
}

/// The first [`QUOTE`] characters of a line of the hook's output.
fn quote(text: &str) -> String {
    let text = text.trim();
    let mut q: String = text.chars().take(QUOTE).collect();
    if q.len() < text.len() {
        q.push('…');
    }
    q
}

/// The text the agent reads as its JSON answer on exit 0, when it reads
/// one: stdout, or (Gemini CLI) stderr when stdout is empty.
fn json_text(spec: &Spec, done: &Finished) -> Option<String> {
    let (stdout, stderr) = (done.stdout.text(), done.stderr.text());
    reply::json_answer(spec, &stdout, &stderr)
        .ok()
        .map(str::to_string)
}

/// On exit 0, a JSON answer is exactly one object, of keys the dialect
/// reads, with types and decisions it knows, that it takes at this event.
fn answer(cx: &Ctx<'_>, params: &Value, done: &Finished, input: &Value) -> Verdict {
    if done.status.code() != Some(0) {
        return Ok(());
    }
    let Some(text) = json_text(cx.spec, done) else {
        return Ok(());
    };
    if done.stdout.dropped > 0 {
        return Err(format!(
            "stdout is longer than the {OUTPUT_CAP} bytes hookhost keeps ({} more): the answer is cut",
            done.stdout.dropped
        ));
    }
    let value = one_document(cx.spec, &text)?;
    let reply = Reply::from_json(&value)?;
    keys::check_keys(cx.spec, cx.event, &value)?;
    halt_taken(cx, &reply)?;
    let verdict = cx.hook.verdict(cx.event, params, done, input);
    verdict.map(drop).map_err(|e| e.to_string())
}

/// The one JSON document `text` holds (a JSON string holding one, for
/// Gemini CLI, which parses twice); two documents, or text after one, is
/// an answer the agent cannot parse.
fn one_document(spec: &Spec, text: &str) -> Result<Value, String> {
    let d = spec.dialect;
    let mut docs = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let value = match docs.next() {
        Some(Ok(v)) => v,
        Some(Err(e)) => return Err(format!("stdout starts like JSON but is not JSON: {e}")),
        None => return Err("no JSON document".to_string()),
    };
    let rest = text.get(docs.byte_offset()..).unwrap_or_default();
    match docs.next() {
        None => {}
        Some(Ok(_)) => {
            return Err(format!(
                "two JSON documents on stdout (the second: `{}`): {d} parses stdout as one and fails the hook",
                quote(rest)
            ));
        }
        Some(Err(_)) => {
            return Err(format!(
                "text after the JSON answer: `{}`: {d} parses stdout as one document and fails the hook",
                quote(rest)
            ));
        }
    }
    reply::unquote(value)
}

/// `continue: false` where the dialect takes it: Codex counts it at its
/// PreToolUse as a failed hook and runs the tool.
fn halt_taken(cx: &Ctx<'_>, reply: &Reply) -> Verdict {
    let before_tool = cx.event.target == Target::Stage(Stage::BeforeTool);
    if reply.halt.is_some() && before_tool && !cx.spec.tool_halt {
        return Err(format!(
            "`continue: false` at {}: {} counts it as a failed hook and runs the tool; refuse the call instead",
            cx.event.native, cx.spec.dialect
        ));
    }
    Ok(())
}

/// On exit 0, stdout holds the answer and nothing else: not the input
/// echoed back, no line before the JSON.
fn stdout_clean(cx: &Ctx<'_>, done: &Finished, input: &Value) -> Verdict {
    if done.status.code() != Some(0) {
        return Ok(());
    }
    let stdout = done.stdout.text();
    let d = cx.spec.dialect;
    if echoes(&stdout, input) {
        return Err(format!(
            "stdout is the input echoed back: {d} reads it as the hook's answer, which carries \
             the event's own keys and no decision"
        ));
    }
    let text = stdout.trim();
    if text.is_empty() || json_text(cx.spec, done).is_some() {
        return Ok(());
    }
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    if lines.any(|l| l.trim_start().starts_with('{')) {
        return Err(format!(
            "`{}` is written before the JSON answer: {d} reads stdout as one document, so the \
             whole of it is plain text and the JSON is not acted on (a shell profile's echo? \
             keep stdout for the answer and write the rest to stderr)",
            quote(first)
        ));
    }
    Ok(())
}

/// Whether stdout holds `input`: the same text, or a line that is the
/// same JSON value.
fn echoes(stdout: &str, input: &Value) -> bool {
    if stdout.contains(&input.to_string()) {
        return true;
    }
    stdout
        .lines()
        .filter(|l| l.trim_start().starts_with('{'))
        .any(|l| serde_json::from_str::<Value>(l).is_ok_and(|v| v == *input))
}

/// Nothing the hook wrote is dropped by the agent: plain text where it is
/// not context, fields the event does not take, exit 2 where nothing can
/// be blocked.
fn nothing_ignored(cx: &Ctx<'_>, done: &Finished) -> Verdict {
    let (d, native) = (cx.spec.dialect, cx.event.native);
    let caps = cx.event.answer_caps();
    match done.status.code() {
        Some(2) if !caps.block => Err(format!(
            "exit 2 at {native}, which {d} cannot block: stderr is shown and the agent goes on"
        )),
        Some(0) => match json_text(cx.spec, done) {
            Some(text) => unused_fields(cx, &text),
            None => plain_text(cx, done),
        },
        _ => Ok(()),
    }
}

/// Parts of a JSON answer the event does not take.
fn unused_fields(cx: &Ctx<'_>, text: &str) -> Verdict {
    let Ok(reply) = one_document(cx.spec, text).and_then(|v| Reply::from_json(&v)) else {
        // Not readable: the required `answer` check says why.
        return Ok(());
    };
    let unused = contract::unused(&cx.event.answer_caps(), &reply);
    if unused.is_empty() {
        return Ok(());
    }
    let d = cx.spec.dialect;
    let strict = if d == Dialect::DockerAgent {
        "; under strict_output it fails the hook"
    } else {
        ""
    };
    Err(format!(
        "{d} does not use {} at {}: it is dropped{strict}",
        unused.join(", "),
        cx.event.native
    ))
}

/// Plain stdout: context where the dialect makes it context, a message
/// for the user in Gemini CLI, ignored elsewhere.
fn plain_text(cx: &Ctx<'_>, done: &Finished) -> Verdict {
    let stdout = done.stdout.text();
    let Some(first) = stdout.lines().find(|l| !l.trim().is_empty()) else {
        return Ok(());
    };
    let (d, native) = (cx.spec.dialect, cx.event.native);
    if cx.spec.plain_is_context(cx.event) {
        return Ok(());
    }
    let fate = if cx.spec.json_from_stderr {
        "shows it to the user as a message; the model never sees it"
    } else {
        "ignores it: only a JSON answer is read there"
    };
    Err(format!(
        "plain text on stdout (`{}`): {d} {fate} at {native}",
        quote(first)
    ))
}

/// Nothing still running from the hook once it exited.
fn no_leftovers(out: &Outcome) -> Verdict {
    if out.leftovers.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = out
        .leftovers
        .iter()
        .map(|l| format!("pid {} `{}`", l.pid, l.cmdline))
        .collect();
    Err(format!(
        "left running after the hook exited: {} (killed now; the agent would not have: wait \
         for what you start, or do not start it)",
        list.join(", ")
    ))
}

/// A note of what the agent does with the sample's answer, when it does
/// more than go on: a refusal, context, a rewrite.
fn note_verdict(cx: &Ctx<'_>, params: &Value, done: &Finished, input: &Value, r: &mut Report) {
    if let Ok(v) = cx.hook.verdict(cx.event, params, done, input) {
        if v != neutral() {
            let (d, native) = (cx.spec.dialect, cx.event.native);
            r.note(format!("{native}: {d} acts on the sample's answer: {v}"));
        }
    }
}
